// The CPU build's <cuda.h>. In CUDA this is the driver API header (cu* functions,
// CUresult); pyshmem's CPU build has no driver API. Programs often include it only
// alongside the runtime, so it provides the runtime subset (pyshmem/cpu_cuda_runtime.h)
// and nothing more: cu* calls do not compile.
#pragma once
#include "pyshmem/cpu_cuda_runtime.h"
