// pyshmem/cpu_cuda_streams.h: streams and events of pyshmem's CPU CUDA runtime
// (included by pyshmem/cpu_cuda_runtime.h; see there for the model).
//
// Every stream is a queue of work items run in order by the stream's worker, an OS
// thread started at its first item. Each item has a sequence number in its stream and
// may depend on (stream, sequence number) pairs of other streams; a worker starts its
// next item once the previous one and every dependency completed. Dependencies give
// CUDA's rules:
// - the legacy default stream (0, cudaStreamLegacy): an item on it depends on all work
//   enqueued so far on every blocking stream, and an item on a blocking stream depends
//   on all work enqueued so far on the legacy stream; cudaStreamNonBlocking streams
//   depend on neither;
// - cudaStreamPerThread is the legacy stream here (as under nvcc's default
//   --default-stream legacy; a per-thread default stream is not modelled);
// - cudaStreamWaitEvent: the next item of the stream depends on the event's record.
// Waiting (workers for dependencies, host threads in synchronising calls) blocks on one
// condition variable, notified whenever any item completes: nothing busy-spins.
#pragma once

namespace pyshmem {
namespace cpu {
namespace rt {
struct Capture;  // pyshmem/cpu_cuda_graphs.h
}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

// The state behind a cudaStream_t (CUDA's opaque handle type).
struct CUstream_st {
  unsigned flags = 0;
  int priority = 0;  // accepted and ignored
  bool legacy = false;
  bool destroyed = false;  // cudaStreamDestroy: no new work; the worker drains and exits
  bool worker = false;     // a worker thread is running for this stream
  uint64_t enqueued = 0;   // sequence number of the last item enqueued
  uint64_t completed = 0;  // ... and of the last one completed (items complete in order)
  struct Item {
    uint64_t seq;
    std::vector<std::pair<std::shared_ptr<CUstream_st>, uint64_t>> deps;
    std::function<cudaError_t()> work;
    std::string call;
  };
  std::deque<Item> queue;
  // While it captures (cudaStreamBeginCapture): the capture, and the graph nodes its next
  // captured work depends on.
  std::shared_ptr<pyshmem::cpu::rt::Capture> capture;
  std::vector<size_t> capture_tails;
};

// The state behind a cudaEvent_t: its last record = (stream, sequence number).
struct CUevent_st {
  unsigned flags = 0;
  std::shared_ptr<CUstream_st> stream;  // null until first recorded
  uint64_t seq = 0;
  std::shared_ptr<std::chrono::steady_clock::time_point> when;  // written by the record item
  // Recorded in a capturing stream: the capture and the nodes the record follows.
  std::shared_ptr<pyshmem::cpu::rt::Capture> capture;
  std::vector<size_t> capture_tails;
};

namespace pyshmem {
namespace cpu {
namespace rt {

// Streams and events by handle (guarded by state().mu). Destroyed streams leave
// `handles` at once but stay in `live` until their worker drained them.
struct Streams {
  std::shared_ptr<CUstream_st> legacy = std::make_shared<CUstream_st>();
  std::unordered_map<CUstream_st*, std::shared_ptr<CUstream_st>> handles;
  std::vector<std::shared_ptr<CUstream_st>> live;
  std::unordered_map<CUevent_st*, std::shared_ptr<CUevent_st>> events;
  Streams() { legacy->legacy = true; }
};
inline Streams& streams() {
  static Streams* s = new Streams;  // never freed: see State
  return *s;
}

using Target = std::pair<std::shared_ptr<CUstream_st>, uint64_t>;
inline bool reached(const std::vector<Target>& ts) {
  for (auto& t : ts)
    if (t.first->completed < t.second) return false;
  return true;
}
inline bool busy(const CUstream_st& s) { return s.completed < s.enqueued; }

// Finds the stream behind `h` (0, cudaStreamLegacy and cudaStreamPerThread: the legacy
// stream). Caller holds state().mu.
inline std::shared_ptr<CUstream_st> find_stream(cudaStream_t h) {
  Streams& S = streams();
  if (h == nullptr || h == cudaStreamLegacy || h == cudaStreamPerThread) return S.legacy;
  auto it = S.handles.find(h);
  return it == S.handles.end() ? nullptr : it->second;
}

// What an item enqueued now on `s` must wait for by the default-stream rules.
inline std::vector<Target> implicit_deps(const CUstream_st& s) {
  Streams& S = streams();
  std::vector<Target> deps;
  if (s.legacy) {
    for (auto& t : S.live)
      if (!(t->flags & cudaStreamNonBlocking) && busy(*t)) deps.emplace_back(t, t->enqueued);
  } else if (!(s.flags & cudaStreamNonBlocking) && busy(*S.legacy)) {
    deps.emplace_back(S.legacy, S.legacy->enqueued);
  }
  return deps;
}

// Everything a host-side synchronisation of `s` waits for (caller holds state().mu):
// its own work, and for the legacy stream also that of every blocking stream.
inline std::vector<Target> sync_targets(const std::shared_ptr<CUstream_st>& s) {
  std::vector<Target> ts{{s, s->enqueued}};
  if (s->legacy)
    for (auto& t : streams().live)
      if (!(t->flags & cudaStreamNonBlocking)) ts.emplace_back(t, t->enqueued);
  return ts;
}

inline void worker_main(std::shared_ptr<CUstream_st> s) {
  State& st = state();
  std::unique_lock<std::mutex> lk(st.mu);
  for (;;) {
    st.cv.wait(lk, [&] {
      if (s->queue.empty()) return s->destroyed;
      auto& front = s->queue.front();
      return s->completed + 1 == front.seq && reached(front.deps);
    });
    if (s->queue.empty()) break;
    CUstream_st::Item item = std::move(s->queue.front());
    s->queue.pop_front();
    item.deps.clear();
    const bool skip = st.sticky != cudaSuccess;  // CUDA runs nothing after a fault
    lk.unlock();
    cudaError_t err = cudaSuccess;
    if (!skip) {
      try {
        err = item.work();
      } catch (...) {
        err = cudaErrorUnknown;
      }
    }
    item.work = nullptr;  // the closure's captures die outside the lock
    if (err != cudaSuccess) {
      std::string m = item.call + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                      ") in asynchronous stream work; later synchronising calls return it";
      set_sticky_error(err, m.c_str());
    }
    lk.lock();
    s->completed = item.seq;
    st.cv.notify_all();
  }
  // Destroyed and drained: retire the stream (its handle was already invalidated).
  Streams& S = streams();
  for (size_t i = 0; i < S.live.size(); ++i)
    if (S.live[i] == s) {
      S.live.erase(S.live.begin() + static_cast<long>(i));
      break;
    }
  s->worker = false;
}

// Enqueues `work` on `s` after `extra` and the implicit dependencies; returns its
// sequence number. Caller holds state().mu.
inline uint64_t enqueue_locked(const std::shared_ptr<CUstream_st>& s, const char* call,
                               std::function<cudaError_t()> work, std::vector<Target> extra = {}) {
  std::vector<Target> deps = implicit_deps(*s);
  for (auto& t : extra) deps.push_back(std::move(t));
  const uint64_t seq = ++s->enqueued;
  s->queue.push_back(CUstream_st::Item{seq, std::move(deps), std::move(work), call});
  if (!s->worker) {
    // Detached on purpose: a worker blocked on the never-freed State must not keep the
    // process alive at exit, nor be joined from a static destructor.
    s->worker = true;
    std::thread(worker_main, s).detach();
  }
  state().cv.notify_all();
  return seq;
}

}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

#include "pyshmem/cpu_cuda_graphs.h"

namespace pyshmem {
namespace cpu {
namespace rt {

/// Enqueues `work` on `stream` in CUDA's order (the stream's own order and the
/// default-stream rules above) and returns at once: cudaSuccess,
/// cudaErrorInvalidResourceHandle for a destroyed or unknown stream, or the sticky
/// error (then nothing is enqueued). The stream's worker runs `work` later; a result
/// other than cudaSuccess becomes the sticky error, with a message naming `call`.
inline cudaError_t stream_enqueue(cudaStream_t stream, const char* call, std::function<cudaError_t()> work) {
  State& st = state();
  std::unique_lock<std::mutex> lk(st.mu);
  if (st.sticky != cudaSuccess) return record_error(st.sticky, call, nullptr);
  auto s = find_stream(stream);
  if (!s) return record_error(cudaErrorInvalidResourceHandle, call, "the stream was destroyed or never created");
  cudaError_t captured;
  if (divert_to_capture(*s, call, work, &captured)) return captured;
  enqueue_locked(s, call, std::move(work));
  return cudaSuccess;
}

// Blocks until every target completed, then returns the sticky error (recorded).
inline cudaError_t wait_targets(std::unique_lock<std::mutex>& lk, const std::vector<Target>& ts, const char* call) {
  state().cv.wait(lk, [&] { return reached(ts); });
  return record_error(state().sticky, call, nullptr);
}

// Synchronous stream-0 work (cudaMemcpy, cudaMemset ...): `fn` runs in the legacy
// stream's order and the host waits for it. When nothing is pending that it must follow,
// it runs on the calling thread (the same order, without a hand-off to the worker).
inline cudaError_t run_sync(const char* call, std::function<void()> fn) {
  State& st = state();
  std::unique_lock<std::mutex> lk(st.mu);
  if (st.sticky != cudaSuccess) return record_error(st.sticky, call, nullptr);
  if (cudaError_t e = check_sync_allowed(call)) return e;
  auto L = streams().legacy;
  if (!busy(*L) && implicit_deps(*L).empty()) {
    const uint64_t seq = ++L->enqueued;  // holds later stream-0 and blocking-stream work back
    lk.unlock();
    fn();
    lk.lock();
    L->completed = seq;
    st.cv.notify_all();
    return record_error(st.sticky, call, nullptr);
  }
  const uint64_t seq = enqueue_locked(L, call, [fn = std::move(fn)] {
    fn();
    return cudaSuccess;
  });
  return wait_targets(lk, {{L, seq}}, call);
}

}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

// ---- Streams --------------------------------------------------------------------------

/// Creates a stream: cudaStreamDefault (synchronises with the legacy default stream) or
/// cudaStreamNonBlocking (does not). `priority` is accepted and ignored (no priorities:
/// see cudaDeviceGetStreamPriorityRange).
inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* pStream, unsigned int flags, int priority) {
  namespace rt = pyshmem::cpu::rt;
  const char* call = "cudaStreamCreate";
  if (!pStream) return rt::record_error(cudaErrorInvalidValue, call, "pStream is NULL");
  if (flags & ~static_cast<unsigned>(cudaStreamNonBlocking))
    return rt::record_error(cudaErrorInvalidValue, call, "unknown stream flags");
  auto s = std::make_shared<CUstream_st>();
  s->flags = flags, s->priority = priority;
  std::lock_guard<std::mutex> lk(rt::state().mu);
  rt::streams().handles.emplace(s.get(), s);
  rt::streams().live.push_back(s);
  *pStream = s.get();
  return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return cudaStreamCreateWithPriority(pStream, flags, 0);
}
inline cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  return cudaStreamCreateWithPriority(pStream, cudaStreamDefault, 0);
}

/// Invalidates the handle at once and returns; work already enqueued still runs, then
/// the stream's resources go. The legacy stream cannot be destroyed
/// (cudaErrorInvalidResourceHandle), nor an unknown handle.
inline cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  namespace rt = pyshmem::cpu::rt;
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto& S = rt::streams();
  auto it = S.handles.find(stream);
  if (it == S.handles.end())
    return rt::record_error(cudaErrorInvalidResourceHandle, "cudaStreamDestroy", "not a stream created here");
  auto s = it->second;
  S.handles.erase(it);
  s->destroyed = true;
  if (!s->worker) {  // never had work: retire now
    for (size_t i = 0; i < S.live.size(); ++i)
      if (S.live[i] == s) {
        S.live.erase(S.live.begin() + static_cast<long>(i));
        break;
      }
  }
  rt::state().cv.notify_all();
  return cudaSuccess;
}

/// Blocks until all work enqueued on `stream` so far completed (for the legacy stream:
/// and all work of the blocking streams). Returns the sticky error if one is set.
inline cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  namespace rt = pyshmem::cpu::rt;
  std::unique_lock<std::mutex> lk(rt::state().mu);
  auto s = rt::find_stream(stream);
  if (!s) return rt::record_error(cudaErrorInvalidResourceHandle, "cudaStreamSynchronize", "unknown stream");
  if (s->capture)
    return rt::refuse_in_capture({s->capture}, cudaErrorStreamCaptureUnsupported, "cudaStreamSynchronize",
                                 "the stream is capturing; its work runs when the graph is launched (the capture is "
                                 "invalidated)");
  return rt::wait_targets(lk, rt::sync_targets(s), "cudaStreamSynchronize");
}

/// cudaSuccess when everything cudaStreamSynchronize would wait for completed,
/// cudaErrorNotReady while not (not an error: the last error is left alone); the sticky
/// error if one is set.
inline cudaError_t cudaStreamQuery(cudaStream_t stream) {
  namespace rt = pyshmem::cpu::rt;
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto s = rt::find_stream(stream);
  if (!s) return rt::record_error(cudaErrorInvalidResourceHandle, "cudaStreamQuery", "unknown stream");
  if (s->capture)
    return rt::refuse_in_capture({s->capture}, cudaErrorStreamCaptureUnsupported, "cudaStreamQuery",
                                 "the stream is capturing (the capture is invalidated)");
  if (rt::state().sticky != cudaSuccess) return rt::record_error(rt::state().sticky, "cudaStreamQuery", nullptr);
  return rt::reached(rt::sync_targets(s)) ? cudaSuccess : cudaErrorNotReady;
}

/// The flags the stream was created with (cudaStreamDefault for the legacy stream).
inline cudaError_t cudaStreamGetFlags(cudaStream_t hStream, unsigned int* flags) {
  namespace rt = pyshmem::cpu::rt;
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto s = rt::find_stream(hStream);
  if (!s) return rt::record_error(cudaErrorInvalidResourceHandle, "cudaStreamGetFlags", "unknown stream");
  if (!flags) return rt::record_error(cudaErrorInvalidValue, "cudaStreamGetFlags", "flags is NULL");
  *flags = s->flags;
  return cudaSuccess;
}

/// Stream work: calls fn(userData) on the stream's worker thread, in stream order, and
/// returns at once. `fn` must not call the CUDA API (as in CUDA). Skipped after a sticky
/// error.
inline cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  if (!fn) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaLaunchHostFunc", "fn is NULL");
  return pyshmem::cpu::rt::stream_enqueue(stream, "cudaLaunchHostFunc", [fn, userData] {
    fn(userData);
    return cudaSuccess;
  });
}

/// Like cudaLaunchHostFunc; the callback gets the stream and cudaSuccess. `flags` must be 0.
inline cudaError_t cudaStreamAddCallback(cudaStream_t stream, cudaStreamCallback_t callback, void* userData,
                                         unsigned int flags) {
  namespace rt = pyshmem::cpu::rt;
  if (!callback || flags) return rt::record_error(cudaErrorInvalidValue, "cudaStreamAddCallback", "NULL callback or flags != 0");
  return rt::stream_enqueue(stream, "cudaStreamAddCallback", [stream, callback, userData] {
    callback(stream, cudaSuccess, userData);
    return cudaSuccess;
  });
}

// ---- Events ---------------------------------------------------------------------------

/// Creates an event (cudaEventDefault, cudaEventBlockingSync, cudaEventDisableTiming;
/// host waits always block). cudaEventInterprocess is cudaErrorNotSupported.
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  namespace rt = pyshmem::cpu::rt;
  if (!event) return rt::record_error(cudaErrorInvalidValue, "cudaEventCreate", "event is NULL");
  if (flags & cudaEventInterprocess) return rt::not_supported("cudaEventCreate", "cudaEventInterprocess events");
  if (flags & ~0x3u) return rt::record_error(cudaErrorInvalidValue, "cudaEventCreate", "unknown event flags");
  auto e = std::make_shared<CUevent_st>();
  e->flags = flags;
  std::lock_guard<std::mutex> lk(rt::state().mu);
  rt::streams().events.emplace(e.get(), e);
  *event = e.get();
  return cudaSuccess;
}
inline cudaError_t cudaEventCreate(cudaEvent_t* event) { return cudaEventCreateWithFlags(event, cudaEventDefault); }
inline cudaError_t cudaEventCreate(cudaEvent_t* event, unsigned int flags) {  // CUDA's C++ overload
  return cudaEventCreateWithFlags(event, flags);
}

