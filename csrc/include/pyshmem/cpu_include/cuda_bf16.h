// The CPU build's <cuda_bf16.h>: __nv_bfloat16, __nv_bfloat162 and their functions, from
// pyshmem/cpu_half.h (which pyshmem/cpu_kernel.h already includes; this lets a kernel
// written for the GPU include CUDA's header unchanged).
#pragma once
#include "pyshmem/cpu_half.h"
