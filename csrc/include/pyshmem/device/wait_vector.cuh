// pyshmem/device/wait_vector.cuh: waits and tests on arrays of local symmetric variables
// (OpenSHMEM 1.5's wait_until_{all,any,some}[_vector] and test_{all,any,some}[_vector]).
//
// Common rules, for T an integer type:
//  - ivars: nelems local symmetric variables; status: null, or nelems ints where a
//    non-zero entry leaves that variable out of the wait set; cmp: PYSHMEM_CMP_* (any
//    other value traps naming the call); the _vector forms compare ivars[i] with
//    cmp_values[i], the others with cmp_value.
//  - every read of a variable is an acquire load: once a wait returns, the stores the
//    satisfying writer made before its (fenced) update are visible to the caller.
//  - an empty wait set (nelems == 0 or every variable excluded) never blocks: *_all
//    return at once (test_all returns 1), *_any return SIZE_MAX (kNoIndex), *_some return 0.
//  - *_any return the lowest index that satisfies the comparison; *_some write every
//    satisfying index, in increasing order, to indices (room for nelems) and return
//    how many; wait_until_some returns once at least one does.
// Waits poll with the same backoff, PYSHMEM_TIMEOUT bound and hang report as wait_until
// (the report names the first variable of the wait set that does not yet satisfy it).
// One thread calls these; they have no _warp/_block forms (neither has NVSHMEM).
#pragma once

#include "pyshmem/device/sync.cuh"