namespace pyshmem {
namespace cpu {
namespace rt {
inline std::shared_ptr<CUevent_st> find_event(cudaEvent_t h) {  // caller holds state().mu
  auto it = streams().events.find(h);
  return it == streams().events.end() ? nullptr : it->second;
}
}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

/// Stream work that takes a steady_clock timestamp and completes the event; returns at
/// once. A new record replaces the previous one (waits and queries see the latest).
inline cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0) {
  namespace rt = pyshmem::cpu::rt;
  const char* call = "cudaEventRecord";
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto e = rt::find_event(event);
  if (!e) return rt::record_error(cudaErrorInvalidResourceHandle, call, "unknown event");
  auto s = rt::find_stream(stream);
  if (!s) return rt::record_error(cudaErrorInvalidResourceHandle, call, "unknown stream");
  if (rt::state().sticky != cudaSuccess) return rt::record_error(rt::state().sticky, call, nullptr);
  if (s->capture) {  // a record inside the capture: other streams may wait for it (fork, join)
    e->capture = s->capture;
    e->capture_tails = s->capture_tails;
    return cudaSuccess;
  }
  e->capture.reset();
  auto when = std::make_shared<std::chrono::steady_clock::time_point>();
  e->seq = rt::enqueue_locked(s, call, [when] {
    *when = std::chrono::steady_clock::now();
    return cudaSuccess;
  });
  e->stream = s, e->when = when;
  return cudaSuccess;
}

/// Blocks until the event's last record completed (at once if never recorded); returns
/// the sticky error if one is set.
inline cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  namespace rt = pyshmem::cpu::rt;
  std::unique_lock<std::mutex> lk(rt::state().mu);
  auto e = rt::find_event(event);
  if (!e) return rt::record_error(cudaErrorInvalidResourceHandle, "cudaEventSynchronize", "unknown event");
  if (e->capture)
    return rt::record_error(cudaErrorCapturedEvent, "cudaEventSynchronize",
                            "the event was last recorded in a capturing stream (it completes in graph launches)");
  if (!e->stream) return rt::record_error(rt::state().sticky, "cudaEventSynchronize", nullptr);
  return rt::wait_targets(lk, {{e->stream, e->seq}}, "cudaEventSynchronize");
}

