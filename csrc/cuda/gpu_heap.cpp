// cuda/gpu_heap.cpp: the GPU symmetric heap over cuMem VMM (see cuda/gpu_heap.h).
#include "cuda/gpu_heap.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "core/error.h"
#include "core/log.h"
#include "core/state.h"
#include "cuda/driver.h"
#include "cuda/gpu_context.h"
#include "heap/allocator.h"
#include "heap/heap.h"
#include "host/host.h"
#include "team/team.h"
#include "transport/transport.h"

namespace pyshmem {
namespace {

struct GpuHeap {
  const cuda::Driver* d = nullptr;
  CUdeviceptr reservation = 0;
  size_t reservation_len = 0;
  size_t stride = 0;  // bytes between slots (= segment size, a multiple of the granularity)
  size_t size = 0;    // bytes of each PE's segment, system area included
  size_t team_bytes = 0;  // at the end of the segment: team slots, then the team table
  uint32_t team_slot_bytes = 0;
  CUdeviceptr my_base = 0;
  std::vector<bool> mapped;  // per PE
  std::unique_ptr<Allocator> alloc;
  pyshmem_device_state state{};
  void* host_cell = nullptr;  // pinned: results of host-API atomics on GPU arrays
  bool active = false;
};

GpuHeap g;
std::string g_why_not = "not initialised";  // why the GPU is not used (for describe)

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

}  // namespace

// Throws unless this PE has a GPU heap. Also used by cuda/gpu_module.cpp.
void gpu_require(const char* call) {
  if (!g.active)
    fail(PYSHMEM_ERR_NOT_IMPLEMENTED, call,
         "no GPU heap: the backend is cpu (" + g_why_not + "); set PYSHMEM_BACKEND=cuda on a machine with a GPU");
}

namespace {

// Can this PE use a GPU? Returns the driver or null with the reason.
const cuda::Driver* probe(const State& s, std::string* why) {
  const cuda::Driver* d = cuda::driver_load(s.config.CUDA_DRIVER, why);
  if (!d) return nullptr;
  int count = 0;
  if (d->cuDeviceGetCount(&count) != CUDA_SUCCESS || count < 1) {
    *why = "the CUDA driver sees no GPU";
    return nullptr;
  }
  return d;
}

void pick_device(State& s) {
  const int local_rank =
      static_cast<int>(std::find(s.local_pes.begin(), s.local_pes.end(), s.pe) - s.local_pes.begin());
  cuda::gpu_open(g.d, s.config.CUDA_DEVICE, local_rank, "pyshmem.init");
  const cuda::Gpu& gpu = cuda::gpu();
  CUdevice dev = 0;
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuDeviceGet, &dev, gpu.device);
  int vmm = 0, fd_handles = 0;
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuDeviceGetAttribute, &vmm,
                   CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, dev);
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuDeviceGetAttribute, &fd_handles,
                   CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, dev);
  if (!vmm || !fd_handles)
    fail(PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem.init",
         "GPU " + std::to_string(gpu.device) + " does not support CUDA virtual memory management with POSIX file "
         "descriptor handles, which the GPU heap needs; use PYSHMEM_BACKEND=cpu");
}

CUmemAllocationProp allocation_prop() {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = cuda::gpu().device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  // So that UCX can register the heap with an InfiniBand NIC (GPUDirect RDMA), where
  // the GPU supports it on VMM allocations.
  prop.allocFlags.gpuDirectRDMACapable = cuda::gpu().rdma_capable ? 1 : 0;
  return prop;
}

// Maps `handle` into PE p's slot, readable and writable by every GPU of this process
// that can reach the memory's GPU (this PE's GPU must be one of them): kernels of a
// framework on another GPU of the node reach the heap too.
void map_slot(int p, CUmemGenericAllocationHandle handle) {
  const CUdeviceptr at = g.reservation + static_cast<CUdeviceptr>(p) * g.stride;
  CUmemAllocationProp prop{};
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuMemGetAllocationPropertiesFromHandle, &prop, handle);
  const int owner = prop.location.id, mine = cuda::gpu().device;
  const std::vector<int> devices = cuda::accessors_of(owner);
  if (std::find(devices.begin(), devices.end(), mine) == devices.end())
    fail(PYSHMEM_ERR_SYSTEM, "pyshmem.init",
         "PE " + std::to_string(p) + "'s GPU heap is on GPU " + std::to_string(owner) + ", which GPU " +
             std::to_string(mine) + " of this PE cannot access peer-to-peer (no NVLink or PCIe P2P between them); "
             "run the PEs of a node on GPUs that can reach each other (PYSHMEM_CUDA_DEVICE)");
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuMemMap, at, g.size, 0, handle, 0);
  std::vector<CUmemAccessDesc> access(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    access[i].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access[i].location.id = devices[i];
    access[i].flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  }
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuMemSetAccess, at, g.size, access.data(), access.size());
  g.mapped[p] = true;
}

