// cuda/gpu_device_state.cpp: what GPU code sees of the runtime (see cuda/gpu_heap.h): the
// device state (heap geometry, per-peer flags, proxy ring, team table), its upload into
// loaded modules, the GPU copy of the team table, and pinned host memory for kernels.
#include <cstring>
#include <memory>
#include <vector>

#include "core/error.h"
#include "core/state.h"
#include "cuda/driver.h"
#include "cuda/gpu_context.h"
#include "cuda/gpu_heap.h"
#include "cuda/gpu_heap_state.h"

namespace pyshmem {
void gpu_device_state_init(const State& s) {
  GpuHeap& g = gpu_heap();
  // Per-peer flags live in this PE's system area, after the barrier counters, so GPU
  // code can read them (pyshmem_device_state.peer_flags must be device-visible).
  const size_t flags_off = gpu_round_up(sizeof(SysArea), 64);
  if (flags_off + static_cast<size_t>(s.npes) > kSysAreaBytes)
    fail(PYSHMEM_ERR_INVALID_ARG, "pyshmem.init", "too many PEs for the GPU heap's system area: at most " +
             std::to_string(kSysAreaBytes - flags_off) + " PEs with PYSHMEM_BACKEND=cuda; run fewer PEs");
  std::vector<uint8_t> flags(s.npes, 0);
  for (int p = 0; p < s.npes; ++p) flags[p] = g.mapped[p] ? PYSHMEM_PEER_LOAD_STORE : 0;
  const CUdeviceptr flags_at = g.my_base + flags_off;
  cuda::copy_sync(flags_at, reinterpret_cast<CUdeviceptr>(flags.data()), flags.size(), "pyshmem.init");
  g.state = pyshmem_device_state{};
  g.state.version = PYSHMEM_DEVICE_STATE_VERSION;
  g.state.my_pe = s.pe;
  g.state.n_pes = s.npes;
  g.state.flags = s.config.DEBUG ? PYSHMEM_STATE_DEBUG : 0u;
  g.state.heap_base = g.reservation;
  g.state.heap_stride = g.stride;
  g.state.heap_size = g.size;
  g.state.user_offset = kSysAreaBytes;
  g.state.peer_flags = reinterpret_cast<const uint8_t*>(flags_at);
  g.state.proxy = nullptr;  // set by gpu_state_set_proxy once the proxy runs
  g.state.wait_timeout_ns = s.config.TIMEOUT > 0 ? static_cast<uint64_t>(s.config.TIMEOUT * 1e9) : 0;
  g.state.wait_hook = nullptr;  // GPU threads print and trap instead (device/common.cuh)
  g.state.note_op = nullptr;    // GPU kernels' operations are not recorded
  g.state.progress = nullptr;   // the proxy thread progresses the transport for GPU kernels
}

const pyshmem_device_state* gpu_device_state() { return gpu_heap().active ? &gpu_heap().state : nullptr; }

void* gpu_pinned_alloc(size_t bytes) {
  const GpuHeap& g = gpu_heap();
  if (!g.active) return nullptr;
  void* p = nullptr;
  cuda::GpuScope scope("pyshmem.init");
  // DEVICEMAP: kernels reach it; PORTABLE: from every context. With unified addressing
  // the device address is the host address, so pointers inside the ring work on both.
  if (g.d->cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) return nullptr;
  return p;
}

void gpu_pinned_free(void* p) {
  const GpuHeap& g = gpu_heap();
  if (!p || !g.d) return;
  cuda::GpuScope scope("pyshmem.finalize");
  g.d->cuMemFreeHost(p);
}

void gpu_state_set_proxy(pyshmem_proxy_fifo* fifo) { gpu_heap().state.proxy = fifo; }

void gpu_teams_setup(const pyshmem_team_desc* table_entries, uint32_t slot_bytes, uint32_t max_teams,
                     uint32_t rounds) {
  GpuHeap& g = gpu_heap();
  if (!g.active) return;
  const size_t table = sizeof(pyshmem_team_desc) * max_teams;
  g.team_slot_bytes = slot_bytes;
  g.state.teams = reinterpret_cast<const pyshmem_team_desc*>(g.my_base + g.size - table);
  g.state.team_pool_offset = g.size - g.team_bytes;
  g.state.team_slot_bytes = slot_bytes;
  g.state.max_teams = max_teams;
  g.state.team_rounds = rounds;
  cuda::GpuScope scope("pyshmem.init");
  cuda::copy_sync(reinterpret_cast<CUdeviceptr>(g.state.teams), reinterpret_cast<CUdeviceptr>(table_entries), table,
                  "pyshmem.init");
}

void gpu_team_update(int index, const pyshmem_team_desc& d) {
  GpuHeap& g = gpu_heap();
  if (!g.active || !g.state.teams) return;
  const CUdeviceptr at = reinterpret_cast<CUdeviceptr>(g.state.teams) + sizeof(d) * static_cast<size_t>(index);
  cuda::GpuScope scope("team");
  cuda::copy_sync(at, reinterpret_cast<CUdeviceptr>(&d), sizeof d, "team");
}

void gpu_team_slot_clear(int index) {
  GpuHeap& g = gpu_heap();
  if (!g.active || !g.state.teams) return;
  const CUdeviceptr at = g.my_base + g.state.team_pool_offset + size_t(g.team_slot_bytes) * static_cast<size_t>(index);
  cuda::GpuScope scope("team");
  cuda::memset_sync(at, 0, g.team_slot_bytes, "team");
}

uint64_t gpu_host_cell(const char* call) {
  GpuHeap& g = gpu_heap();
  require_init(call);
  gpu_require(call);
  cuda::GpuScope scope(call);
  if (!g.host_cell && !(g.host_cell = gpu_pinned_alloc(64)))
    fail(PYSHMEM_ERR_NOMEM, call, "cannot allocate 64 bytes of pinned host memory (cuMemHostAlloc)");
  return reinterpret_cast<uint64_t>(g.host_cell);
}

void gpu_state_upload(uint64_t handle, bool is_library, const char* call) {
  const GpuHeap& g = gpu_heap();
  require_init(call);
  gpu_require(call);
  const cuda::Driver& d = *g.d;
  // The module belongs to the context current on this thread (Numba's setup callback
  // runs where Numba loaded it); with none current, it is pyshmem's.
  CUcontext current = nullptr;
  if (d.cuCtxGetCurrent(&current) != CUDA_SUCCESS) current = nullptr;
  std::unique_ptr<cuda::GpuScope> scope;
  if (!current || current == cuda::gpu().ctx) scope = std::make_unique<cuda::GpuScope>(call);
  CUdeviceptr at = 0;
  size_t bytes = 0;
  const CUresult r = is_library
                         ? d.cuLibraryGetGlobal(&at, &bytes, reinterpret_cast<CUlibrary>(handle), "pyshmem_d_state")
                         : d.cuModuleGetGlobal(&at, &bytes, reinterpret_cast<CUmodule>(handle), "pyshmem_d_state");
  if (r == CUDA_ERROR_NOT_FOUND)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "the module has no pyshmem_d_state: it does not include <pyshmem/device.cuh> (or defines "
         "PYSHMEM_DEVICE_STATE_EXTERN in every file)");
  cuda::check(d, r, call, is_library ? "cuLibraryGetGlobal" : "cuModuleGetGlobal");
  if (bytes != sizeof(pyshmem_device_state))
    fail(PYSHMEM_ERR_MISMATCH, call,
         "the module's pyshmem_d_state is " + std::to_string(bytes) + " bytes, this runtime's is " +
             std::to_string(sizeof(pyshmem_device_state)) + ": rebuild the module with this pyshmem's headers");
  // Complete on return, whatever stream the module's kernels are launched on later.
  if (scope) {
    cuda::copy_sync(at, reinterpret_cast<CUdeviceptr>(&g.state), sizeof g.state, call);
    return;
  }
  CUstream stream = nullptr;  // the module's context is another one: a stream of its own there
  PYSHMEM_CU_CHECK(d, call, cuStreamCreate, &stream, CU_STREAM_NON_BLOCKING);
  CUresult copied = d.cuMemcpyAsync(at, reinterpret_cast<CUdeviceptr>(&g.state), sizeof g.state, stream);
  if (copied == CUDA_SUCCESS) copied = d.cuStreamSynchronize(stream);
  d.cuStreamDestroy(stream);
  cuda::check(d, copied, call, "cuMemcpyAsync (device state)");
}

}  // namespace pyshmem
