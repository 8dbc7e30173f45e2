// pyshmem/device/host_state.h: where host code finds the device state (the copy the
// runtime filled at init: pyshmem_device_state_get). One inline variable for the whole
// program, shared by the device-API headers (device/common.cuh: the CPU build's kernels
// and host calls) and by the host-only translation units of a program built for the GPU
// (<nvshmem.h> in a .cpp), which get no device code.
#pragma once

#include "pyshmem/device_state.h"

#if !defined(__CUDACC_RTC__)
namespace pyshmem {
inline namespace device_api {
namespace detail {
inline const pyshmem_device_state* h_state = nullptr;
}  // namespace detail
}  // namespace device_api
}  // namespace pyshmem
#endif