void fill_state(const State& s) {
  // Per-peer flags live in this PE's system area, after the barrier counters, so GPU
  // code can read them (pyshmem_device_state.peer_flags must be device-visible).
  const size_t flags_off = round_up(sizeof(SysArea), 64);
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
}

void create(State& s, const std::string& token) {
  pick_device(s);
  cuda::GpuScope scope("pyshmem.init");
  const int device = cuda::gpu().device;
  const CUmemAllocationProp prop = allocation_prop();
  size_t gran = 0;
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuMemGetAllocationGranularity, &gran, &prop,
                   CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  // The team slots and a copy of the team table follow the user heap (team/team.h).
  g.team_bytes = s.team_pool_bytes + s.team_table_bytes;
  g.size = round_up(kSysAreaBytes + s.config.CUDA_SYMMETRIC_SIZE + g.team_bytes, gran);
  g.stride = g.size;
  g.mapped.assign(s.npes, false);
  CUmemGenericAllocationHandle mine = 0;
  const CUresult r = g.d->cuMemCreate(&mine, g.size, &prop, 0);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    fail(PYSHMEM_ERR_NOMEM, "pyshmem.init",
         "not enough GPU memory for a " + std::to_string(g.size) + "-byte GPU heap on GPU " +
             std::to_string(device) + "; lower PYSHMEM_CUDA_SYMMETRIC_SIZE");
  cuda::check(*g.d, r, "pyshmem.init", "cuMemCreate");
  int fd = -1;
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuMemExportToShareableHandle, &fd, mine, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
  g.reservation_len = g.stride * static_cast<size_t>(s.npes);
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuMemAddressReserve, &g.reservation, g.reservation_len, gran, 0, 0);
  map_slot(s.pe, mine);
  g.d->cuMemRelease(mine);  // the mapping keeps the memory alive
  g.my_base = g.reservation + static_cast<CUdeviceptr>(s.pe) * g.stride;
  // Complete before the exchange below: once peers have the handle they may write here.
  cuda::memset_sync(g.my_base, 0, kSysAreaBytes, "pyshmem.init");
  cuda::memset_sync(g.my_base + g.size - g.team_bytes, 0, g.team_bytes, "pyshmem.init");
  std::vector<int> fds = fd_exchange(s, fd, token, "gpu-heap");
  ::close(fd);
  for (int p = 0; p < s.npes; ++p) {
    if (fds[p] < 0) continue;
    CUmemGenericAllocationHandle h = 0;
    const CUresult ri = g.d->cuMemImportFromShareableHandle(
        &h, reinterpret_cast<void*>(static_cast<uintptr_t>(fds[p])), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    ::close(fds[p]);
    cuda::check(*g.d, ri, "pyshmem.init", "cuMemImportFromShareableHandle");
    map_slot(p, h);
    g.d->cuMemRelease(h);
  }
  fill_state(s);
  g.alloc = std::make_unique<Allocator>(kSysAreaBytes, g.size - g.team_bytes);
  g.active = true;
  s.gpu_base = g.my_base;
  s.gpu_size = g.size;
  log_debug("gpu heap: GPU %d (%s, chosen by %s), %zu bytes per PE at 0x%llx", device, cuda::gpu().name.c_str(),
            cuda::gpu().chosen_by.c_str(), g.size, static_cast<unsigned long long>(g.reservation));
}