namespace pyshmem {
inline namespace device_api {
// What *_any return when nothing is left to wait for: SIZE_MAX (spelt out because
// NVRTC has no <stdint.h>).
constexpr size_t kNoIndex = ~static_cast<size_t>(0);

namespace detail {

enum class WaitSet { all, any, some };

// The comparison value of variable i: a scalar for every variable, or one each.
template <class T>
struct CmpValues {
  T scalar;
  const T* each;  // null: scalar for all
  PYSHMEM_HD T operator[](size_t i) const { return each ? each[i] : scalar; }
};

// One pass over the wait set. Returns how many included variables satisfy the
// comparison (for `any`, stops at the first; for `all`, at the first that does not),
// writes satisfying indices to `indices` when given, and sets `first_hit` to the first
// satisfying variable and `first_unmet` to the first that does not (nelems when none)
// and `included` to whether the wait set is non-empty.
template <class T>
PYSHMEM_HD size_t wait_set_scan(WaitSet mode, T* ivars, size_t nelems, size_t* indices, const int* status, int cmp,
                                const CmpValues<T>& values, size_t& first_hit, size_t& first_unmet, bool& included) {
  size_t hits = 0;
  first_hit = first_unmet = nelems;
  included = false;
  for (size_t i = 0; i < nelems; ++i) {
    if (status && status[i]) continue;
    included = true;
    const T v = sys_atomic<T>(ivars[i]).load(cuda::std::memory_order_acquire);
    if (compare_t(v, cmp, values[i])) {
      if (indices) indices[hits] = i;
      if (hits++ == 0) first_hit = i;
      if (mode == WaitSet::any) return hits;
    } else {
      if (first_unmet == nelems) first_unmet = i;
      if (mode == WaitSet::all) return hits;
    }
  }
  return hits;
}

// The wait (blocking) or test of one wait set. Returns, for `all`, 1 when every
// included variable satisfies it (or none is included), else 0; for `any`, the index
// or SIZE_MAX; for `some`, the number of indices written.
template <class T>
PYSHMEM_HD size_t wait_set(const char* call, WaitSet mode, bool blocking, T* ivars, size_t nelems, size_t* indices,
                           const int* status, int cmp, const CmpValues<T>& values) {
  check_cmp(call, cmp);
  size_t first_hit, first_unmet;
  bool included;
  Backoff b;
  for (;;) {
    const size_t hits = wait_set_scan(mode, ivars, nelems, mode == WaitSet::some ? indices : nullptr, status, cmp,
                                      values, first_hit, first_unmet, included);
    const bool done = !included || (mode == WaitSet::all ? first_unmet == nelems : hits > 0);
    if (done || !blocking) {
      if (mode == WaitSet::all) return done ? 1 : 0;
      if (mode == WaitSet::any) return hits ? first_hit : kNoIndex;
      return hits;
    }
    const size_t i = first_unmet < nelems ? first_unmet : 0;
    const WaitDesc w{call, ivars + i, dtype_of<T>(), cmp, to_bits(values[i]), -1};
    b.pause(w);
  }
}

}  // namespace detail

// ---- waits: block until the wait set satisfies the comparison ----
template <class T>
PYSHMEM_HD void wait_until_all(T* ivars, size_t nelems, const int* status, int cmp, T cmp_value) {
  detail::wait_set("wait_until_all", detail::WaitSet::all, true, ivars, nelems, nullptr, status, cmp,
                   detail::CmpValues<T>{cmp_value, nullptr});
}
template <class T>
PYSHMEM_HD size_t wait_until_any(T* ivars, size_t nelems, const int* status, int cmp, T cmp_value) {
  return detail::wait_set("wait_until_any", detail::WaitSet::any, true, ivars, nelems, nullptr, status, cmp,
                          detail::CmpValues<T>{cmp_value, nullptr});
}
template <class T>
PYSHMEM_HD size_t wait_until_some(T* ivars, size_t nelems, size_t* indices, const int* status, int cmp,
                                  T cmp_value) {
  return detail::wait_set("wait_until_some", detail::WaitSet::some, true, ivars, nelems, indices, status, cmp,
                          detail::CmpValues<T>{cmp_value, nullptr});
}
template <class T>
PYSHMEM_HD void wait_until_all_vector(T* ivars, size_t nelems, const int* status, int cmp, const T* cmp_values) {
  detail::wait_set("wait_until_all_vector", detail::WaitSet::all, true, ivars, nelems, nullptr, status, cmp,
                   detail::CmpValues<T>{T(), cmp_values});
}
template <class T>
PYSHMEM_HD size_t wait_until_any_vector(T* ivars, size_t nelems, const int* status, int cmp, const T* cmp_values) {
  return detail::wait_set("wait_until_any_vector", detail::WaitSet::any, true, ivars, nelems, nullptr, status, cmp,
                          detail::CmpValues<T>{T(), cmp_values});
}
template <class T>
PYSHMEM_HD size_t wait_until_some_vector(T* ivars, size_t nelems, size_t* indices, const int* status, int cmp,
                                         const T* cmp_values) {
  return detail::wait_set("wait_until_some_vector", detail::WaitSet::some, true, ivars, nelems, indices, status,
                          cmp, detail::CmpValues<T>{T(), cmp_values});
}

// ---- tests: the same conditions, checked once, never blocking ----
template <class T>
PYSHMEM_HD int test_all(T* ivars, size_t nelems, const int* status, int cmp, T cmp_value) {
  return static_cast<int>(detail::wait_set("test_all", detail::WaitSet::all, false, ivars, nelems, nullptr, status,
                                           cmp, detail::CmpValues<T>{cmp_value, nullptr}));
}
template <class T>
PYSHMEM_HD size_t test_any(T* ivars, size_t nelems, const int* status, int cmp, T cmp_value) {
  return detail::wait_set("test_any", detail::WaitSet::any, false, ivars, nelems, nullptr, status, cmp,
                          detail::CmpValues<T>{cmp_value, nullptr});
}
template <class T>
PYSHMEM_HD size_t test_some(T* ivars, size_t nelems, size_t* indices, const int* status, int cmp, T cmp_value) {
  return detail::wait_set("test_some", detail::WaitSet::some, false, ivars, nelems, indices, status, cmp,
                          detail::CmpValues<T>{cmp_value, nullptr});
}
template <class T>
PYSHMEM_HD int test_all_vector(T* ivars, size_t nelems, const int* status, int cmp, const T* cmp_values) {
  return static_cast<int>(detail::wait_set("test_all_vector", detail::WaitSet::all, false, ivars, nelems, nullptr,
                                           status, cmp, detail::CmpValues<T>{T(), cmp_values}));
}
template <class T>
PYSHMEM_HD size_t test_any_vector(T* ivars, size_t nelems, const int* status, int cmp, const T* cmp_values) {
  return detail::wait_set("test_any_vector", detail::WaitSet::any, false, ivars, nelems, nullptr, status, cmp,
                          detail::CmpValues<T>{T(), cmp_values});
}
template <class T>
PYSHMEM_HD size_t test_some_vector(T* ivars, size_t nelems, size_t* indices, const int* status, int cmp,
                                   const T* cmp_values) {
  return detail::wait_set("test_some_vector", detail::WaitSet::some, false, ivars, nelems, indices, status, cmp,
                          detail::CmpValues<T>{T(), cmp_values});
}

}  // namespace device_api
}  // namespace pyshmem
