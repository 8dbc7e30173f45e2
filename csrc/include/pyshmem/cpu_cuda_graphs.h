// pyshmem/cpu_cuda_graphs.h: stream capture and CUDA graphs of pyshmem's CPU CUDA runtime
// (included by pyshmem/cpu_cuda_streams.h, where stream work is diverted into a capture).
//
// CUDA's rules, as they show on the host:
// - cudaStreamBeginCapture(s, mode): work enqueued on s afterwards (kernels, copies,
//   memsets, host functions, NVSHMEM's _on_stream calls) is recorded as graph nodes, not
//   run. An event recorded in a capturing stream and waited for by another stream pulls
//   that stream into the capture (fork); the origin stream waiting for an event of it
//   joins it back. cudaStreamEndCapture(s) on the origin returns the graph; every stream
//   pulled in must have joined back (else cudaErrorStreamCaptureUnjoined).
// - While a capture is active, calls that would synchronise with it fail with
//   cudaErrorStreamCaptureUnsupported and invalidate it (cudaStreamEndCapture then
//   returns cudaErrorStreamCaptureInvalidated): cudaMemcpy, cudaMemset, cudaFree,
//   cudaDeviceSynchronize, synchronising or querying the capturing stream or a captured
//   event, copies to or from pageable memory. Which threads this applies to follows the
//   capture's mode and the calling thread's cudaThreadExchangeStreamCaptureMode:
//   cudaStreamCaptureModeGlobal captures forbid them in every thread, ...ThreadLocal in
//   the capturing thread, ...Relaxed nowhere. Work for the legacy stream while a
//   blocking stream captures would synchronise with it: cudaErrorStreamCaptureImplicit.
//   Waiting for an event recorded outside the capture: cudaErrorStreamCaptureIsolation.
// - cudaGraphInstantiate / cudaGraphLaunch(exec, stream): a launch is stream work that
//   runs the nodes once each, every node after the nodes it depends on, independent
//   nodes at once (each on its own thread), and completes when all did. Kernel
//   arguments are those of the capture. A graph may be launched any number of times.
#pragma once

enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2
};
enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2
};
#define cudaGraphInstantiateFlagAutoFreeOnLaunch 1
#define cudaGraphInstantiateFlagUpload 2
#define cudaGraphInstantiateFlagDeviceLaunch 4
#define cudaGraphInstantiateFlagUseNodePriority 8

// A graph: nodes in capture order, each with the nodes it depends on.
struct CUgraph_st {
  struct Node {
    std::string call;
    std::function<cudaError_t()> work;
    std::vector<size_t> deps;
  };
  std::vector<Node> nodes;
};
struct CUgraphExec_st {
  std::shared_ptr<CUgraph_st> graph;  // a copy of the graph at instantiation
};
struct CUgraphNode_st;
typedef struct CUgraph_st* cudaGraph_t;
typedef struct CUgraphExec_st* cudaGraphExec_t;
typedef struct CUgraphNode_st* cudaGraphNode_t;

