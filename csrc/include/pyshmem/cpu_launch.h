// pyshmem/cpu_launch.h: kernel launches of a CUDA program built for the CPU
// (pyshmem-nvcc --cpu): `kernel<<<grid, block, shared, stream>>>(args...)`,
// cudaLaunchKernel and cudaLaunchCooperativeKernel. A launch is stream work
// (pyshmem/cpu_cuda_runtime.h): it returns at once, and its grid runs (pyshmem/cpu_grid.h)
// in the stream's order, after the work enqueued before it. The arguments are evaluated
// and copied at the launch, as CUDA copies kernel parameters.
//
// The compiler wrapper rewrites each `callee<<<cfg>>>(args)` into
//   ::pyshmem::cpu::launch(::pyshmem::cpu::chevron("callee", cfg), false,
//                          [=](auto&... a) { callee(a...); }, args)
// (pyshmem/_cuda_source.py), so template kernels, overloads and default arguments resolve
// as in the original call, or, for a kernel the source defines once, into launch_tuple
// with params_of(callee)(args) (below); and it registers every non-template __global__
// function it defines (register_kernel) so that cudaLaunchKernel can find it by address.
//
// Errors: a bad launch shape is returned (and is cudaGetLastError's) as on a GPU:
// cudaErrorInvalidConfiguration, or cudaErrorCooperativeLaunchTooLarge; a kernel that
// fails (a trap, an assert, a device-API check, a block that cannot finish) prints its
// message naming kernel, block and thread, and is the sticky cudaErrorLaunchFailure
// that every later synchronising call returns.
#pragma once

#include <stdio.h>

#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "pyshmem/cpu_cuda_runtime.h"
#include "pyshmem/cpu_grid.h"

namespace pyshmem {
namespace cpu {

// What a launch's <<<grid, block, shared, stream>>> says.
struct LaunchConfig {
  const char* kernel;  // a name with static storage, for messages
  dim3 grid, block;
  size_t shared;
  cudaStream_t stream;
};
inline LaunchConfig chevron(const char* kernel, dim3 grid, dim3 block, size_t shared = 0, cudaStream_t stream = 0) {
  return LaunchConfig{kernel, grid, block, shared, stream};
}

template <class Body, class Args>
struct LaunchWork {
  Body body;
  Args args;
  static void entry(Block* b) { std::apply(static_cast<LaunchWork*>(b->entry_arg)->body, static_cast<LaunchWork*>(b->entry_arg)->args); }
};

// Enqueues a launch of `body` (called by every CUDA thread with the copied arguments) on
// c.stream. Returns cudaSuccess, or the launch's configuration error (also recorded as
// the last error), or the stream's error (an unknown stream).
template <class Body, class... A>
cudaError_t launch(const LaunchConfig& c, bool cooperative, Body body, A&&... args) {
  const char* call = cooperative ? "cudaLaunchCooperativeKernel" : "kernel launch";
  const std::string why = check_launch_shape(c.kernel, c.grid, c.block, cooperative);
  if (!why.empty()) {
    const bool too_many = uint64_t(c.grid.x) * c.grid.y * c.grid.z > kMaxGridBlocks;
    const cudaError_t e = cooperative && too_many ? cudaErrorCooperativeLaunchTooLarge : cudaErrorInvalidConfiguration;
    rt::record_error(e, call, why.c_str());
    return e;
  }
  using Work = LaunchWork<Body, std::tuple<std::decay_t<A>...>>;
  auto work = std::make_shared<Work>(Work{std::move(body), std::tuple<std::decay_t<A>...>(std::forward<A>(args)...)});
  return rt::stream_enqueue(c.stream, call, [work, c, cooperative]() -> cudaError_t {
    const std::string failure = run_grid(&Work::entry, work.get(), c.kernel, c.grid, c.block, c.shared, cooperative);
    if (failure.empty()) return cudaSuccess;
    const pyshmem_device_state* st = ::pyshmem::detail::h_state;
    const std::string what = "a kernel failed on PE " + std::to_string(st ? st->my_pe : -1) + ": " + failure +
                             " (the launch's error, cudaErrorLaunchFailure, is returned by every later "
                             "synchronising call)";
    rt::set_sticky_error(cudaErrorLaunchFailure, what.c_str());
    return cudaErrorLaunchFailure;
  });
}

// A kernel defined once in the source, launched by its name: the arguments convert to
// the parameter types where the launch is written (params_of(kernel)(args...), so 0 and
// NULL pass for pointers as in a call), then launch_tuple launches with them.
template <class... P>
struct ParamsOf {
  std::tuple<std::decay_t<P>...> operator()(P... p) const { return std::tuple<std::decay_t<P>...>(p...); }
};
template <class... P>
ParamsOf<P...> params_of(void (*)(P...)) {
  return {};
}
template <class... P>
cudaError_t launch_tuple(const LaunchConfig& c, bool cooperative, void (*fn)(P...),
                         std::tuple<std::decay_t<P>...> args) {
  return std::apply(
      [&](auto&... a) { return launch(c, cooperative, [fn](auto&... x) { fn(x...); }, a...); }, args);
}

// ---- kernels by address (cudaLaunchKernel's `const void* func`) ----

using LaunchFromArgs = cudaError_t (*)(const void* fn, const LaunchConfig& c, bool cooperative, void** args);
struct KernelEntry {
  const char* name;
  LaunchFromArgs launch;
};
inline std::mutex& kernel_registry_mutex() {
  static std::mutex m;
  return m;
}
inline std::unordered_map<const void*, KernelEntry>& kernel_registry() {
  static std::unordered_map<const void*, KernelEntry> r;
  return r;
}

template <class... P, size_t... I>
cudaError_t launch_from_args_impl(void (*fn)(P...), const LaunchConfig& c, bool cooperative, void** args,
                                  std::index_sequence<I...>) {
  return launch(c, cooperative, [fn](auto&... a) { fn(a...); }, *static_cast<std::decay_t<P>*>(args[I])...);
}
template <class... P>
cudaError_t launch_from_args(const void* fn, const LaunchConfig& c, bool cooperative, void** args) {
  if (sizeof...(P) && !args) {
    rt::record_error(cudaErrorInvalidValue, cooperative ? "cudaLaunchCooperativeKernel" : "cudaLaunchKernel",
                     "args is NULL but the kernel has parameters (pass an array of pointers to each argument)");
    return cudaErrorInvalidValue;
  }
  return launch_from_args_impl(reinterpret_cast<void (*)(P...)>(const_cast<void*>(fn)), c, cooperative, args,
                               std::index_sequence_for<P...>{});
}

// Makes kernel `fn` launchable by its address; returns true (for a static initialiser).
template <class... P>
bool register_kernel(void (*fn)(P...), const char* name) {
  std::lock_guard<std::mutex> lock(kernel_registry_mutex());
  kernel_registry()[reinterpret_cast<const void*>(fn)] = KernelEntry{name, &launch_from_args<P...>};
  return true;
}

inline cudaError_t launch_by_address(const char* call, const void* fn, dim3 grid, dim3 block, void** args,
                                     size_t shared, cudaStream_t stream, bool cooperative) {
  KernelEntry k{nullptr, nullptr};
  {
    std::lock_guard<std::mutex> lock(kernel_registry_mutex());
    auto it = kernel_registry().find(fn);
    if (it != kernel_registry().end()) k = it->second;
  }
  if (!k.launch) {
    rt::record_error(cudaErrorInvalidDeviceFunction, call,
                     "the function is not a __global__ function of this program known by its address (the CPU build "
                     "registers the non-template kernels a source defines; for a template kernel pass it without a "
                     "cast, e.g. cudaLaunchKernel(kernel<float>, ...), or launch it with <<<...>>>)");
    return cudaErrorInvalidDeviceFunction;
  }
  return k.launch(fn, chevron(k.name, grid, block, shared, stream), cooperative, args);
}

}  // namespace cpu
}  // namespace pyshmem