// Address of symmetric `sym` on PE pe (checked), or 0 when pe's GPU heap is on another
// node and only a transport reaches it.
CUdeviceptr peer_of(uint64_t sym, size_t nbytes, int pe, const char* call) {
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

void gpu_heap_create(State& s, const std::string& token) {
  const std::string& backend = s.config.BACKEND;
  if (backend == "cpu") {
    g_why_not = "PYSHMEM_BACKEND=cpu";
    return;
  }
  std::string why;
  g.d = probe(s, &why);
  // Collective decision: the GPU heap exists on all PEs or on none.
  const auto votes = s.boot->allgather(g.d ? std::string("1") : "0" + why);
  int refusing = -1;
  for (int p = 0; p < s.npes && refusing < 0; ++p)
    if (votes[p][0] != '1') refusing = p;
  if (refusing >= 0) {
    g_why_not = "PE " + std::to_string(refusing) + ": " + votes[refusing].substr(1);
    if (backend == "cuda") fail(PYSHMEM_ERR_SYSTEM, "pyshmem.init", "PYSHMEM_BACKEND=cuda but " + g_why_not);
    log_debug("backend: cpu (%s)", g_why_not.c_str());
    return;
  }
  create(s, token);
}

void gpu_heap_retire(State& s) {
  g.active = false;
  s.gpu_base = 0;
  s.gpu_size = 0;
}

std::string gpu_probe() {
  std::string why;
  Config c = config_from_env();
  const cuda::Driver* d = cuda::driver_load(c.CUDA_DRIVER, &why);
  if (!d) return why;
  int count = 0;
  d->cuDeviceGetCount(&count);
  std::string out = "CUDA driver " + std::to_string(d->version / 1000) + "." + std::to_string(d->version % 1000 / 10) +
                    ", " + std::to_string(count) + " GPU(s)";
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    char name[256] = {};
    if (d->cuDeviceGet(&dev, i) == CUDA_SUCCESS) d->cuDeviceGetName(name, sizeof name - 1, dev);
    out += std::string(i ? ", " : ": ") + name;
  }
  return out;
}

bool gpu_active() { return g.active; }

int gpu_device_ordinal() { return g.active ? cuda::gpu().device : -1; }

