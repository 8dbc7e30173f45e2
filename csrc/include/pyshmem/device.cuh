// pyshmem/device.cuh: the device API of pyshmem, for CUDA kernels and for the CPU build
// (plain C++17 with libcu++ headers on the include path: -I<cuda>/include/cccl).
//
// NVSHMEM kernels port by renaming nvshmem_* to pyshmem::* (typed templates replace the
// per-type names): put(dest, source, nelems, pe), p(dest, value, pe), g(source, pe),
// putmem/getmem, _nbi, iput/iget, put_signal(_nbi), signal_op/fetch/wait_until,
// wait_until/test, wait_until_{all,any,some}[_vector] and test_{all,any,some}[_vector]
// (pyshmem/device/wait_vector.cuh), atomic_*, fence, quiet, barrier_all, sync_all; the
// RMA, signal-put and barrier calls also have _warp/_block variants; teams (team_my_pe/n_pes/translate_pe, sync(team), barrier(team)) and
// collectives over teams (broadcast, fcollect, alltoall, <op>_reduce; pyshmem/device/coll.cuh). Constants: PYSHMEM_CMP_* and PYSHMEM_SIGNAL_* (pyshmem/types.h).
//
// Reach: peers on this node are accessed by direct loads/stores and system-scope
// atomics. Calls to other peers (and to every peer with PYSHMEM_PROXY_ALL=1) become
// requests on this PE's proxy FIFO, executed in order by its proxy thread
// (pyshmem/device/proxy.cuh). With PYSHMEM_DEBUG=1, an out-of-range PE or a
// non-symmetric address traps with a message naming the call.
//
// CPU build: call pyshmem_init() then pyshmem::device_init() in the process.
//
// Everything here lives in the inline namespace pyshmem::device_api: callers write
// pyshmem::quiet(), and the CPU build's symbols stay apart from the host core's
// C++ functions of the same name (pyshmem::quiet() of csrc/host), which a program
// linking the core statically would otherwise get instead (one definition rule).
#pragma once

#include "pyshmem/device/amo.cuh"
#include "pyshmem/device/coll.cuh"
#include "pyshmem/device/common.cuh"
#include "pyshmem/device/proxy.cuh"
#include "pyshmem/device/rma.cuh"
#include "pyshmem/device/sync.cuh"
#include "pyshmem/device/team.cuh"
#include "pyshmem/device/wait_vector.cuh"
