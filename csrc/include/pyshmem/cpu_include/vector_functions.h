// The CPU build's <vector_functions.h>: make_float4 and the other make_* functions, from
// pyshmem/cpu_vector_types.h (which pyshmem/cpu_kernel.h already includes; this lets a
// kernel written for the GPU include CUDA's header unchanged).
#pragma once
#include "pyshmem/cpu_vector_types.h"
