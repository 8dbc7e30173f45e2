// proxy/proxy.h: the proxy thread of a PE.
//
// Device-API calls that cannot reach their PE by load/store (and all of them with
// PYSHMEM_PROXY_ALL=1) are pushed on this PE's FIFO (pyshmem/proxy_fifo.h). One thread
// per PE drains it in order and executes each request through the PE's route in the
// transport table, exactly as the host API would. Host API calls never use the proxy.
#pragma once

#include "proxy/fifo.h"
#include "pyshmem/proxy_fifo.h"

namespace pyshmem {

struct State;

// True when every device-API operation goes through the proxy: PYSHMEM_PROXY_ALL=1, or
// the ordering check (PYSHMEM_ORDER_CHECK=1), which holds the proxy's operations.
bool proxy_all(const State& s);

// Starts the proxy when some peer has no load/store route or proxy_all(s) (else
// does nothing). Called at the end of init, before the device state is filled. With a
// GPU heap (State::gpu_size) and `gpu_memory` (pinned host memory the GPU can reach),
// a second ring takes GPU kernels' requests for PEs whose GPU heap is on another node;
// its requests refer to the GPU heap, and the proxy serves both rings in turn.
void proxy_start(State& s, const RingMemory* gpu_memory);

// Waits (bounded by PYSHMEM_PROXY_TIMEOUT) until every request pushed so far has been
// executed and completed, then stops and joins the thread. Called by finalize before
// the closing barrier, so data a kernel put lands before peers unmap their heaps.
// Throws Error(TIMEOUT) when producers left reserved slots unwritten.
void proxy_stop(State& s);

// Host quiet: waits until every request pushed so far (to either ring) has been executed (the caller
// then quiets the transports, which completes them). Interruptible (Ctrl-C) and
// bounded by PYSHMEM_PROXY_TIMEOUT; throws Error naming `call` on timeout or when the
// proxy failed. Two loads when no request is outstanding; nothing when no proxy runs.
void proxy_wait_executed(State& s, const char* call);

// This PE's ring for host producers (gpu = false) or for GPU kernels (gpu = true), or
// null when there is none.
pyshmem_proxy_fifo* proxy_fifo(const State& s, bool gpu = false);

}  // namespace pyshmem
