// host/c_api.cpp: the C ABI (include/pyshmem/pyshmem.h) over the C++ host API.
// Exceptions never cross this boundary: they become status codes + pyshmem_last_error().
#include <cstring>
#include <string>

#include "coll/coll.h"
#include "core/error.h"
#include "host/c_api_guard.h"
#include "host/host.h"
#include "team/team.h"
#include "pyshmem/pyshmem.h"

using namespace pyshmem;
using capi::guard;

namespace pyshmem {
namespace capi {
std::string& last_error() {
  thread_local std::string message;
  return message;
}
}  // namespace capi
}  // namespace pyshmem

extern "C" {

const char* pyshmem_last_error(void) { return capi::last_error().c_str(); }

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
  return guard([&] { getmem_nbi(d, s, n, pe, "pyshmem_getmem_nbi"); });
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

int pyshmem_team_my_pe(int team, int* pe_out) {
  return guard([&] { *pe_out = team_desc(team, "pyshmem_team_my_pe").my_index; });
}
int pyshmem_team_n_pes(int team, int* npes_out) {
  return guard([&] { *npes_out = team_desc(team, "pyshmem_team_n_pes").size; });
}
int pyshmem_team_translate_pe(int src_team, int src_pe, int dest_team, int* pe_out) {
  return guard([&] { *pe_out = team_translate_pe(src_team, src_pe, dest_team, "pyshmem_team_translate_pe"); });
}
int pyshmem_team_split_strided(int parent, int start, int stride, int size, const pyshmem_team_config* config,
                               long config_mask, int* team_out) {
  return guard([&] {
    TeamConfig c;
    if (config) c.num_contexts = config->num_contexts;
    *team_out = PYSHMEM_TEAM_INVALID;
    *team_out = team_split_strided(parent, start, stride, size, c, config ? config_mask : 0,
                                   "pyshmem_team_split_strided");
  });
}
int pyshmem_team_split_2d(int parent, int xrange, const pyshmem_team_config* xconfig, long xmask,
                          const pyshmem_team_config* yconfig, long ymask, int* xteam_out, int* yteam_out) {
  return guard([&] {
    TeamConfig xc, yc;
    if (xconfig) xc.num_contexts = xconfig->num_contexts;
    if (yconfig) yc.num_contexts = yconfig->num_contexts;
    *xteam_out = *yteam_out = PYSHMEM_TEAM_INVALID;
    team_split_2d(parent, xrange, xc, xconfig ? xmask : 0, yc, yconfig ? ymask : 0, xteam_out, yteam_out,
                  "pyshmem_team_split_2d");
  });
}
int pyshmem_team_destroy(int team) { return guard([&] { team_destroy(team, "pyshmem_team_destroy"); }); }
int pyshmem_team_sync(int team) { return guard([&] { team_sync(team, "pyshmem_team_sync"); }); }
int pyshmem_barrier(int team) { return guard([&] { barrier(team, "pyshmem_barrier"); }); }

int pyshmem_broadcastmem(int team, void* dest, const void* source, size_t nbytes, int root) {
  return guard([&] { broadcast(team, dest, source, nbytes, root, "pyshmem_broadcastmem"); });
}
int pyshmem_fcollectmem(int team, void* dest, const void* source, size_t nbytes) {
  return guard([&] { fcollect(team, dest, source, nbytes, "pyshmem_fcollectmem"); });
}
int pyshmem_collectmem(int team, void* dest, size_t dest_bytes, const void* source, size_t nbytes) {
  return guard([&] { collect(team, dest, dest_bytes, source, nbytes, 1, "pyshmem_collectmem"); });
}
int pyshmem_alltoallmem(int team, void* dest, const void* source, size_t nbytes) {
  return guard([&] { alltoall(team, dest, source, nbytes, "pyshmem_alltoallmem"); });
}
int pyshmem_alltoallsmem(int team, void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                         size_t elem_size) {
  return guard([&] { alltoalls(team, dest, source, dst, sst, nelems, elem_size, "pyshmem_alltoallsmem"); });
}
int pyshmem_reduce(int team, void* dest, const void* source, size_t nelems, int dtype, int op) {
  return guard([&] { reduce(team, dest, source, nelems, dtype, op, "pyshmem_reduce"); });
}

int pyshmem_set_lock(int64_t* lock) { return guard([&] { set_lock(lock, "pyshmem_set_lock"); }); }
int pyshmem_test_lock(int64_t* lock, int* held) { return guard([&] { *held = test_lock(lock, "pyshmem_test_lock") ? 0 : 1; }); }
int pyshmem_clear_lock(int64_t* lock) { return guard([&] { clear_lock(lock, "pyshmem_clear_lock"); }); }

}  // extern "C"
