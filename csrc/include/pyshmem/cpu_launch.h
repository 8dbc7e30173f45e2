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

#include <errno.h>
#include <stdio.h>
#include <sys/uio.h>

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
  static void destroy(void* w) { delete static_cast<LaunchWork*>(w); }
};

// The part of every launch that does not depend on the kernel's type (compiled once):
// checks the shape, then enqueues a run of the grid, every CUDA thread calling
// entry(block) with block->entry_arg = work.get(). `work` lives until the run ends.
inline cudaError_t enqueue_grid(const LaunchConfig& c, bool cooperative, std::shared_ptr<void> work,
                                            void (*entry)(Block*)) {
  const char* call = cooperative ? "cudaLaunchCooperativeKernel" : "kernel launch";
  const std::string why = check_launch_shape(c.kernel, c.grid, c.block, cooperative);
  if (!why.empty()) {
    const cudaError_t e = cooperative && too_large_for_residency(c.grid, c.block) ? cudaErrorCooperativeLaunchTooLarge : cudaErrorInvalidConfiguration;
    rt::record_error(e, call, why.c_str());
    return e;
  }
  return rt::stream_enqueue(c.stream, call, [work, entry, c, cooperative]() -> cudaError_t {
    const std::string failure = run_grid(entry, work.get(), c.kernel, c.grid, c.block, c.shared, cooperative);
    if (failure.empty()) return cudaSuccess;
    const pyshmem_device_state* st = ::pyshmem::detail::h_state;
    const std::string what = "a kernel failed on PE " + std::to_string(st ? st->my_pe : -1) + ": " + failure +
                             " (the launch's error, cudaErrorLaunchFailure, is returned by every later "
                             "synchronising call)";
    rt::set_sticky_error(cudaErrorLaunchFailure, what.c_str());
    return cudaErrorLaunchFailure;
  });
}

// Enqueues a launch of `body` (called by every CUDA thread with the copied arguments) on
// c.stream. Returns cudaSuccess, or the launch's configuration error (also recorded as
// the last error), or the stream's error (an unknown stream).
template <class Body, class... A>
cudaError_t launch(const LaunchConfig& c, bool cooperative, Body body, A&&... args) {
  using Work = LaunchWork<Body, std::tuple<std::decay_t<A>...>>;
  // A plain function as the deleter: one shared_ptr control block type for every kernel.
  std::shared_ptr<void> work(new Work{std::move(body), std::tuple<std::decay_t<A>...>(std::forward<A>(args)...)},
                             &Work::destroy);
  return enqueue_grid(c, cooperative, std::move(work), &Work::entry);
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

// ---- kernels by address (cudaLaunchKernel's `const void* func`) and by name ----

using LaunchFromArgs = cudaError_t (*)(const void* fn, const LaunchConfig& c, bool cooperative, void** args);

}  // namespace cpu
}  // namespace pyshmem

// A kernel as a module built with `pyshmem-nvcc --cpu -cubin` hands it to the program that
// loaded it (pyshmem/cpu_cuda_module.h): plain C, because module and program each have
// their own copy of the CPU runtime. The module copies the arguments and runs the whole
// grid in its own code; the program orders the run on its own streams.
struct pyshmem_cpu_kernel_abi {
  const char* name;       // as written: "k", "ns::k", "tk<float, 3>"
  const char* signature;  // its type: "void (*)(int*, int)"
  const void* fn;
  int nparams;
  // A heap copy of the arguments from cuLaunchKernel's kernelParams (args[i] points at
  // argument i), or from its `extra` buffer (CU_LAUNCH_PARAM_BUFFER_POINTER: the
  // arguments packed at their alignments; NULL when `size` does not match).
  void* (*copy_args)(void** args, const char* name);
  void* (*copy_packed)(const void* buffer, size_t size);
  void (*free_args)(void* copy);
  // Runs the grid to its end: dims = grid x, y, z, block x, y, z. 0 = it ran; 1 = it
  // failed, the reason (naming kernel, block and thread) in err.
  int (*run)(const void* fn, const char* name, void* copy, const unsigned* dims, uint64_t shared, int cooperative,
             char* err, size_t errlen);
};

