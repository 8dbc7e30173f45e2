// pyshmem/cpu_grid.h: runs a whole CPU kernel launch from C++ (the launches of a CUDA
// program built for the CPU: `kernel<<<grid, block>>>(...)`, cudaLaunchKernel,
// nvshmemx_collective_launch; see pyshmem/cpu_launch.h). The execution model is the one
// pyshmem.cuda.launch gives Python (pyshmem/cpu_kernel.h): every block on its own new OS
// thread, all blocks at once, the block's CUDA threads as fibers (run_block in
// pyshmem/cpu_block.h); PYSHMEM_CPU_KERNEL_STACK and PYSHMEM_CPU_SCHEDULE apply.
#pragma once

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <array>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pyshmem/cpu_block.h"
#include "pyshmem/cpu_cuda_runtime.h"  // the residency limits the occupancy answers use

namespace pyshmem {
namespace cpu {

// Blocks one launch may have (each is an OS thread); pyshmem/_cpu_kernels.py's MAX_BLOCKS.
constexpr uint64_t kMaxGridBlocks = 4096;
constexpr uint64_t kDefaultStackBytes = 64 * 1024;

// PYSHMEM_CPU_KERNEL_STACK (bytes, with K, M or G; 16 KiB to 1 GiB) into *out; returns
// the error message, or "" when the value is good (or unset: the default).
inline std::string stack_setting(uint64_t* out) {
  *out = kDefaultStackBytes;
  const char* text = getenv("PYSHMEM_CPU_KERNEL_STACK");
  if (!text || !*text) return "";
  char* end = nullptr;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  while (*end == ' ') ++end;
  const char unit = static_cast<char>(*end | 0x20);
  if (unit == 'k' || unit == 'm' || unit == 'g') {
    v <<= unit == 'k' ? 10 : unit == 'm' ? 20 : 30;
    ++end;
    if ((*end | 0x20) == 'i') ++end;
    if ((*end | 0x20) == 'b') ++end;
  }
  if (errno || end == text || *end || v < 16 * 1024 || v > (1ull << 30))
    return std::string("PYSHMEM_CPU_KERNEL_STACK=") + text + " is not a size from 16 KiB to 1 GiB (bytes, with K, M or G)";
  *out = v;
  return "";
}

// PYSHMEM_CPU_SCHEDULE: "fixed" (or unset) -> kind 0; "random:SEED" -> kind 1.
inline std::string schedule_setting(uint32_t* kind, uint64_t* seed) {
  *kind = 0;
  *seed = 0;
  const char* text = getenv("PYSHMEM_CPU_SCHEDULE");
  if (!text || !*text || strcmp(text, "fixed") == 0) return "";
  char* end = nullptr;
  errno = 0;
  if (strncmp(text, "random:", 7) == 0 && text[7] >= '0' && text[7] <= '9') {
    const unsigned long long v = strtoull(text + 7, &end, 10);
    if (!errno && !*end) {
      *kind = 1;
      *seed = v;
      return "";
    }
  }
  return std::string("PYSHMEM_CPU_SCHEDULE=") + text + " is not 'fixed' or 'random:SEED' (SEED below 2**64)";
}

// Whether a grid is too large for all its blocks to be resident at once (a cooperative
// launch of it is cudaErrorCooperativeLaunchTooLarge).
inline bool too_large_for_residency(dim3 grid, dim3 block) {
  const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z, threads = uint64_t(block.x) * block.y * block.z;
  return blocks > kMaxGridBlocks || blocks * threads > static_cast<uint64_t>(rt::kMaxResidentThreads);
}

// Checks a launch's shape as CUDA does; returns "" or why it cannot launch.
inline std::string check_launch_shape(const char* kernel, dim3 grid, dim3 block, bool cooperative) {
  char why[320];
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  if (!threads || !blocks) {
    snprintf(why, sizeof why, "kernel %s: launch with an empty grid (%u,%u,%u) or block (%u,%u,%u)", kernel, grid.x,
             grid.y, grid.z, block.x, block.y, block.z);
  } else if (threads > 1024 || block.z > 64) {
    snprintf(why, sizeof why, "kernel %s: a block of (%u,%u,%u) threads; at most 1024 threads, z at most 64", kernel,
             block.x, block.y, block.z);
  } else if (cooperative && blocks * threads > static_cast<uint64_t>(rt::kMaxResidentThreads)) {
    snprintf(why, sizeof why,
             "kernel %s: %llu blocks of %llu threads; a cooperative launch's blocks must all be resident, and the CPU "
             "build keeps at most %d CUDA threads resident (cudaOccupancyMaxActiveBlocksPerMultiprocessor and "
             "nvshmemx_collective_launch_query_gridsize say how many blocks)",
             kernel, static_cast<unsigned long long>(blocks), static_cast<unsigned long long>(threads),
             rt::kMaxResidentThreads);
  } else if (blocks > kMaxGridBlocks) {
    snprintf(why, sizeof why,
             "kernel %s: %llu blocks; the CPU build runs every block of a launch at once on its own OS thread, at "
             "most %llu%s",
             kernel, static_cast<unsigned long long>(blocks), static_cast<unsigned long long>(kMaxGridBlocks),
             cooperative ? " (a cooperative launch's blocks must all be resident)" : "");
  } else {
    return "";
  }
  return why;
}

// Runs one launch to its end on the calling thread (its blocks on new threads): every
// CUDA thread calls entry(block), with block->entry_arg = entry_arg. Returns "" or the
// failure (a block that cannot finish, a misused intrinsic, a failed assert, __trap()
// or device-API check), naming kernel, block and thread.
inline std::string run_grid(void (*entry)(Block*), void* entry_arg, const char* kernel, dim3 grid, dim3 block,
                            uint64_t shared_bytes, bool cooperative) {
  std::string why = check_launch_shape(kernel, grid, block, cooperative);
  uint64_t stack = 0;
  Grid g{};
  if (why.empty()) why = stack_setting(&stack);
  if (why.empty()) why = schedule_setting(&g.schedule, &g.seed);
  if (!why.empty()) return why;
  std::vector<std::array<unsigned, 9>> coords;
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x)
        coords.push_back({x, y, z, grid.x, grid.y, grid.z, block.x, block.y, block.z});
  g.blocks = static_cast<uint32_t>(coords.size());
  g.cooperative = cooperative;
  if (g.schedule) std::shuffle(coords.begin(), coords.end(), std::mt19937_64(g.seed));  // start order too
  std::vector<std::string> errors(coords.size());
  std::vector<std::thread> threads;
  threads.reserve(coords.size());
  fflush(stdout);  // a kernel's printf writes to file descriptor 1 directly
  // A new thread for every block, one block included: static __shared__ variables are
  // thread_local, so a block never sees another block's (or launch's) values.
  for (size_t i = 0; i < coords.size(); ++i)
    threads.emplace_back([&, i] {
      char err[4096];
      if (run_block(entry, entry_arg, kernel, coords[i].data(), shared_bytes, stack, &g, err, sizeof err) == 1)
        errors[i] = err;
    });
  for (std::thread& t : threads) t.join();
  size_t failed = 0;
  for (const std::string& e : errors) failed += !e.empty();
  for (const std::string& e : errors)
    if (!e.empty())
      return failed > 1 ? e + " (and " + std::to_string(failed - 1) + " more blocks)" : e;
  return "";
}

}  // namespace cpu
}  // namespace pyshmem
