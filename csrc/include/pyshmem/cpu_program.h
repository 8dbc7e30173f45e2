// pyshmem/cpu_program.h: what `pyshmem-nvcc --cpu` puts before every source of a program
// built for the CPU, as nvcc puts <cuda_runtime.h> before every .cu file: the CPU
// execution of kernels (pyshmem/cpu_kernel.h), launches (pyshmem/cpu_launch.h), CUDA's
// runtime and driver API subsets (<cuda_runtime.h>, <cuda.h>) and NVSHMEM's names
// (<nvshmem.h>, <nvshmemx.h>). pyshmem-nvcc precompiles it once per set of compiler
// flags (a GCC precompiled header in pyshmem's cache), so a program's own code is most
// of what each compile parses.
#pragma once
#include "pyshmem/cpu_kernel.h"
#include "pyshmem/cpu_launch.h"
#include "pyshmem/cpu_cuda_driver.h"
#include <nvshmem.h>
#include <nvshmemx.h>
// The end of the prelude: pyshmem-nvcc keeps what follows this declaration in the
// preprocessed source (pyshmem/_cuda_source.py's after_prelude).
extern "C" int pyshmem_cpu_program_prelude_end;