namespace pyshmem {
namespace cpu {

struct KernelEntry {
  const char* name;
  LaunchFromArgs launch;
  pyshmem_cpu_kernel_abi abi;
};
inline std::mutex& kernel_registry_mutex() {
  static std::mutex m;
  return m;
}
inline std::unordered_map<const void*, KernelEntry>& kernel_registry() {
  static std::unordered_map<const void*, KernelEntry> r;
  return r;
}

// Argument `index` of a launch by address, read from args[index] as the CUDA runtime reads
// it. A program whose array is shorter than the kernel's parameter list makes CUDA read
// past it (undefined; on a GPU it often finds a readable pointer there by chance): a
// pointer that cannot be read gives a zero argument and a warning naming the kernel,
// instead of a crash of the host program.
template <class T>
T launch_param(void** args, int index, int nparams, const char* kernel) {
  alignas(T) unsigned char bytes[sizeof(T)];
  const void* from = args[index];
  struct iovec to_v{bytes, sizeof(T)}, from_v{const_cast<void*>(from), sizeof(T)};
  errno = 0;
  if (from && process_vm_readv(getpid(), &to_v, 1, &from_v, 1, 0) == static_cast<ssize_t>(sizeof(T))) {
  } else if (from && errno != EFAULT) {
    memcpy(bytes, from, sizeof(T));  // the system refuses process_vm_readv: read it as CUDA does
  } else {
    memset(bytes, 0, sizeof(T));
    fprintf(stderr,
            "pyshmem: kernel %s: args[%d] is not a readable pointer (the kernel has %d parameters; the argument "
            "array passed to the launch is probably shorter): the parameter is zero\n",
            kernel, index, nparams);
  }
  return *reinterpret_cast<T*>(bytes);
}

template <class... P, size_t... I>
cudaError_t launch_from_args_impl(void (*fn)(P...), const LaunchConfig& c, bool cooperative, void** args,
                                  std::index_sequence<I...>) {
  return launch(c, cooperative, [fn](auto&... a) { fn(a...); },
                launch_param<std::decay_t<P>>(args, static_cast<int>(I), static_cast<int>(sizeof...(P)), c.kernel)...);
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

// The module-side halves of pyshmem_cpu_kernel_abi for a kernel of parameters P...
template <class... P>
struct KernelAbi {
  using Args = std::tuple<std::decay_t<P>...>;
  template <size_t... I>
  static void* copy(void** args, const char* name, std::index_sequence<I...>) {
    return new Args(launch_param<std::decay_t<P>>(args, static_cast<int>(I), static_cast<int>(sizeof...(P)), name)...);
  }
  static void* copy_args(void** args, const char* name) { return copy(args, name, std::index_sequence_for<P...>{}); }
  static void* copy_packed(const void* buffer, size_t size) {
    // The arguments one after another, each at its alignment (CUDA's packing).
    size_t offset = 0;
    bool fits = true;
    auto* out = new Args();
    std::apply(
        [&](auto&... a) {
          (([&](auto& x) {
             offset = (offset + alignof(std::decay_t<decltype(x)>) - 1) / alignof(std::decay_t<decltype(x)>) *
                      alignof(std::decay_t<decltype(x)>);
             if (offset + sizeof x > size) {
               fits = false;
               return;
             }
             memcpy(static_cast<void*>(&x), static_cast<const char*>(buffer) + offset, sizeof x);
             offset += sizeof x;
           })(a),
           ...);
        },
        *out);
    if (!fits) {
      delete out;
      return nullptr;
    }
    return out;
  }
  static void free_args(void* copy) { delete static_cast<Args*>(copy); }
  static void entry(Block* b) {
    auto* w = static_cast<std::pair<void (*)(P...), Args*>*>(b->entry_arg);
    std::apply([&](auto&... a) { w->first(a...); }, *w->second);
  }
  static int run(const void* fn, const char* name, void* copy, const unsigned* d, uint64_t shared, int cooperative,
                 char* err, size_t errlen) {
    std::pair<void (*)(P...), Args*> work{reinterpret_cast<void (*)(P...)>(const_cast<void*>(fn)),
                                          static_cast<Args*>(copy)};
    const std::string failure =
        run_grid(&entry, &work, name, dim3(d[0], d[1], d[2]), dim3(d[3], d[4], d[5]), shared, cooperative != 0);
    if (failure.empty()) return 0;
    snprintf(err, errlen, "%s", failure.c_str());
    return 1;
  }
};

// The text after "F = " (GCC) or "F = &" (Clang) in __PRETTY_FUNCTION__ of
// pretty_of<F>(): the name of F as written, template arguments included.
template <auto F>
const char* pretty_of() {
  return __PRETTY_FUNCTION__;
}
template <class T>
const char* pretty_type_of() {
  return __PRETTY_FUNCTION__;
}
inline const char* pretty_value(const char* pretty, const char* key) {
  const char* at = strstr(pretty, key);
  if (!at) return strdup(pretty);
  at += strlen(key);
  if (*at == '&') ++at;
  const char* end = at + strlen(at);
  while (end > at && (end[-1] == ']' || end[-1] == ' ')) --end;
  const char* semi = static_cast<const char*>(memchr(at, ';', static_cast<size_t>(end - at)));
  if (semi) end = semi;
  return strndup(at, static_cast<size_t>(end - at));  // once per kernel, for the process
}

// Makes kernel `fn` launchable by its address and findable by its name; returns true
// (for a static initialiser).
template <class... P>
bool register_kernel(void (*fn)(P...), const char* name, const char* signature = "") {
  std::lock_guard<std::mutex> lock(kernel_registry_mutex());
#if defined(PYSHMEM_CPU_MODULE)
  pyshmem_cpu_kernel_abi abi{name,
                             signature,
                             reinterpret_cast<const void*>(fn),
                             static_cast<int>(sizeof...(P)),
                             &KernelAbi<P...>::copy_args,
                             &KernelAbi<P...>::copy_packed,
                             &KernelAbi<P...>::free_args,
                             &KernelAbi<P...>::run};
#else
  // A program's own kernels are launched by address and <<<>>>; only a module's
  // (pyshmem-nvcc --cpu -cubin, PYSHMEM_CPU_MODULE) are found by name and run through
  // the ABI, so programs do not compile it for every kernel.
  pyshmem_cpu_kernel_abi abi{name, signature, reinterpret_cast<const void*>(fn), static_cast<int>(sizeof...(P)),
                             nullptr, nullptr, nullptr, nullptr};
#endif
  kernel_registry()[reinterpret_cast<const void*>(fn)] = KernelEntry{name, &launch_from_args<P...>, abi};
  return true;
}

// Registered when a program starts, for every kernel whose body pyshmem-nvcc --cpu
// started with a use of it (pyshmem/_cuda_source.py): every non-template kernel and every
// instantiation of a template kernel.
template <auto F>
inline const bool kernel_registered =
    register_kernel(F, pretty_value(pretty_of<F>(), "F = "), pretty_value(pretty_type_of<decltype(F)>(), "T = "));

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
