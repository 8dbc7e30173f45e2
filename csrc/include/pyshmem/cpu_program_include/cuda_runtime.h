// The CPU build's <cuda_runtime.h>: pyshmem's CPU implementation of a CUDA runtime API
// subset (pyshmem/cpu_cuda_runtime.h), so a .cu program's host code compiles unchanged
// with a host compiler. Kernel launches (<<<...>>>) come from pyshmem's launch glue.
#pragma once
#include "pyshmem/cpu_cuda_runtime.h"