/// cudaSuccess when the last record completed (or there was none), cudaErrorNotReady
/// while not.
inline cudaError_t cudaEventQuery(cudaEvent_t event) {
  namespace rt = pyshmem::cpu::rt;
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto e = rt::find_event(event);
  if (!e) return rt::record_error(cudaErrorInvalidResourceHandle, "cudaEventQuery", "unknown event");
  if (e->capture)
    return rt::record_error(cudaErrorCapturedEvent, "cudaEventQuery",
                            "the event was last recorded in a capturing stream (it completes in graph launches)");
  if (rt::state().sticky != cudaSuccess) return rt::record_error(rt::state().sticky, "cudaEventQuery", nullptr);
  return !e->stream || e->stream->completed >= e->seq ? cudaSuccess : cudaErrorNotReady;
}

/// Milliseconds between the two events' completed records. cudaErrorNotReady while
/// either is pending; cudaErrorInvalidResourceHandle when either was never recorded or
/// was created with cudaEventDisableTiming.
inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  namespace rt = pyshmem::cpu::rt;
  const char* call = "cudaEventElapsedTime";
  if (!ms) return rt::record_error(cudaErrorInvalidValue, call, "ms is NULL");
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto a = rt::find_event(start), b = rt::find_event(end);
  if (!a || !b) return rt::record_error(cudaErrorInvalidResourceHandle, call, "unknown event");
  if (!a->stream || !b->stream)
    return rt::record_error(cudaErrorInvalidResourceHandle, call, "an event was never recorded");
  if ((a->flags | b->flags) & cudaEventDisableTiming)
    return rt::record_error(cudaErrorInvalidResourceHandle, call, "an event was created with cudaEventDisableTiming");
  if (a->stream->completed < a->seq || b->stream->completed < b->seq) return cudaErrorNotReady;
  *ms = std::chrono::duration<float, std::milli>(*b->when - *a->when).count();
  return cudaSuccess;
}