namespace pyshmem {
namespace cpu {
namespace rt {

struct Capture {
  std::shared_ptr<CUgraph_st> graph = std::make_shared<CUgraph_st>();
  std::shared_ptr<CUstream_st> origin;
  cudaStreamCaptureMode mode;
  std::thread::id thread;
  unsigned long long id;
  bool invalidated = false;
  std::vector<std::shared_ptr<CUstream_st>> members;  // the origin and the streams forked in
};
// Captures in progress (guarded by state().mu).
inline std::vector<std::shared_ptr<Capture>>& captures() {
  static auto* c = new std::vector<std::shared_ptr<Capture>>;
  return *c;
}
inline thread_local cudaStreamCaptureMode t_capture_mode = cudaStreamCaptureModeGlobal;

// A node of `s`'s capture for `work`, after what s's previous capture work depends on.
// Caller holds state().mu.
inline void capture_append(CUstream_st& s, const char* call, std::function<cudaError_t()> work) {
  auto& nodes = s.capture->graph->nodes;
  nodes.push_back(CUgraph_st::Node{call, std::move(work), s.capture_tails});
  s.capture_tails = {nodes.size() - 1};
}

// The captures a potentially synchronising call of this thread would break (see the
// file comment). Caller holds state().mu.
inline std::vector<std::shared_ptr<Capture>> captures_forbidding_sync() {
  std::vector<std::shared_ptr<Capture>> out;
  if (t_capture_mode == cudaStreamCaptureModeRelaxed) return out;
  for (auto& c : captures())
    if (c->mode == cudaStreamCaptureModeGlobal ||
        (c->mode == cudaStreamCaptureModeThreadLocal && c->thread == std::this_thread::get_id()))
      out.push_back(c);
  return out;
}

// Fails `call` with `err` (recorded, with a message) and invalidates `broken`. Caller
// holds state().mu.
inline cudaError_t refuse_in_capture(const std::vector<std::shared_ptr<Capture>>& broken, cudaError_t err,
                                     const char* call, const char* why) {
  for (auto& c : broken) c->invalidated = true;
  return record_error(err, call, why);
}

// For a call that would synchronise with stream work (cudaMemcpy, cudaDeviceSynchronize
// ...): cudaSuccess, or cudaErrorStreamCaptureUnsupported while a capture forbids it.
// Caller holds state().mu.
inline cudaError_t check_sync_allowed(const char* call) {
  auto broken = captures_forbidding_sync();
  if (broken.empty()) return cudaSuccess;
  return refuse_in_capture(broken, cudaErrorStreamCaptureUnsupported, call,
                           "not allowed while a stream capture is active (it would synchronise with the captured work); "
                           "the capture is invalidated");
}

// Where stream work of `s` goes while captures are active: false when it may be enqueued
// as usual; true when it was captured (*result cudaSuccess) or refused (*result the
// error, recorded). Caller holds state().mu.
inline bool divert_to_capture(CUstream_st& s, const char* call, std::function<cudaError_t()>& work,
                              cudaError_t* result) {
  if (s.capture) {
    if (s.capture->invalidated) {
      *result = record_error(cudaErrorStreamCaptureInvalidated, call,
                             "the stream's capture was invalidated by an earlier error; end it and capture again");
      return true;
    }
    capture_append(s, call, std::move(work));
    *result = cudaSuccess;
    return true;
  }
  if (s.legacy && !captures().empty()) {
    std::vector<std::shared_ptr<Capture>> broken;
    for (auto& c : captures())
      for (auto& m : c->members)
        if (!(m->flags & cudaStreamNonBlocking)) {
          broken.push_back(c);
          break;
        }
    if (!broken.empty()) {
      *result = refuse_in_capture(broken, cudaErrorStreamCaptureImplicit, call,
                                  "work for the legacy stream would synchronise with a blocking stream that is "
                                  "capturing (use a cudaStreamNonBlocking stream); the capture is invalidated");
      return true;
    }
  }
  return false;
}

inline cudaError_t stream_enqueue(cudaStream_t stream, const char* call, std::function<cudaError_t()> work);

}  // namespace rt
}  // namespace cpu
}  // namespace pyshmem

/// Starts capturing `stream` (not the legacy stream, not one already capturing) in
/// `mode` (see the file comment).
inline cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  namespace rt = pyshmem::cpu::rt;
  const char* call = "cudaStreamBeginCapture";
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto s = rt::find_stream(stream);
  if (!s) return rt::record_error(cudaErrorInvalidResourceHandle, call, "unknown stream");
  if (mode < cudaStreamCaptureModeGlobal || mode > cudaStreamCaptureModeRelaxed)
    return rt::record_error(cudaErrorInvalidValue, call, "unknown capture mode");
  if (s->legacy)
    return rt::record_error(cudaErrorStreamCaptureUnsupported, call,
                            "the legacy default stream cannot be captured; capture a stream you created");
  if (s->capture) return rt::record_error(cudaErrorIllegalState, call, "the stream is already capturing");
  static unsigned long long next_id = 1;
  auto c = std::make_shared<rt::Capture>();
  c->origin = s;
  c->mode = mode;
  c->thread = std::this_thread::get_id();
  c->id = next_id++;
  c->members.push_back(s);
  s->capture = c;
  s->capture_tails.clear();
  rt::captures().push_back(c);
  return cudaSuccess;
}

