// The CPU build's <cuda.h>: CUDA's driver API subset (pyshmem/cpu_cuda_driver.h: cu*
// calls and CUresult over the CPU CUDA runtime; modules built with pyshmem-nvcc --cpu
// -cubin; virtual memory management) and the runtime subset it builds on.
#pragma once
#include "pyshmem/cpu_cuda_driver.h"
