// pyshmem/cpu_kernel.h: compile a CUDA C++ kernel source with a host C++17 compiler, so
// that the same kernel runs on the CPU build of the device API (no GPU).
//
//   g++ -std=c++17 -O2 -shared -fPIC -fstack-clash-protection -x c++
//       -include pyshmem/cpu_kernel.h -I<pyshmem include> -I<cccl include> kernel.cu -o kernel.so
//
// pyshmem.cuda.Module does this for you (after rewriting `extern __shared__` arrays, see
// below) and pyshmem.cuda.launch runs the kernels. Execution model:
//
// - Every block of the grid runs on its own new OS thread, all blocks at once (so
//   blocks may wait for each other's flags and signals), and every CUDA thread of a
//   block is a fiber on that OS thread (pyshmem/cpu_fibers.h, pyshmem/cpu_block.h):
//   threadIdx/blockDim are those of the launch, in 1-D, 2-D and 3-D, up to 1024
//   threads. A fiber runs until it synchronises, in thread order: __syncthreads and its
//   _count/_and/_or forms (a real block barrier), warp intrinsics (the lanes named in
//   the mask meet), the device API's waits (signal_wait_until, wait_until, barriers,
//   quiet and a full proxy FIFO let the block's other threads run), __nanosleep, every
//   64th CUDA atomic function in a row, and the end of the thread; a thread that runs
//   10-20 ms of CPU in the kernel's own code without any of these is preempted
//   (pyshmem/cpu_preempt.h, x86-64 Linux). So a thread spinning on a flag set by
//   another thread of its block makes progress: at once through a device-API wait,
//   __nanosleep or a CUDA atomic function, and by preemption with plain or volatile
//   loads or cuda::atomic_ref (another block's flag works any way: blocks are
//   separate OS threads).
// - PYSHMEM_CPU_SCHEDULE=random:SEED: the next thread to run is chosen at random
//   (seeded, per block), and atomics and data-moving device-API calls switch threads
//   half the time, to expose ordering bugs the fixed order hides.
// - __syncthreads needs every thread of the block: a thread that ended does not count
//   as arrived, and a block left with threads waiting at a barrier that can never
//   complete is reported (kernel, block, threads) instead of hanging. (GPUs differ in
//   whether exited threads count; CUDA makes the kernel undefined either way.)
// - The device API's _warp/_block variants cooperate across the fibers of the warp or
//   block as on a GPU: one proxy request, one signal, the copy shared out.
// - Static __shared__ variables are per block (thread_local of the block's OS thread,
//   a fresh thread per block: zero at the start of every block). `extern __shared__ T
//   name[];` is rewritten by pyshmem.cuda.Module into a reference to the launch's
//   dynamic shared memory (launch(shared_mem=bytes)), per block, zero-filled.
// - Stack per CUDA thread: 64 KiB reserved (PYSHMEM_CPU_KERNEL_STACK or
//   launch(stack_size=)), committed lazily, a guard page below; an overflow is
//   reported with kernel, block and thread before the process ends.
// - CUDA's atomic functions (atomicAdd ... atomicCAS, with _block/_system forms), the
//   integer intrinsics (__popc, __clz, __ffs, __brev, __mulhi ...), warpSize, clock64,
//   __nanosleep (lets the block's other threads run), __ldg, min/max:
//   pyshmem/cpu_intrinsics.h.
// - Warps of 32 lanes: __syncwarp, __shfl*_sync (with width), __ballot/__any/__all_sync,
//   __match_any/_all_sync, __reduce_*_sync and __activemask (pyshmem/cpu_warp.h);
//   <cooperative_groups.h>: blocks, tiles up to 32, coalesced groups, grid sync under
//   launch(cooperative=True) (pyshmem/cpu_include/cooperative_groups.h).
// - Vector types (float4 ... with CUDA's alignment, make_*), __half/__nv_bfloat16
//   (<cuda_fp16.h>, <cuda_bf16.h>), conversion, rounding and fast-math intrinsics:
//   pyshmem/cpu_vector_types.h, cpu_half.h, cpu_math.h.
// - printf (one write() per call), assert and __trap() (the launch raises
//   pyshmem.KernelError naming kernel, block and thread).
// Not available: textures, CUDA runtime API calls from kernels.
#pragma once

#if defined(__CUDACC__)
#error "pyshmem/cpu_kernel.h is for host compilers; compile with nvcc for the GPU without it"
#endif

// assert() in a kernel fails the launch (pyshmem.KernelError) instead of aborting the
// process: C's assert macro calls __assert_fail, renamed here before any header
// declares it, so every later #include <assert.h> (which redefines assert) keeps it.
#define __assert_fail pyshmem_cpu_assert_fail

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>