/// Invalidates the handle; a pending record still completes (waits already made on it
/// keep working).
inline cudaError_t cudaEventDestroy(cudaEvent_t event) {
  namespace rt = pyshmem::cpu::rt;
  std::lock_guard<std::mutex> lk(rt::state().mu);
  if (!rt::streams().events.erase(event))
    return rt::record_error(cudaErrorInvalidResourceHandle, "cudaEventDestroy", "unknown event");
  return cudaSuccess;
}

/// Stream work after which `stream`'s later work waits for the event's last record
/// (nothing to wait for if never recorded); returns at once. `flags`:
/// cudaEventWaitDefault (cudaEventWaitExternal is accepted, there is no capture).
inline cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags = 0) {
  namespace rt = pyshmem::cpu::rt;
  const char* call = "cudaStreamWaitEvent";
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto s = rt::find_stream(stream);
  auto e = rt::find_event(event);
  if (!s || !e) return rt::record_error(cudaErrorInvalidResourceHandle, call, "unknown stream or event");
  if (flags & ~static_cast<unsigned>(cudaEventWaitExternal))
    return rt::record_error(cudaErrorInvalidValue, call, "unknown flags");
  if (rt::state().sticky != cudaSuccess) return rt::record_error(rt::state().sticky, call, nullptr);
  if (e->capture) {  // recorded in a capture: s forks into it, or joins what the event follows
    auto& active = rt::captures();
    if (std::find(active.begin(), active.end(), e->capture) == active.end())
      return rt::record_error(cudaErrorCapturedEvent, call, "the event was recorded in a capture that has ended");
    if (s->capture && s->capture != e->capture)
      return rt::refuse_in_capture({s->capture, e->capture}, cudaErrorStreamCaptureMerge, call,
                                   "the stream and the event belong to different captures");
    if (!s->capture) {
      s->capture = e->capture;
      s->capture_tails.clear();
      e->capture->members.push_back(s);
    }
    for (size_t t : e->capture_tails)
      if (std::find(s->capture_tails.begin(), s->capture_tails.end(), t) == s->capture_tails.end())
        s->capture_tails.push_back(t);
    return cudaSuccess;
  }
  if (!e->stream || e->stream->completed >= e->seq) return cudaSuccess;
  if (s->capture)
    return rt::refuse_in_capture({s->capture}, cudaErrorStreamCaptureIsolation, call,
                                 "a capturing stream cannot wait for work outside the capture (the capture is "
                                 "invalidated)");
  // A no-op item that depends on the record; the stream's later items follow it.
  rt::enqueue_locked(s, call, [] { return cudaSuccess; }, {{e->stream, e->seq}});
  return cudaSuccess;
}

/// Blocks until all work enqueued so far on every stream completed; returns the sticky
/// error if one is set.
inline cudaError_t cudaDeviceSynchronize(void) {
  namespace rt = pyshmem::cpu::rt;
  std::unique_lock<std::mutex> lk(rt::state().mu);
  if (cudaError_t e = rt::check_sync_allowed("cudaDeviceSynchronize")) return e;
  std::vector<rt::Target> ts{{rt::streams().legacy, rt::streams().legacy->enqueued}};
  for (auto& s : rt::streams().live) ts.emplace_back(s, s->enqueued);
  return rt::wait_targets(lk, ts, "cudaDeviceSynchronize");
}