std::string gpu_arch() {
  if (!g.active) return "";
  CUdevice dev = 0;
  int major = 0, minor = 0;
  PYSHMEM_CU_CHECK(*g.d, "cuda.arch", cuDeviceGet, &dev, cuda::gpu().device);
  PYSHMEM_CU_CHECK(*g.d, "cuda.arch", cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  PYSHMEM_CU_CHECK(*g.d, "cuda.arch", cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::string gpu_describe() {
  if (!g.active) return "cpu (GPU heap not used: " + g_why_not + ")";
  return "cuda: GPU " + std::to_string(cuda::gpu().device) + " (" + cuda::gpu().name + "), driver " +
         std::to_string(g.d->version / 1000) + "." + std::to_string(g.d->version % 1000 / 10) + ", GPU heap " +
         std::to_string(g.size) + " bytes per PE";
}

uint64_t gpu_malloc(size_t size, size_t align, bool clear, const char* call) {
  require_init(call);
  gpu_require(call);
  cuda::GpuScope scope(call);
  State& s = state();
  // A PE that fails still takes part in the agreement below, so all PEs fail together.
  std::string err;
  pyshmem_status status = PYSHMEM_ERR_INVALID_ARG;
  if (align && (align & (align - 1))) err = "alignment " + std::to_string(align) + " is not a power of two; pass a power of two";
  collective_check_args(s, call, "GPU allocation size/alignment", describe_request(size, align));
  size_t off = 0;
  if (err.empty() && !g.alloc->allocate(size, align, &off)) {
    status = PYSHMEM_ERR_NOMEM;
    err = "GPU symmetric heap exhausted: requested " + std::to_string(size) + " bytes, " +
          std::to_string(g.alloc->bytes_free()) + " free of " + std::to_string(g.alloc->capacity()) +
          ". Raise PYSHMEM_CUDA_SYMMETRIC_SIZE or free GPU arrays you no longer need";
  }
  const CUdeviceptr p = g.my_base + off;
  try {
    // The fill is complete before the agreement: a peer may write here once it returns.
    if (err.empty() && clear) cuda::memset_sync(p, 0, size, call);
    heap_agree(call, "allocate", !err.empty());
  } catch (...) {
    if (err.empty()) g.alloc->release(off);
    throw;
  }
  if (!err.empty()) fail(status, call, err);
  return p;
}

void gpu_free(uint64_t addr, const char* call) {
  require_init(call);
  gpu_require(call);
  State& s = state();
  const bool live = gpu_is_symmetric(addr, 0) && g.alloc->size_of(addr - g.my_base) != 0;
  collective_check_args(s, call, "GPU object to free",
                        live ? "the object at GPU heap offset " + std::to_string(addr - g.my_base) : "an object it rejected");
  quiet();  // no PE may still be accessing the object on this PE once all arrive
  heap_agree(call, "free the object", !live);
  if (!live)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "the object is not a live symmetric GPU allocation (already freed, or a view into one); free "
         "the array pyshmem.cuda.empty/zeros returned, once");
  g.alloc->release(addr - g.my_base);
}

bool gpu_is_symmetric(uint64_t addr, size_t nbytes) {
  if (!g.active) return false;
  const uint64_t begin = g.my_base + kSysAreaBytes, end = g.my_base + g.size;
  return addr >= begin && addr <= end && nbytes <= end - addr;
}

void gpu_heap_range(uint64_t* begin, uint64_t* end) {
  *begin = g.active ? g.my_base + kSysAreaBytes : 0;
  *end = g.active ? g.my_base + g.size : 0;
}

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

std::string gpu_atomics_problem(int pe) {
  State& s = state();
  if (!g.active || pe < 0 || pe >= s.npes || g.mapped[pe]) return "";
  const Transport* t = s.route[pe];
  return t && t->gpu_atomics_problem ? t->gpu_atomics_problem(s, pe) : "";
}

void gpu_thread_attach() {
  if (!g.active) return;
  PYSHMEM_CU_CHECK(*g.d, "proxy", cuCtxSetCurrent, cuda::gpu().ctx);
}

void gpu_flush_writes(const char* call) {
  if (g.active) cuda::flush_rdma_writes(call);
}

const pyshmem_device_state* gpu_device_state() { return g.active ? &g.state : nullptr; }

void* gpu_pinned_alloc(size_t bytes) {
  if (!g.active) return nullptr;
  void* p = nullptr;
  cuda::GpuScope scope("pyshmem.init");
  // DEVICEMAP: kernels reach it; PORTABLE: from every context. With unified addressing
  // the device address is the host address, so pointers inside the ring work on both.
  if (g.d->cuMemHostAlloc(&p, bytes, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE) != CUDA_SUCCESS) return nullptr;
  return p;
}

void gpu_pinned_free(void* p) {
  if (!p || !g.d) return;
  cuda::GpuScope scope("pyshmem.finalize");
  g.d->cuMemFreeHost(p);
}

void gpu_state_set_proxy(pyshmem_proxy_fifo* fifo) { g.state.proxy = fifo; }

void gpu_teams_setup(const pyshmem_team_desc* table_entries, uint32_t slot_bytes, uint32_t max_teams,
                     uint32_t rounds) {
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
  if (!g.active || !g.state.teams) return;
  const CUdeviceptr at = reinterpret_cast<CUdeviceptr>(g.state.teams) + sizeof(d) * static_cast<size_t>(index);
  cuda::GpuScope scope("team");
  cuda::copy_sync(at, reinterpret_cast<CUdeviceptr>(&d), sizeof d, "team");
}

void gpu_team_slot_clear(int index) {
  if (!g.active || !g.state.teams) return;
  const CUdeviceptr at = g.my_base + g.state.team_pool_offset + size_t(g.team_slot_bytes) * static_cast<size_t>(index);
  cuda::GpuScope scope("team");
  cuda::memset_sync(at, 0, g.team_slot_bytes, "team");
}

uint64_t gpu_host_cell(const char* call) {
  require_init(call);
  gpu_require(call);
  cuda::GpuScope scope(call);
  if (!g.host_cell && !(g.host_cell = gpu_pinned_alloc(64)))
    fail(PYSHMEM_ERR_NOMEM, call, "cannot allocate 64 bytes of pinned host memory (cuMemHostAlloc)");
  return reinterpret_cast<uint64_t>(g.host_cell);
}

void gpu_state_upload(uint64_t handle, bool is_library, const char* call) {
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