/// Ends the capture begun on `stream` and returns its graph in *pGraph (NULL and
/// cudaErrorStreamCaptureInvalidated when an error invalidated it). Streams forked into
/// the capture must have joined back into `stream`.
inline cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  namespace rt = pyshmem::cpu::rt;
  const char* call = "cudaStreamEndCapture";
  if (!pGraph) return rt::record_error(cudaErrorInvalidValue, call, "pGraph is NULL");
  std::lock_guard<std::mutex> lk(rt::state().mu);
  *pGraph = nullptr;
  auto s = rt::find_stream(stream);
  if (!s) return rt::record_error(cudaErrorInvalidResourceHandle, call, "unknown stream");
  if (!s->capture) return rt::record_error(cudaErrorIllegalState, call, "the stream is not capturing");
  auto c = s->capture;
  if (c->origin != s)
    return rt::record_error(cudaErrorStreamCaptureUnmatched, call,
                            "end the capture on the stream that began it (this one was forked into it)");
  if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != std::this_thread::get_id())
    return rt::record_error(cudaErrorStreamCaptureWrongThread, call,
                            "the capture was begun in another thread (only cudaStreamCaptureModeRelaxed allows that)");
  // Every forked stream's last work must be something the origin's last work follows.
  std::vector<char> reach(c->graph->nodes.size(), 0);
  std::vector<size_t> todo = s->capture_tails;
  while (!todo.empty()) {
    const size_t n = todo.back();
    todo.pop_back();
    if (reach[n]) continue;
    reach[n] = 1;
    for (size_t d : c->graph->nodes[n].deps) todo.push_back(d);
  }
  bool unjoined = false;
  for (auto& m : c->members)
    for (size_t t : m->capture_tails) unjoined = unjoined || !reach[t];
  for (auto& m : c->members) {
    m->capture.reset();
    m->capture_tails.clear();
  }
  auto& all = rt::captures();
  for (size_t i = 0; i < all.size(); ++i)
    if (all[i] == c) {
      all.erase(all.begin() + static_cast<long>(i));
      break;
    }
  if (c->invalidated)
    return rt::record_error(cudaErrorStreamCaptureInvalidated, call,
                            "the capture was invalidated by an error during it (see the earlier message)");
  if (unjoined)
    return rt::record_error(cudaErrorStreamCaptureUnjoined, call,
                            "a stream forked into the capture did not join back into the origin stream (record an "
                            "event on it and make the origin stream wait for it)");
  *pGraph = new CUgraph_st(*c->graph);
  return cudaSuccess;
}

/// Whether `stream` is capturing (cudaStreamCaptureStatusActive, ...Invalidated, ...None).
inline cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus) {
  namespace rt = pyshmem::cpu::rt;
  if (!pCaptureStatus) return rt::record_error(cudaErrorInvalidValue, "cudaStreamIsCapturing", "NULL");
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto s = rt::find_stream(stream);
  if (!s) return rt::record_error(cudaErrorInvalidResourceHandle, "cudaStreamIsCapturing", "unknown stream");
  *pCaptureStatus = !s->capture ? cudaStreamCaptureStatusNone
                    : s->capture->invalidated ? cudaStreamCaptureStatusInvalidated
                                              : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}

/// The capture status of `stream` and, while capturing, the capture's unique id and
/// graph (the dependency outputs are not provided: NULL / 0).
inline cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, cudaStreamCaptureStatus* captureStatus_out,
                                            unsigned long long* id_out = nullptr, cudaGraph_t* graph_out = nullptr,
                                            const cudaGraphNode_t** dependencies_out = nullptr,
                                            size_t* numDependencies_out = nullptr) {
  namespace rt = pyshmem::cpu::rt;
  if (cudaError_t e = cudaStreamIsCapturing(stream, captureStatus_out)) return e;
  std::lock_guard<std::mutex> lk(rt::state().mu);
  auto s = rt::find_stream(stream);
  if (id_out) *id_out = s->capture ? s->capture->id : 0;
  if (graph_out) *graph_out = s->capture ? s->capture->graph.get() : nullptr;
  if (dependencies_out) *dependencies_out = nullptr;
  if (numDependencies_out) *numDependencies_out = 0;
  return cudaSuccess;
}

/// Sets this thread's capture interaction mode (see the file comment); the previous one
/// is returned in *mode.
inline cudaError_t cudaThreadExchangeStreamCaptureMode(cudaStreamCaptureMode* mode) {
  namespace rt = pyshmem::cpu::rt;
  if (!mode || *mode < cudaStreamCaptureModeGlobal || *mode > cudaStreamCaptureModeRelaxed)
    return rt::record_error(cudaErrorInvalidValue, "cudaThreadExchangeStreamCaptureMode", "bad mode");
  const cudaStreamCaptureMode old = rt::t_capture_mode;
  rt::t_capture_mode = *mode;
  *mode = old;
  return cudaSuccess;
}

