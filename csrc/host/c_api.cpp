// host/c_api.cpp: the C ABI (include/pyshmem/pyshmem.h) over the C++ host API.
// Exceptions never cross this boundary: they become status codes + pyshmem_last_error().
#include <cstring>
#include <string>

#include "core/error.h"
#include "host/host.h"
#include "pyshmem/pyshmem.h"

namespace {
thread_local std::string t_last_error;

template <class F>
int guard(F&& f) {
  try {
    f();
    t_last_error.clear();
    return PYSHMEM_SUCCESS;
  } catch (const pyshmem::Error& e) {
    t_last_error = e.what();
    return e.status();
  } catch (const std::exception& e) {
    t_last_error = e.what();
    return PYSHMEM_ERR_INTERNAL;
  } catch (...) {  // e.g. a wait abandoned by an interrupt hook
    t_last_error = "pyshmem: the call was interrupted";
    return PYSHMEM_ERR_INTERRUPTED;
  }
}
}  // namespace

using namespace pyshmem;

extern "C" {

const char* pyshmem_last_error(void) { return t_last_error.c_str(); }

int pyshmem_init(void) { return guard([] { init(); }); }
int pyshmem_finalize(void) { return guard([] { finalize(); }); }
int pyshmem_my_pe(int* out) { return guard([&] { *out = my_pe(); }); }
int pyshmem_n_pes(int* out) { return guard([&] { *out = n_pes(); }); }
void pyshmem_global_exit(int status) { global_exit(status); }
int pyshmem_info_get_version(int* major, int* minor) {
  *major = PYSHMEM_MAJOR_VERSION;
  *minor = PYSHMEM_MINOR_VERSION;
  return PYSHMEM_SUCCESS;
}
int pyshmem_info_get_name(char* name) {
  std::strncpy(name, PYSHMEM_VENDOR_STRING, PYSHMEM_MAX_NAME_LEN - 1);
  name[PYSHMEM_MAX_NAME_LEN - 1] = '\0';
  return PYSHMEM_SUCCESS;
}

int pyshmem_malloc(size_t size, void** out) { return guard([&] { *out = sym_malloc(size, 0, false, "pyshmem_malloc"); }); }
int pyshmem_calloc(size_t count, size_t size, void** out) {
  return guard([&] {
    if (size && count > SIZE_MAX / size) fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem_calloc", "count * size overflows");
    *out = sym_malloc(count * size, 0, true, "pyshmem_calloc");
  });
}
int pyshmem_align(size_t alignment, size_t size, void** out) {
  return guard([&] { *out = sym_malloc(size, alignment, false, "pyshmem_align"); });
}
int pyshmem_free(void* ptr) {
  if (!ptr) return PYSHMEM_SUCCESS;
  return guard([&] { sym_free(ptr, "pyshmem_free"); });
}
int pyshmem_ptr(const void* dest, int pe, void** out) { return guard([&] { *out = sym_ptr(dest, pe, "pyshmem_ptr"); }); }
int pyshmem_pe_accessible(int pe, int* out) { return guard([&] { *out = pe_accessible(pe); }); }
int pyshmem_addr_accessible(const void* addr, int pe, int* out) { return guard([&] { *out = addr_accessible(addr, pe); }); }

int pyshmem_putmem(void* d, const void* s, size_t n, int pe) { return guard([&] { putmem(d, s, n, pe, "pyshmem_putmem"); }); }
int pyshmem_getmem(void* d, const void* s, size_t n, int pe) { return guard([&] { getmem(d, s, n, pe, "pyshmem_getmem"); }); }
int pyshmem_putmem_nbi(void* d, const void* s, size_t n, int pe) {
  return guard([&] { putmem_nbi(d, s, n, pe, "pyshmem_putmem_nbi"); });
}
int pyshmem_getmem_nbi(void* d, const void* s, size_t n, int pe) {
  return guard([&] { getmem(d, s, n, pe, "pyshmem_getmem_nbi"); });
}
int pyshmem_iputmem(void* d, const void* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t elem, int pe) {
  return guard([&] { iputmem(d, s, dst, sst, n, elem, pe, "pyshmem_iputmem"); });
}
int pyshmem_igetmem(void* d, const void* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, size_t elem, int pe) {
  return guard([&] { igetmem(d, s, dst, sst, n, elem, pe, "pyshmem_igetmem"); });
}

int pyshmem_atomic(int op, int dtype, void* dest, const void* value, const void* cond, int pe, void* fetch) {
  return guard([&] { atomic(op, dtype, dest, value, cond, fetch, pe, "pyshmem_atomic"); });
}
int pyshmem_int64_atomic_fetch_add(int64_t* dest, int64_t value, int pe, int64_t* fetch) {
  return pyshmem_atomic(PYSHMEM_AMO_ADD, PYSHMEM_INT64, dest, &value, nullptr, pe, fetch);
}
int pyshmem_int64_atomic_compare_swap(int64_t* dest, int64_t cond, int64_t value, int pe, int64_t* fetch) {
  return pyshmem_atomic(PYSHMEM_AMO_COMPARE_SWAP, PYSHMEM_INT64, dest, &value, &cond, pe, fetch);
}
int pyshmem_uint64_atomic_fetch(const uint64_t* source, int pe, uint64_t* fetch) {
  return pyshmem_atomic(PYSHMEM_AMO_FETCH, PYSHMEM_UINT64, const_cast<uint64_t*>(source), nullptr, nullptr, pe, fetch);
}

int pyshmem_putmem_signal(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) {
  return guard([&] { putmem_signal(d, s, n, sig, v, op, pe, "pyshmem_putmem_signal"); });
}
int pyshmem_putmem_signal_nbi(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) {
  return guard([&] { putmem_signal(d, s, n, sig, v, op, pe, "pyshmem_putmem_signal_nbi"); });
}
int pyshmem_signal_fetch(const uint64_t* sig, uint64_t* out) {
  return guard([&] { *out = signal_fetch(sig, "pyshmem_signal_fetch"); });
}
int pyshmem_signal_wait_until(uint64_t* sig, int cmp, uint64_t value, uint64_t* out) {
  return guard([&] { *out = signal_wait_until(sig, cmp, value, "pyshmem_signal_wait_until"); });
}

int pyshmem_wait_until(const void* ivar, int dtype, int cmp, const void* value) {
  return guard([&] { wait_until(ivar, dtype, cmp, value, "pyshmem_wait_until"); });
}
int pyshmem_test(const void* ivar, int dtype, int cmp, const void* value, int* out) {
  return guard([&] { *out = test(ivar, dtype, cmp, value, "pyshmem_test"); });
}

int pyshmem_fence(void) { return guard([] { fence(); }); }
int pyshmem_quiet(void) { return guard([] { quiet(); }); }
int pyshmem_barrier_all(void) { return guard([] { barrier_all("pyshmem_barrier_all"); }); }
int pyshmem_sync_all(void) { return guard([] { sync_all("pyshmem_sync_all"); }); }

int pyshmem_set_lock(int64_t* lock) { return guard([&] { set_lock(lock, "pyshmem_set_lock"); }); }
int pyshmem_test_lock(int64_t* lock, int* held) { return guard([&] { *held = test_lock(lock, "pyshmem_test_lock") ? 0 : 1; }); }
int pyshmem_clear_lock(int64_t* lock) { return guard([&] { clear_lock(lock, "pyshmem_clear_lock"); }); }

}  // extern "C"
