// Compile check of the device API with nvcc (no GPU needed): kernels that call every
// function, thread/warp/block variants, for several element types. Built by
// tests/unit/test_device_headers.py for sm_80 and sm_90.
#include <pyshmem/device.cuh>

template <class T>
__device__ void every_rma(T* dest, const T* src, size_t n, int pe) {
  pyshmem::put(dest, src, n, pe);
  pyshmem::put_warp(dest, src, n, pe);
  pyshmem::put_block(dest, src, n, pe);
  pyshmem::get(const_cast<T*>(src), dest, n, pe);
  pyshmem::get_warp(const_cast<T*>(src), dest, n, pe);
  pyshmem::get_block(const_cast<T*>(src), dest, n, pe);
  pyshmem::put_nbi(dest, src, n, pe);
  pyshmem::put_nbi_warp(dest, src, n, pe);
  pyshmem::put_nbi_block(dest, src, n, pe);
  pyshmem::get_nbi(const_cast<T*>(src), dest, n, pe);
  pyshmem::get_nbi_warp(const_cast<T*>(src), dest, n, pe);
  pyshmem::get_nbi_block(const_cast<T*>(src), dest, n, pe);
  pyshmem::p(dest, src[0], pe);
  T v = pyshmem::g(dest, pe);
  pyshmem::iput(dest, src, 2, 1, n / 2, pe);
  pyshmem::iget(const_cast<T*>(src), dest, 1, 2, n / 2, pe);
  (void)v;
}

template <class T>
__device__ T every_amo(T* dest, T value, int pe) {
  T acc = pyshmem::atomic_fetch(dest, pe);
  pyshmem::atomic_set(dest, value, pe);
  acc += pyshmem::atomic_swap(dest, value, pe);
  acc += pyshmem::atomic_compare_swap(dest, value, acc, pe);
  acc += pyshmem::atomic_fetch_add(dest, value, pe);
  pyshmem::atomic_add(dest, value, pe);
  acc += pyshmem::atomic_fetch_inc(dest, pe);
  pyshmem::atomic_inc(dest, pe);
  acc += pyshmem::atomic_fetch_and(dest, value, pe);
  pyshmem::atomic_and(dest, value, pe);
  acc += pyshmem::atomic_fetch_or(dest, value, pe);
  pyshmem::atomic_or(dest, value, pe);
  acc += pyshmem::atomic_fetch_xor(dest, value, pe);
  pyshmem::atomic_xor(dest, value, pe);
  return acc;
}

template <class F>
__device__ F every_float_amo(F* dest, F value, int pe) {
  F acc = pyshmem::atomic_fetch(dest, pe);
  pyshmem::atomic_set(dest, value, pe);
  return acc + pyshmem::atomic_swap(dest, value, pe);
}

