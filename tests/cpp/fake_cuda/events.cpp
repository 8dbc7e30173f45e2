// fake_cuda/events.cpp - CUDA events: an event recorded on a stream completes when the
// work enqueued on that stream before the record completed.
//
// Modelled: cuEventCreate (any flags), cuEventRecord (an op on the stream, with that
// stream's ordering rules; recording again replaces the earlier record, as in CUDA),
// cuEventQuery (CUDA_SUCCESS when the latest record completed or there was none,
// CUDA_ERROR_NOT_READY otherwise, or the context's sticky error), cuEventDestroy (at
// once, even with a record pending: that record's op keeps its own reference).
// Not modelled: timing, cuEventSynchronize, cuStreamWaitEvent, IPC events.
#include "fake_cuda.h"

#include <memory>
#include <set>

namespace fakecuda {
namespace {

struct Event {
  std::atomic<uint64_t> recorded{0};  // records so far
  std::atomic<uint64_t> reached{0};   // the latest record whose op ran
};

std::mutex g_events_mutex;
std::map<CUevent, std::shared_ptr<Event>> g_events;  // live handles
uintptr_t g_next_handle = 0xe7e70000u;

std::shared_ptr<Event> find_event(CUevent h) {
  std::lock_guard<std::mutex> lock(g_events_mutex);
  auto it = g_events.find(h);
  return it == g_events.end() ? nullptr : it->second;
}

}  // namespace

CUresult fake_cuEventCreate(CUevent* event, unsigned int flags) {
  REQUIRE_CONTEXT();
  if (event == nullptr) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> lock(g_events_mutex);
  CUevent h = reinterpret_cast<CUevent>(g_next_handle += 0x10);  // never reused
  g_events[h] = std::make_shared<Event>();
  *event = h;
  FAKE_LOG("flags=0x%x event=%p", flags, static_cast<void*>(h));
  return CUDA_SUCCESS;
}

CUresult fake_cuEventRecord(CUevent event, CUstream stream) {
  REQUIRE_CONTEXT();
  FAKE_LOG("event=%p stream=%s", static_cast<void*>(event), stream_text(stream));
  std::shared_ptr<Event> e = find_event(event);
  if (!e || !stream_known(stream)) return CUDA_ERROR_INVALID_HANDLE;
  const uint64_t n = ++e->recorded;
  return enqueue(stream, [e, n] {
    uint64_t seen = e->reached.load();
    while (seen < n && !e->reached.compare_exchange_weak(seen, n)) {
    }
    return CUDA_SUCCESS;
  }, false);
}

CUresult fake_cuEventQuery(CUevent event) {
  REQUIRE_CONTEXT();
  FAKE_LOG("event=%p", static_cast<void*>(event));
  std::shared_ptr<Event> e = find_event(event);
  if (!e) return CUDA_ERROR_INVALID_HANDLE;
  return e->reached.load() >= e->recorded.load() ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult fake_cuEventDestroy(CUevent event) {
  REQUIRE_CONTEXT();
  FAKE_LOG("event=%p", static_cast<void*>(event));
  std::lock_guard<std::mutex> lock(g_events_mutex);
  return g_events.erase(event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

}  // namespace fakecuda
