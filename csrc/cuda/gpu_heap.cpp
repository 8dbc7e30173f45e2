// cuda/gpu_heap.cpp: the GPU symmetric heap over cuMem VMM (see cuda/gpu_heap.h): the
// backend decision, the device choice, the heap's creation and mapping, and the
// allocator's primitives (the collective gpu_malloc/gpu_free are host/gpu_memory.cpp).
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
#include "cuda/gpu_heap_state.h"
#include "heap/heap.h"

namespace pyshmem {

GpuHeap& gpu_heap() {
  // Leaked like state(): late static destructors may still ask whether a GPU heap exists.
  static GpuHeap* heap = new GpuHeap();
  return *heap;
}

void gpu_require(const char* call) {
  if (!gpu_heap().active)
    fail(PYSHMEM_ERR_NOT_IMPLEMENTED, call,
         "no GPU heap: the backend is cpu (" + gpu_heap().why_not +
             "); set PYSHMEM_BACKEND=cuda on a machine with a GPU");
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
  GpuHeap& g = gpu_heap();
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
  GpuHeap& g = gpu_heap();
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

void create(State& s, const std::string& token) {
  GpuHeap& g = gpu_heap();
  pick_device(s);
  cuda::GpuScope scope("pyshmem.init");
  const int device = cuda::gpu().device;
  const CUmemAllocationProp prop = allocation_prop();
  size_t gran = 0;
  PYSHMEM_CU_CHECK(*g.d, "pyshmem.init", cuMemGetAllocationGranularity, &gran, &prop,
                   CU_MEM_ALLOC_GRANULARITY_RECOMMENDED);
  // The team slots and a copy of the team table follow the user heap (team/team.h).
  g.team_bytes = s.team_pool_bytes + s.team_table_bytes;
  g.size = gpu_round_up(kSysAreaBytes + s.config.CUDA_SYMMETRIC_SIZE + g.team_bytes, gran);
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
  gpu_device_state_init(s);
  g.alloc = std::make_unique<Allocator>(kSysAreaBytes, g.size - g.team_bytes);
  g.active = true;
  s.gpu_base = g.my_base;
  s.gpu_size = g.size;
  log_debug("gpu heap: GPU %d (%s, chosen by %s), %zu bytes per PE at 0x%llx", device, cuda::gpu().name.c_str(),
            cuda::gpu().chosen_by.c_str(), g.size, static_cast<unsigned long long>(g.reservation));
}

}  // namespace

void gpu_heap_create(State& s, const std::string& token) {
  GpuHeap& g = gpu_heap();
  const std::string& backend = s.config.BACKEND;
  if (backend == "cpu") {
    g.why_not = "PYSHMEM_BACKEND=cpu";
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
    g.why_not = "PE " + std::to_string(refusing) + ": " + votes[refusing].substr(1);
    if (backend == "cuda") fail(PYSHMEM_ERR_SYSTEM, "pyshmem.init", "PYSHMEM_BACKEND=cuda but " + g.why_not);
    log_debug("backend: cpu (%s)", g.why_not.c_str());
    return;
  }
  create(s, token);
}

void gpu_heap_retire(State& s) {
  GpuHeap& g = gpu_heap();
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

bool gpu_active() { return gpu_heap().active; }

int gpu_device_ordinal() { return gpu_heap().active ? cuda::gpu().device : -1; }

std::string gpu_arch() {
  const GpuHeap& g = gpu_heap();
  if (!g.active) return "";
  CUdevice dev = 0;
  int major = 0, minor = 0;
  PYSHMEM_CU_CHECK(*g.d, "cuda.arch", cuDeviceGet, &dev, cuda::gpu().device);
  PYSHMEM_CU_CHECK(*g.d, "cuda.arch", cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
  PYSHMEM_CU_CHECK(*g.d, "cuda.arch", cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
  return "sm_" + std::to_string(major) + std::to_string(minor);
}

std::string gpu_describe() {
  const GpuHeap& g = gpu_heap();
  if (!g.active) return "cpu (GPU heap not used: " + g.why_not + ")";
  return "cuda: GPU " + std::to_string(cuda::gpu().device) + " (" + cuda::gpu().name + "), driver " +
         std::to_string(g.d->version / 1000) + "." + std::to_string(g.d->version % 1000 / 10) + ", GPU heap " +
         std::to_string(g.size) + " bytes per PE";
}

bool gpu_heap_allocate(size_t size, size_t align, uint64_t* addr) {
  GpuHeap& g = gpu_heap();
  size_t off = 0;
  if (!g.active || !g.alloc->allocate(size, align, &off)) return false;
  *addr = g.my_base + off;
  return true;
}

void gpu_heap_clear(uint64_t addr, size_t nbytes, const char* call) {
  cuda::GpuScope scope(call);
  cuda::memset_sync(static_cast<CUdeviceptr>(addr), 0, nbytes, call);
}

size_t gpu_heap_size_of(uint64_t addr) {
  GpuHeap& g = gpu_heap();
  return gpu_is_symmetric(addr, 0) ? g.alloc->size_of(addr - g.my_base) : 0;
}

void gpu_heap_release(uint64_t addr) {
  GpuHeap& g = gpu_heap();
  g.alloc->release(addr - g.my_base);
}

size_t gpu_heap_bytes_free() { return gpu_heap().active ? gpu_heap().alloc->bytes_free() : 0; }
size_t gpu_heap_capacity() { return gpu_heap().active ? gpu_heap().alloc->capacity() : 0; }

bool gpu_is_symmetric(uint64_t addr, size_t nbytes) {
  const GpuHeap& g = gpu_heap();
  if (!g.active) return false;
  const uint64_t begin = g.my_base + kSysAreaBytes, end = g.my_base + g.size;
  return addr >= begin && addr <= end && nbytes <= end - addr;
}

void gpu_heap_range(uint64_t* begin, uint64_t* end) {
  const GpuHeap& g = gpu_heap();
  *begin = g.active ? g.my_base + kSysAreaBytes : 0;
  *end = g.active ? g.my_base + g.size : 0;
}

}  // namespace pyshmem