/// An empty graph (`flags` must be 0).
inline cudaError_t cudaGraphCreate(cudaGraph_t* pGraph, unsigned int flags) {
  if (!pGraph || flags) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaGraphCreate", "bad arguments");
  *pGraph = new CUgraph_st;
  return cudaSuccess;
}
/// The graph's nodes (in *numNodes; their handles are not provided: pass nodes = NULL).
inline cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t* nodes, size_t* numNodes) {
  namespace rt = pyshmem::cpu::rt;
  if (!graph || !numNodes || nodes)
    return rt::record_error(cudaErrorInvalidValue, "cudaGraphGetNodes", "pass nodes = NULL to count the nodes");
  *numNodes = graph->nodes.size();
  return cudaSuccess;
}
/// An executable graph of `graph` as it is now (later changes to `graph` do not reach it).
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, unsigned long long flags = 0) {
  namespace rt = pyshmem::cpu::rt;
  if (!pGraphExec || !graph) return rt::record_error(cudaErrorInvalidValue, "cudaGraphInstantiate", "NULL argument");
  if (flags & ~0xfull) return rt::record_error(cudaErrorInvalidValue, "cudaGraphInstantiate", "unknown flags");
  *pGraphExec = new CUgraphExec_st{std::make_shared<CUgraph_st>(*graph)};
  return cudaSuccess;
}
// CUDA's older form (CUDA 12 keeps it in <cuda_runtime.h>); the error node and log stay empty.
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph, cudaGraphNode_t* pErrorNode,
                                        char* pLogBuffer, size_t bufferSize) {
  if (pErrorNode) *pErrorNode = nullptr;
  if (pLogBuffer && bufferSize) pLogBuffer[0] = 0;
  return cudaGraphInstantiate(pGraphExec, graph, 0ull);
}
inline cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                                 unsigned long long flags) {
  return cudaGraphInstantiate(pGraphExec, graph, flags);
}
/// Nothing to upload: the work runs on this host. cudaSuccess for a valid stream.
inline cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream) {
  namespace rt = pyshmem::cpu::rt;
  if (!graphExec) return rt::record_error(cudaErrorInvalidValue, "cudaGraphUpload", "graphExec is NULL");
  std::lock_guard<std::mutex> lk(rt::state().mu);
  return rt::find_stream(stream) ? cudaSuccess
                                 : rt::record_error(cudaErrorInvalidResourceHandle, "cudaGraphUpload", "unknown stream");
}

/// Stream work that runs the graph's nodes (see the file comment); returns at once. A
/// node's failure is the launch's error (sticky, as a kernel fault is). Launching into a
/// capturing stream captures the whole graph as one node.
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  namespace rt = pyshmem::cpu::rt;
  if (!graphExec) return rt::record_error(cudaErrorInvalidValue, "cudaGraphLaunch", "graphExec is NULL");
  std::shared_ptr<CUgraph_st> g = graphExec->graph;
  return rt::stream_enqueue(stream, "cudaGraphLaunch", [g]() -> cudaError_t {
    const size_t n = g->nodes.size();
    std::vector<cudaError_t> result(n, cudaSuccess);
    std::vector<char> done(n, 0);
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (size_t i = 0; i < n; ++i)
      threads.emplace_back([&, i] {
        {
          std::unique_lock<std::mutex> lk(m);
          cv.wait(lk, [&] {
            for (size_t d : g->nodes[i].deps)
              if (!done[d]) return false;
            return true;
          });
        }
        bool skip = false;
        {
          std::lock_guard<std::mutex> lk(m);
          for (size_t d : g->nodes[i].deps) skip = skip || result[d] != cudaSuccess;
        }
        const cudaError_t e = skip ? cudaErrorLaunchFailure : g->nodes[i].work();
        std::lock_guard<std::mutex> lk(m);
        result[i] = e;
        done[i] = 1;
        cv.notify_all();
      });
    for (auto& t : threads) t.join();
    for (cudaError_t e : result)
      if (e != cudaSuccess) return e;
    return cudaSuccess;
  });
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  if (!graphExec) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaGraphExecDestroy", "NULL");
  delete graphExec;  // a launch in flight holds its own reference to the nodes
  return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (!graph) return pyshmem::cpu::rt::record_error(cudaErrorInvalidValue, "cudaGraphDestroy", "NULL");
  delete graph;
  return cudaSuccess;
}