__global__ void kernel_all(int64_t* i64, int32_t* i32, uint64_t* u64, uint32_t* u32, float* f32, double* f64,
                           char* bytes, uint64_t* sig, int pe, int64_t* out) {
  int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  void* peer = pyshmem::ptr(bytes, pe);
  every_rma(i64, i64 + 64, 32, pe);
  every_rma(f64, f64 + 64, 32, pe);
  every_rma(i32, i32 + 64, 32, pe);
  pyshmem::putmem(bytes, bytes + 256, 128, pe);
  pyshmem::putmem_warp(bytes, bytes + 256, 128, pe);
  pyshmem::putmem_block(bytes, bytes + 256, 128, pe);
  pyshmem::getmem(bytes + 256, bytes, 128, pe);
  pyshmem::getmem_warp(bytes + 256, bytes, 128, pe);
  pyshmem::getmem_block(bytes + 256, bytes, 128, pe);
  pyshmem::putmem_nbi(bytes, bytes + 256, 128, pe);
  pyshmem::getmem_nbi(bytes + 256, bytes, 128, pe);
  int64_t acc = every_amo(i64, int64_t(3), pe) + every_amo(i32, int32_t(3), pe) +
                static_cast<int64_t>(every_amo(u64, uint64_t(3), pe) + every_amo(u32, uint32_t(3), pe)) +
                static_cast<int64_t>(every_float_amo(f32, 1.5f, pe) + every_float_amo(f64, 2.5, pe));
  pyshmem::put_signal(i64, i64 + 64, 8, sig, 1, PYSHMEM_SIGNAL_ADD, pe);
  pyshmem::put_signal_warp(i64, i64 + 64, 8, sig, 1, PYSHMEM_SIGNAL_ADD, pe);
  pyshmem::put_signal_block(i64, i64 + 64, 8, sig, 1, PYSHMEM_SIGNAL_SET, pe);
  pyshmem::put_signal_nbi(i64, i64 + 64, 8, sig, 1, PYSHMEM_SIGNAL_ADD, pe);
  pyshmem::put_signal_nbi_warp(i64, i64 + 64, 8, sig, 1, PYSHMEM_SIGNAL_ADD, pe);
  pyshmem::put_signal_nbi_block(i64, i64 + 64, 8, sig, 1, PYSHMEM_SIGNAL_ADD, pe);
  pyshmem::putmem_signal(bytes, bytes + 256, 64, sig, 1, PYSHMEM_SIGNAL_ADD, pe);
  pyshmem::putmem_signal_nbi(bytes, bytes + 256, 64, sig, 1, PYSHMEM_SIGNAL_ADD, pe);
  pyshmem::signal_op(sig, 5, PYSHMEM_SIGNAL_SET, pe);
  acc += static_cast<int64_t>(pyshmem::signal_fetch(sig));
  acc += static_cast<int64_t>(pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, 1));
  pyshmem::wait_until(i64, PYSHMEM_CMP_NE, int64_t(0));
  pyshmem::wait_until(u32, PYSHMEM_CMP_GT, uint32_t(0));
  acc += pyshmem::test(i32, PYSHMEM_CMP_LE, int32_t(7));
  {  // waits and tests on arrays of variables
    const int status[4] = {0, 1, 0, 0};
    const int64_t want[4] = {1, 1, 1, 1};
    size_t idx[4];
    pyshmem::wait_until_all(i64, 4, status, PYSHMEM_CMP_GE, int64_t(0));
    pyshmem::wait_until_all_vector(i64, 4, nullptr, PYSHMEM_CMP_EQ, want);
    acc += static_cast<int64_t>(pyshmem::wait_until_any(u32, 4, nullptr, PYSHMEM_CMP_NE, uint32_t(0)) +
                                pyshmem::wait_until_any_vector(i64, 4, status, PYSHMEM_CMP_GE, want) +
                                pyshmem::wait_until_some(i64, 4, idx, status, PYSHMEM_CMP_EQ, int64_t(1)) +
                                pyshmem::wait_until_some_vector(i64, 4, idx, nullptr, PYSHMEM_CMP_LE, want));
    acc += pyshmem::test_all(i32, 4, status, PYSHMEM_CMP_LT, int32_t(3)) +
           pyshmem::test_all_vector(i64, 4, nullptr, PYSHMEM_CMP_NE, want);
    acc += static_cast<int64_t>(pyshmem::test_any(u32, 4, nullptr, PYSHMEM_CMP_EQ, uint32_t(2)) +
                                pyshmem::test_any_vector(i64, 4, status, PYSHMEM_CMP_GT, want) +
                                pyshmem::test_some(i64, 4, idx, nullptr, PYSHMEM_CMP_EQ, int64_t(0)) +
                                pyshmem::test_some_vector(i64, 4, idx, status, PYSHMEM_CMP_EQ, want));
  }
  pyshmem::fence();
  pyshmem::quiet();
  pyshmem::barrier_all();
  pyshmem::barrier_all_warp();
  pyshmem::barrier_all_block();
  pyshmem::sync_all();
  pyshmem::sync_all_warp();
  pyshmem::sync_all_block();
  out[0] = acc + me + n + (peer != nullptr);
}
