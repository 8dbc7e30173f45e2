// host/gpu_memory.cpp: collective allocation in the GPU symmetric heap (the host API's
// side of pyshmem.cuda.empty/zeros and pyshmem_gpu_malloc): the same agreement between
// PEs as host/memory.cpp, over the allocator primitives of cuda/gpu_heap.h.
#include <string>

#include "core/error.h"
#include "core/state.h"
#include "cuda/gpu_heap.h"
#include "host/host.h"

namespace pyshmem {

uint64_t gpu_malloc(size_t size, size_t align, bool clear, const char* call) {
  require_init(call);
  gpu_require(call);
  State& s = state();
  // A PE that fails still takes part in the agreement below, so all PEs fail together.
  std::string err;
  pyshmem_status status = PYSHMEM_ERR_INVALID_ARG;
  if (align && (align & (align - 1))) err = "alignment " + std::to_string(align) + " is not a power of two; pass a power of two";
  collective_check_args(s, call, "GPU allocation size/alignment", describe_request(size, align));
  uint64_t p = 0;
  if (err.empty() && !gpu_heap_allocate(size, align, &p)) {
    status = PYSHMEM_ERR_NOMEM;
    err = "GPU symmetric heap exhausted: requested " + std::to_string(size) + " bytes, " +
          std::to_string(gpu_heap_bytes_free()) + " free of " + std::to_string(gpu_heap_capacity()) +
          ". Raise PYSHMEM_CUDA_SYMMETRIC_SIZE or free GPU arrays you no longer need";
  }
  try {
    // The fill is complete before the agreement: a peer may write here once it returns.
    if (err.empty() && clear) gpu_heap_clear(p, size, call);
    heap_agree(call, "allocate", !err.empty());
  } catch (...) {
    if (err.empty()) gpu_heap_release(p);
    throw;
  }
  if (!err.empty()) fail(status, call, err);
  return p;
}

void gpu_free(uint64_t addr, const char* call) {
  require_init(call);
  gpu_require(call);
  State& s = state();
  uint64_t begin = 0, end = 0;
  gpu_heap_range(&begin, &end);
  const bool live = gpu_heap_size_of(addr) != 0;
  collective_check_args(s, call, "GPU object to free",
                        live ? "the object at GPU heap offset " + std::to_string(addr - begin + kSysAreaBytes)
                             : "an object it rejected");  // offsets from the heap base, as sym_free's
  quiet();  // no PE may still be accessing the object on this PE once all arrive
  heap_agree(call, "free the object", !live);
  if (!live)
    fail(PYSHMEM_ERR_INVALID_ARG, call,
         "the object is not a live symmetric GPU allocation (already freed, or a view into one); free "
         "the array pyshmem.cuda.empty/zeros returned, once");
  gpu_heap_release(addr);
}

}  // namespace pyshmem
