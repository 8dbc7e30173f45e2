// cuda/gpu_watch.cpp: watched GPU streams, one event each (see cuda/gpu_watch.h).
#include "cuda/gpu_watch.h"

#include <exception>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "core/log.h"
#include "cuda/driver.h"
#include "cuda/gpu_context.h"

namespace pyshmem {
namespace {

struct Watch {
  std::mutex mu;
  bool on = false;
  std::unordered_map<uint64_t, CUevent> in_flight;  // stream -> event after its latest watched work
  std::vector<CUevent> spare;                       // completed events, reused before creating more
};

Watch& watch() {
  static Watch* w = new Watch();  // never destroyed: the proxy may stop during static destruction
  return *w;
}

// Watch::mu held. Never throws: it runs when the proxy stops, at finalize or exit.
void release_all(Watch& w) {
  if (cuda::gpu().d && (!w.in_flight.empty() || !w.spare.empty())) {
    try {
      cuda::GpuScope scope("pyshmem.finalize");
      for (auto& kv : w.in_flight) scope.d().cuEventDestroy(kv.second);
      for (CUevent e : w.spare) scope.d().cuEventDestroy(e);
    } catch (const std::exception& e) {
      log_debug("proxy: releasing the watched streams' events: %s", e.what());
    }
  }
  w.in_flight.clear();
  w.spare.clear();
}

}  // namespace

void gpu_watch_start() {
  Watch& w = watch();
  std::lock_guard<std::mutex> lock(w.mu);
  w.on = true;
}

void gpu_watch_stop() {
  Watch& w = watch();
  std::lock_guard<std::mutex> lock(w.mu);
  w.on = false;
  release_all(w);
}

void gpu_watch_stream(uint64_t stream, const char* call) {
  Watch& w = watch();
  std::lock_guard<std::mutex> lock(w.mu);
  if (!w.on) return;
  const cuda::Driver& d = *cuda::gpu().d;
  const CUstream on = stream ? reinterpret_cast<CUstream>(stream) : CU_STREAM_LEGACY;
  const uint64_t key = reinterpret_cast<uint64_t>(on);
  auto it = w.in_flight.find(key);
  CUevent ev = nullptr;
  if (it != w.in_flight.end()) {
    ev = it->second;  // re-recorded: a query sees the latest record
  } else if (!w.spare.empty()) {
    ev = w.spare.back();
    w.spare.pop_back();
  } else {
    PYSHMEM_CU_CHECK(d, call, cuEventCreate, &ev, CU_EVENT_DISABLE_TIMING);
  }
  const CUresult r = d.cuEventRecord(ev, on);
  if (r != CUDA_SUCCESS) {
    if (it != w.in_flight.end()) w.in_flight.erase(it);
    w.spare.push_back(ev);
    cuda::check(d, r, call, "cuEventRecord");
  }
  w.in_flight[key] = ev;
}

bool gpu_watch_busy() {
  Watch& w = watch();
  std::lock_guard<std::mutex> lock(w.mu);
  if (w.in_flight.empty()) return false;
  const cuda::Driver& d = *cuda::gpu().d;
  for (auto it = w.in_flight.begin(); it != w.in_flight.end();) {
    const CUresult r = d.cuEventQuery(it->second);
    if (r == CUDA_ERROR_NOT_READY) {
      ++it;
      continue;
    }
    if (r != CUDA_SUCCESS) log_debug("proxy: a watched GPU stream failed (CUresult %d); no longer watched", int(r));
    w.spare.push_back(it->second);
    it = w.in_flight.erase(it);
  }
  return !w.in_flight.empty();
}

}  // namespace pyshmem
