// cuda/gpu_module.h: loading and launching GPU code that uses the device API (cuda
// backend). A module is loaded from a cubin/PTX/fatbin image, and this PE's device
// state is copied into its `pyshmem_d_state` before anything in it runs.
// No CUDA headers here: handles travel as integers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pyshmem {

// Loads `image` (cubin, fatbin or PTX) into this PE's GPU context and uploads the
// device state. Returns the CUmodule. Throws naming `call` (e.g. no pyshmem_d_state).
uint64_t gpu_module_load(const std::string& image, const char* call);

// The CUfunction `name` of a loaded module; throws INVALID_ARG when there is none.
uint64_t gpu_module_function(uint64_t module, const std::string& name, const char* call);

void gpu_module_unload(uint64_t module);

// Launches `function` with the kernel arguments `args` (each the bytes of one
// parameter, in order). stream 0: launches on the legacy default stream (after the
// caller's earlier work there), waits for that stream and reports the kernel's error (a
// device-side trap included); kernels on other streams keep running. Otherwise
// enqueues it on that CUstream and returns. `cooperative`: a cooperative launch
// (cuLaunchCooperativeKernel: all blocks resident at once, this_grid().sync() allowed;
// the driver refuses a grid larger than the GPU holds at once).
void gpu_launch(uint64_t function, const unsigned grid[3], const unsigned block[3], unsigned shared_bytes,
                uint64_t stream, const std::vector<std::string>& args, bool cooperative, const char* call);

// pyshmem's private non-blocking CUstream (see cuda/gpu_context.h), for its own helper
// kernels (the host-API atomics on GPU arrays): they never queue behind user kernels.
uint64_t gpu_private_stream(const char* call);

// Tells the proxy thread that the work enqueued on `stream` (a CUstream, 0: the legacy
// default stream) so far may push requests into its GPU ring (kernels launched by
// Numba or the CUDA runtime, which pyshmem does not see): it polls without dozing until
// that work completes. Nothing to do when there is no GPU ring. Throws naming `call`.
void gpu_watch_user_stream(uint64_t stream, const char* call);

// Waits until the work enqueued on `stream` so far is done; throws with the error of a
// kernel that failed there.
void gpu_stream_synchronize(uint64_t stream, const char* call);

}  // namespace pyshmem
