// cuda/gpu_heap_state.h: the state of this PE's GPU heap, shared by the files of the
// CUDA backend (internal to csrc/cuda; needs <cuda.h>).
//
// One object holds it: the heap's VMM mapping (cuda/gpu_heap.cpp), its allocator, the
// device state handed to GPU code (cuda/gpu_device_state.cpp) and the pinned cell of the
// host-API atomics. The runtime reaches it through gpu_heap() only.
#pragma once

#include <cuda.h>

#include <memory>
#include <string>
#include <vector>

#include "cuda/driver.h"
#include "heap/allocator.h"
#include "pyshmem/device_state.h"

namespace pyshmem {

struct State;

struct GpuHeap {
  const cuda::Driver* d = nullptr;
  CUdeviceptr reservation = 0;
  size_t reservation_len = 0;
  size_t stride = 0;  // bytes between slots (= segment size, a multiple of the granularity)
  size_t size = 0;    // bytes of each PE's segment, system area included
  size_t team_bytes = 0;  // at the end of the segment: team slots, then the team table
  uint32_t team_slot_bytes = 0;
  CUdeviceptr my_base = 0;
  std::vector<bool> mapped;  // per PE: its segment is mapped here (same node)
  std::unique_ptr<Allocator> alloc;
  pyshmem_device_state state{};
  void* host_cell = nullptr;  // pinned: results of host-API atomics on GPU arrays
  bool active = false;
  std::string why_not = "not initialised";  // why the GPU is not used (for gpu_describe)
};

inline size_t gpu_round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

// The process's GPU heap (inactive until gpu_heap_create makes it).
GpuHeap& gpu_heap();

// Fills gpu_heap().state for GPU code once the heap is mapped (cuda/gpu_device_state.cpp).
void gpu_device_state_init(const State& s);

}  // namespace pyshmem
