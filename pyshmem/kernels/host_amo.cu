// pyshmem/kernels/host_amo.cu: host-API atomics on symmetric GPU arrays.
//
// The host cannot do an atomic on device memory, so pyshmem.atomic_* on a GPU array
// launches this one-thread kernel (pyshmem/_gpu_host_ops.py builds it with NVRTC on
// first use). It calls the device API, so a same-node PE's GPU heap is updated by
// load/store atomics and a PE on another node through the proxy ring of GPU kernels.
// A fetched value is stored to `out` (pinned host memory) with system scope.
#include <pyshmem/device.cuh>

namespace {

template <class T>
__device__ T from_bits(unsigned long long b) {
  if constexpr (sizeof(T) == 8) return cuda::std::bit_cast<T>(b);
  else return cuda::std::bit_cast<T>(static_cast<unsigned int>(b));
}

template <class T>
__device__ unsigned long long to_bits(T v) {
  if constexpr (sizeof(T) == 8) return cuda::std::bit_cast<unsigned long long>(v);
  else return cuda::std::bit_cast<unsigned int>(v);
}

// op: PYSHMEM_AMO_*. The binding has checked that op suits T (floats: fetch, set, swap).
template <class T>
__device__ unsigned long long amo(int op, T* d, T v, T c, int pe, bool fetching) {
  switch (op) {
    case PYSHMEM_AMO_FETCH: return to_bits(pyshmem::atomic_fetch(d, pe));
    case PYSHMEM_AMO_SET: pyshmem::atomic_set(d, v, pe); return 0;
    case PYSHMEM_AMO_SWAP: return to_bits(pyshmem::atomic_swap(d, v, pe));
    default: break;
  }
  if constexpr (cuda::std::is_integral<T>::value) {
    switch (op) {
      case PYSHMEM_AMO_COMPARE_SWAP: return to_bits(pyshmem::atomic_compare_swap(d, c, v, pe));
      case PYSHMEM_AMO_ADD:
        if (fetching) return to_bits(pyshmem::atomic_fetch_add(d, v, pe));
        pyshmem::atomic_add(d, v, pe);
        return 0;
      case PYSHMEM_AMO_INC:
        if (fetching) return to_bits(pyshmem::atomic_fetch_inc(d, pe));
        pyshmem::atomic_inc(d, pe);
        return 0;
      case PYSHMEM_AMO_AND:
        if (fetching) return to_bits(pyshmem::atomic_fetch_and(d, v, pe));
        pyshmem::atomic_and(d, v, pe);
        return 0;
      case PYSHMEM_AMO_OR:
        if (fetching) return to_bits(pyshmem::atomic_fetch_or(d, v, pe));
        pyshmem::atomic_or(d, v, pe);
        return 0;
      case PYSHMEM_AMO_XOR:
        if (fetching) return to_bits(pyshmem::atomic_fetch_xor(d, v, pe));
        pyshmem::atomic_xor(d, v, pe);
        return 0;
      default: break;
    }
  }
  pyshmem::detail::trap("host atomic", "operation not defined for this type", pe);
  return 0;
}

template <class T>
__device__ unsigned long long run(int op, unsigned long long dest, unsigned long long value, unsigned long long cond,
                                  int pe, bool fetching) {
  return amo<T>(op, reinterpret_cast<T*>(dest), from_bits<T>(value), from_bits<T>(cond), pe, fetching);
}

}  // namespace

extern "C" __global__ void pyshmem_host_amo(int op, int dtype, unsigned long long dest, unsigned long long value,
                                            unsigned long long cond, int pe, int fetching, unsigned long long out) {
  unsigned long long r = 0;
  switch (dtype) {
    case PYSHMEM_INT32: r = run<int>(op, dest, value, cond, pe, fetching); break;
    case PYSHMEM_UINT32: r = run<unsigned int>(op, dest, value, cond, pe, fetching); break;
    case PYSHMEM_INT64: r = run<long long>(op, dest, value, cond, pe, fetching); break;
    case PYSHMEM_UINT64: r = run<unsigned long long>(op, dest, value, cond, pe, fetching); break;
    case PYSHMEM_FLOAT32: r = run<float>(op, dest, value, cond, pe, fetching); break;
    case PYSHMEM_FLOAT64: r = run<double>(op, dest, value, cond, pe, fetching); break;
    default: pyshmem::detail::trap("host atomic", "unsupported element type", pe);
  }
  if (fetching)
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(*reinterpret_cast<unsigned long long*>(out))
        .store(r, cuda::std::memory_order_release);
}
