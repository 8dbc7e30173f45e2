// cuda/gpu_watch.h: the GPU work that may push requests into the proxy's GPU ring.
//
// Why: a GPU kernel cannot wake the proxy thread (device code has no doorbell), so a
// proxy that dozes notices a kernel's request only when its doze ends. The proxy
// therefore polls without dozing while GPU work it was told about is in flight: every
// kernel pyshmem launches (pyshmem.cuda.launch, its GPU collectives) and every stream
// handed to gpu_watch_stream (pyshmem.cuda.watch_stream, nvshmemx_collective_launch).
// Each watched stream holds one CUDA event recorded after its latest watched work; the
// stream is in flight until that event completes (work on one stream completes in
// order, so the latest event covers the earlier ones).
//
// No CUDA headers here: streams travel as integers. In builds without the CUDA headers
// these do nothing.
#pragma once

#include <cstdint>

namespace pyshmem {

// Called by the proxy thread when it has a GPU ring (before any launch can be watched)
// and when it stops: only then is work watched. Stopping releases every event.
void gpu_watch_start();
void gpu_watch_stop();

// Watches the work enqueued on `stream` (a CUstream; 0 is the legacy default stream)
// so far: records an event on it. Does nothing unless watching started (no GPU ring:
// GPU kernels reach every PE by load/store). Call inside pyshmem's context (a
// GpuScope). Throws naming `call` when the driver refuses the event.
void gpu_watch_stream(uint64_t stream, const char* call);

// Proxy thread (attached to pyshmem's context): true while some watched work has not
// completed. Streams whose work completed (or failed: a kernel that trapped will push
// nothing more) are dropped and their events reused.
bool gpu_watch_busy();

}  // namespace pyshmem
