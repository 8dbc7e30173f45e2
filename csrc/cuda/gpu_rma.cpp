// cuda/gpu_rma.cpp: host-initiated copies to and from the GPU heap of any PE (see
// cuda/gpu_heap.h): same-node peers by a CUDA copy into their mapped slot, others through
// the transport that registered the GPU heap; and what the proxy thread needs for GPU
// memory (its context, the flush after RDMA writes).
#include <cstdint>

#include "core/error.h"
#include "core/state.h"
#include "cuda/driver.h"
#include "cuda/gpu_context.h"
#include "cuda/gpu_heap.h"
#include "cuda/gpu_heap_state.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

// Address of symmetric `sym` on PE pe (checked), or 0 when pe's GPU heap is on another
// node and only a transport reaches it.
CUdeviceptr peer_of(uint64_t sym, size_t nbytes, int pe, const char* call) {
  const GpuHeap& g = gpu_heap();
  require_pe(call, pe);
  if (!gpu_is_symmetric(sym, nbytes))
    fail(PYSHMEM_ERR_NOT_SYMMETRIC, call,
         "the GPU target is not a symmetric GPU object (or the range runs past its end); use arrays from "
         "pyshmem.cuda.empty/zeros");
  if (!g.mapped[pe]) return 0;
  return static_cast<CUdeviceptr>(sym) + static_cast<CUdeviceptr>(static_cast<int64_t>(pe - state().pe) *
                                                                   static_cast<int64_t>(g.stride));
}

// A copy to or from PE pe's GPU heap on another node, through the transport that
// reaches it (UCX, which registered the GPU heap at init). Stream order is kept by
// synchronising the stream first and returning only once the transfer is done (the
// source may be reused; a put is visible remotely after quiet, as on the host heap; a
// get's data is flushed to the GPU, so kernels launched after it see it).
void copy_remote(const cuda::Driver& d, bool is_put, uint64_t sym, uint64_t local, size_t n, int pe,
                 uint64_t stream, const char* call) {
  State& s = state();
  const Transport* t = s.route[pe];
  if (!t || !(t->caps & kCapRma))
    fail(PYSHMEM_ERR_NOT_IMPLEMENTED, call,
         "PE " + std::to_string(pe) + "'s GPU heap is on another node and no transport reaches it (UCX is needed: "
         "see python -m pyshmem info)");
  if (n == 0) return;
  if (stream) PYSHMEM_CU_CHECK(d, call, cuStreamSynchronize, reinterpret_cast<CUstream>(stream));
  try {
    if (is_put) t->put(s, reinterpret_cast<void*>(sym), reinterpret_cast<const void*>(local), n, pe);
    else t->get(s, reinterpret_cast<void*>(local), reinterpret_cast<const void*>(sym), n, pe);
  } catch (const Error& e) {
    throw Error(e.status(), error_message(e, call), true);
  }
  if (!is_put) cuda::flush_rdma_writes(call);
}

// stream 0: on pyshmem's private stream, complete on return (not ordered with kernels
// or copies on the caller's streams); otherwise enqueued on `stream`.
void copy(const cuda::Driver& d, CUdeviceptr dst, CUdeviceptr src, size_t n, uint64_t stream, const char* call) {
  if (n == 0) return;
  if (stream) PYSHMEM_CU_CHECK(d, call, cuMemcpyAsync, dst, src, n, reinterpret_cast<CUstream>(stream));
  else cuda::copy_sync(dst, src, n, call);
}

}  // namespace

void gpu_put(uint64_t sym, uint64_t local, size_t nbytes, int pe, uint64_t stream, const char* call) {
  require_init(call);
  gpu_require(call);
  cuda::GpuScope scope(call);
  const cuda::Driver& d = scope.d();
  if (const CUdeviceptr at = peer_of(sym, nbytes, pe, call))
    copy(d, at, static_cast<CUdeviceptr>(local), nbytes, stream, call);
  else
    copy_remote(d, true, sym, local, nbytes, pe, stream, call);
}

void gpu_get(uint64_t local, uint64_t sym, size_t nbytes, int pe, uint64_t stream, const char* call) {
  require_init(call);
  gpu_require(call);
  cuda::GpuScope scope(call);
  const cuda::Driver& d = scope.d();
  if (const CUdeviceptr at = peer_of(sym, nbytes, pe, call))
    copy(d, static_cast<CUdeviceptr>(local), at, nbytes, stream, call);
  else
    copy_remote(d, false, sym, local, nbytes, pe, stream, call);
}

uint64_t gpu_peer_address(uint64_t sym, int pe, const char* call) {
  require_init(call);
  gpu_require(call);
  return static_cast<uint64_t>(peer_of(sym, 1, pe, call));
}

std::string gpu_atomics_problem(int pe) {
  const GpuHeap& g = gpu_heap();
  State& s = state();
  if (!g.active || pe < 0 || pe >= s.npes || g.mapped[pe]) return "";
  const Transport* t = s.route[pe];
  return t && t->gpu_atomics_problem ? t->gpu_atomics_problem(s, pe) : "";
}

void gpu_thread_attach() {
  if (!gpu_heap().active) return;
  PYSHMEM_CU_CHECK(*gpu_heap().d, "proxy", cuCtxSetCurrent, cuda::gpu().ctx);
}

void gpu_flush_writes(const char* call) {
  if (gpu_heap().active) cuda::flush_rdma_writes(call);
}

}  // namespace pyshmem
