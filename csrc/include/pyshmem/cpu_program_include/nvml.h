// The CPU build's <nvml.h>: the NVML subset NVSHMEM programs call, answering for the CPU
// build's devices (pyshmem/cpu_nvml.h).
#pragma once
#include "pyshmem/cpu_nvml.h"
