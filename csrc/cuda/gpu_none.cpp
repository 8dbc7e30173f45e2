// cuda/gpu_none.cpp: the GPU heap and module interfaces in builds without the CUDA headers
// (<cuda.h> was not found at build time): the backend is always cpu.
#include "core/error.h"
#include "core/state.h"
#include "cuda/gpu_heap.h"
#include "cuda/gpu_module.h"
#include "cuda/gpu_watch.h"

namespace pyshmem {
namespace {
const char* kWhy = "pyshmem was built without the CUDA headers (install the CUDA toolkit and reinstall pyshmem)";

[[noreturn]] void not_built(const char* call) {
  fail(PYSHMEM_ERR_NOT_IMPLEMENTED, call, std::string("no GPU heap: ") + kWhy);
}
}  // namespace

void gpu_heap_create(State& s, const std::string&) {
  if (s.config.BACKEND == "cuda")
    fail(PYSHMEM_ERR_NOT_IMPLEMENTED, "pyshmem.init", std::string("PYSHMEM_BACKEND=cuda but ") + kWhy);
}
void gpu_heap_retire(State&) {}
bool gpu_active() { return false; }
int gpu_device_ordinal() { return -1; }
std::string gpu_describe() { return std::string("cpu (") + kWhy + ")"; }
std::string gpu_probe() { return kWhy; }
std::string gpu_arch() { return ""; }
void gpu_require(const char* call) { not_built(call); }
bool gpu_heap_allocate(size_t, size_t, uint64_t*) { return false; }
void gpu_heap_clear(uint64_t, size_t, const char* call) { not_built(call); }
size_t gpu_heap_size_of(uint64_t) { return 0; }
void gpu_heap_release(uint64_t) {}
size_t gpu_heap_bytes_free() { return 0; }
size_t gpu_heap_capacity() { return 0; }
bool gpu_is_symmetric(uint64_t, size_t) { return false; }
void gpu_heap_range(uint64_t* begin, uint64_t* end) { *begin = *end = 0; }
void gpu_put(uint64_t, uint64_t, size_t, int, uint64_t, const char* call) { not_built(call); }
void gpu_get(uint64_t, uint64_t, size_t, int, uint64_t, const char* call) { not_built(call); }
uint64_t gpu_peer_address(uint64_t, int, const char* call) {
  not_built(call);
  return 0;
}
std::string gpu_atomics_problem(int) { return ""; }
void gpu_thread_attach() {}
void gpu_flush_writes(const char*) {}
const pyshmem_device_state* gpu_device_state() { return nullptr; }
void* gpu_pinned_alloc(size_t) { return nullptr; }
void gpu_pinned_free(void*) {}
void gpu_state_set_proxy(pyshmem_proxy_fifo*) {}
void gpu_teams_setup(const pyshmem_team_desc*, uint32_t, uint32_t, uint32_t) {}
void gpu_team_update(int, const pyshmem_team_desc&) {}
void gpu_team_slot_clear(int) {}
uint64_t gpu_host_cell(const char* call) { not_built(call); }
void gpu_state_upload(uint64_t, bool, const char* call) { not_built(call); }
uint64_t gpu_module_load(const std::string&, const char* call) { not_built(call); }
uint64_t gpu_module_function(uint64_t, const std::string&, const char* call) { not_built(call); }
void gpu_module_unload(uint64_t) {}
void gpu_launch(uint64_t, const unsigned*, const unsigned*, unsigned, uint64_t, const std::vector<std::string>&,
                bool, const char* call) {
  not_built(call);
}
uint64_t gpu_private_stream(const char* call) { not_built(call); }
void gpu_stream_synchronize(uint64_t, const char* call) { not_built(call); }
void gpu_watch_user_stream(uint64_t, const char* call) { not_built(call); }
void gpu_watch_start() {}
void gpu_watch_stop() {}
void gpu_watch_stream(uint64_t, const char*) {}
bool gpu_watch_busy() { return false; }

}  // namespace pyshmem