// Launches `func` (a __global__ function of this program) on `stream`; args[i] points at
// argument i. Returns at once (stream order); errors as for <<<...>>> (above), and
// cudaErrorInvalidDeviceFunction for an address that is not a known kernel.
inline cudaError_t cudaLaunchKernel(const void* func, dim3 gridDim_, dim3 blockDim_, void** args,
                                    size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::pyshmem::cpu::launch_by_address("cudaLaunchKernel", func, gridDim_, blockDim_, args, sharedMem, stream,
                                           false);
}
template <class... P>
cudaError_t cudaLaunchKernel(void (*func)(P...), dim3 gridDim_, dim3 blockDim_, void** args, size_t sharedMem = 0,
                             cudaStream_t stream = 0) {
  return ::pyshmem::cpu::launch_from_args<P...>(reinterpret_cast<const void*>(func),
                                                ::pyshmem::cpu::chevron("(cudaLaunchKernel)", gridDim_, blockDim_,
                                                                        sharedMem, stream),
                                                false, args);
}
// As cudaLaunchKernel, with this_grid().sync() allowed: every block is resident at once
// (always so on the CPU build, up to 4096 blocks; more is cudaErrorCooperativeLaunchTooLarge).
inline cudaError_t cudaLaunchCooperativeKernel(const void* func, dim3 gridDim_, dim3 blockDim_, void** args,
                                               size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::pyshmem::cpu::launch_by_address("cudaLaunchCooperativeKernel", func, gridDim_, blockDim_, args, sharedMem,
                                           stream, true);
}
template <class... P>
cudaError_t cudaLaunchCooperativeKernel(void (*func)(P...), dim3 gridDim_, dim3 blockDim_, void** args,
                                        size_t sharedMem = 0, cudaStream_t stream = 0) {
  return ::pyshmem::cpu::launch_from_args<P...>(reinterpret_cast<const void*>(func),
                                                ::pyshmem::cpu::chevron("(cudaLaunchCooperativeKernel)", gridDim_,
                                                                        blockDim_, sharedMem, stream),
                                                true, args);
}