#include <atomic>
// Before __noinline__ is defined below: libstdc++'s <memory> spells
// __attribute__((__noinline__)), which the macro would break in a later #include.
#include <memory>

// First, before the CUDA keywords below are defined away, so libcu++ and the C++
// library see a plain host build.
#include "pyshmem/device.cuh"
#include "pyshmem/cpu_block.h"
#include "pyshmem/cpu_intrinsics.h"
#include "pyshmem/cpu_warp.h"
#include "pyshmem/cpu_math.h"
#include "pyshmem/cpu_vector_types.h"
#include "pyshmem/cpu_half.h"

// pyshmem-nvcc --cpu preprocesses a program first with PYSHMEM_CPU_PREPROCESS defined,
// so that __global__ and __shared__ reach its source rewriting as written (kernel
// registration, extern __shared__); the compile after it gets these definitions.
#if !defined(PYSHMEM_CPU_PREPROCESS)
#define __global__
#endif
// __device__, __constant__ and __managed__ variables are ordinary globals of the kernel
// library: one per process (= per PE), shared by every block, as on a GPU.
#define __device__
#define __constant__
#define __managed__
#define __host__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
// Per block = per OS thread of the block (see above). Uninitialised on a GPU.
#if !defined(PYSHMEM_CPU_PREPROCESS)
#define __shared__ static thread_local
#endif

// threadIdx, blockIdx, blockDim and gridDim are variables (pyshmem/cpu_fibers.h).

inline void __syncthreads() { ::pyshmem::cpu::fibers::barrier(0); }
inline int __syncthreads_count(int pred) { return ::pyshmem::cpu::fibers::barrier(pred); }
inline int __syncthreads_and(int pred) {
  return ::pyshmem::cpu::fibers::barrier(pred) == static_cast<int>(::pyshmem::cpu::t_block->n);
}
inline int __syncthreads_or(int pred) { return ::pyshmem::cpu::fibers::barrier(pred) != 0; }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_system() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence_block() { std::atomic_signal_fence(std::memory_order_seq_cst); }

// __trap() and __brkpt() end the kernel: the launch raises pyshmem.KernelError.
inline void __trap() { ::pyshmem::cpu::fibers::usage_error("__trap() called"); }
inline void __brkpt() { ::pyshmem::cpu::fibers::usage_error("__brkpt() called (no debugger on the CPU build)"); }

extern "C" {
// Called by assert(): fails the launch naming the assertion, the source line and the
// thread (outside a kernel's threads: prints and aborts, as C's assert does).
__attribute__((weak, visibility("hidden"), noreturn)) void pyshmem_cpu_assert_fail(const char* expr,
                                                                                     const char* file,
                                                                                     unsigned int line,
                                                                                     const char* function) noexcept {
  char what[768];
  snprintf(what, sizeof what, "%s:%u: %s: Assertion `%s' failed", file, line, function, expr);
  if (::pyshmem::cpu::t_block) ::pyshmem::cpu::fibers::usage_error(what);
  fprintf(stderr, "%s\n", what);
  abort();
}

// printf from a kernel thread: formatted whole, then written with one write() to
// standard output, so lines of concurrent threads and blocks never mix mid-line.
__attribute__((weak, visibility("hidden"), format(printf, 1, 2))) int pyshmem_cpu_printf(const char* format,
                                                                                           ...) noexcept {
  char small[512];
  va_list ap;
  va_start(ap, format);
  const int n = vsnprintf(small, sizeof small, format, ap);
  va_end(ap);
  if (n < 0) return n;
  char* text = small;
  if (static_cast<size_t>(n) >= sizeof small) {
    text = static_cast<char*>(malloc(static_cast<size_t>(n) + 1));
    if (!text) return -1;
    va_start(ap, format);
    vsnprintf(text, static_cast<size_t>(n) + 1, format, ap);
    va_end(ap);
  }
  fflush(stdout);  // what host code printed through stdio comes first
  for (size_t done = 0; done < static_cast<size_t>(n);) {
    const ssize_t w = write(1, text + done, static_cast<size_t>(n) - done);
    if (w <= 0) break;
    done += static_cast<size_t>(w);
  }
  if (text != small) free(text);
  return n;
}
}
#define printf pyshmem_cpu_printf

// Entry points the launcher calls (weak: the header may be included by several files
// of one library). Exported even under -fvisibility=hidden. pyshmem_cpu_run_block is
// in pyshmem/cpu_block.h.
extern "C" {
// Binds this library's copy of the device API to the runtime's state (before launches).
__attribute__((weak, visibility("default"))) void pyshmem_cpu_bind_state(const pyshmem_device_state* state) {
  pyshmem::detail::h_state = state;
}
}
