// The CPU build's <cuda_runtime_api.h>: the same runtime subset as <cuda_runtime.h>
// (pyshmem/cpu_cuda_runtime.h; this build has no separate C-only declarations).
#pragma once
#include "pyshmem/cpu_cuda_runtime.h"
