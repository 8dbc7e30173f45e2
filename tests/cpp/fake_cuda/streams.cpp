// fake_cuda/streams.cpp - asynchronous execution: streams, copies, memsets, syncs.
//
// Each stream is a FIFO of ops run in order by that stream's own worker thread, so an
// op that blocks one stream (a fake kernel spinning on a flag) does not block the
// others. Before it runs, an op sleeps a random delay in [0, FAKE_CUDA_DELAY_US] us.
//
// Legacy-stream serialisation, as in CUDA: an op enqueued on the legacy stream (handle 0
// or CU_STREAM_LEGACY) does not start before every op enqueued earlier on any blocking
// stream (created without CU_STREAM_NON_BLOCKING, and CU_STREAM_PER_THREAD) completed;
// an op enqueued on a blocking stream does not start before every op enqueued earlier on
// the legacy stream completed. Non-blocking streams are ordered only with themselves.
// Each op captures, at enqueue time, the streams it waits for and how many ops each had
// enqueued then (a "ticket"); ops of one stream complete in order, so "stream S's
// first k ops completed" is S.completed >= k.
//
// One legacy stream and one per-thread stream serve the whole process (all devices).
//
// FAKE_CUDA_SYNC=1: no worker threads; every op runs on the calling thread when it is
// enqueued (the old, fully synchronous fake).
#include "fake_cuda.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <thread>
#include <vector>

namespace fakecuda {
namespace {

struct Stream;

struct Dep {
  std::shared_ptr<Stream> stream;
  uint64_t ticket;  // wait until stream->completed >= ticket
};

struct Op {
  Work work;
  std::vector<Dep> deps;
  int dev;  // device of the context it was enqueued from (for its sticky error)
};

struct Stream {
  uintptr_t handle = 0;
  unsigned flags = 0;
  bool legacy = false;
  bool blocking = true;  // ordered with the legacy stream
  int serial = 0;
  // Guarded by Engine::mu:
  uint64_t enqueued = 0;
  uint64_t completed = 0;
  std::deque<Op> queue;
  bool worker_started = false;
  bool stopping = false;
  // Only the worker thread touches it:
  std::mt19937_64 rng;
};

struct Engine {
  std::mutex mu;
  std::condition_variable cv;  // any stream progressed, or any op was enqueued
  std::shared_ptr<Stream> legacy = std::make_shared<Stream>();
  std::shared_ptr<Stream> per_thread = std::make_shared<Stream>();
  std::map<uintptr_t, std::shared_ptr<Stream>> created;  // cuStreamCreate handles
  int pending = 0;
  int next_serial = 2;
  bool sync = false;
  long delay_us = 2000;
  uint64_t seed = 0;

  Engine() {
    long v = 0;
    sync = env_int("FAKE_CUDA_SYNC", &v) && v != 0;
    if (env_int("FAKE_CUDA_DELAY_US", &v) && v >= 0) delay_us = v;
    seed = env_int("FAKE_CUDA_SEED", &v) ? static_cast<uint64_t>(v) : static_cast<uint64_t>(::getpid());
    legacy->legacy = true;
    legacy->serial = 0;
    per_thread->serial = 1;
    per_thread->handle = reinterpret_cast<uintptr_t>(CU_STREAM_PER_THREAD);
  }
};

// Never destroyed: detached worker threads may still use it while the process exits.
Engine& engine() {
  static Engine* e = new Engine();
  return *e;
}

std::atomic<int> g_sticky[kMaxDevices];

// Engine::mu held.
std::shared_ptr<Stream> find(Engine& e, CUstream h) {
  uintptr_t v = reinterpret_cast<uintptr_t>(h);
  if (v == 0 || h == CU_STREAM_LEGACY) return e.legacy;
  if (h == CU_STREAM_PER_THREAD) return e.per_thread;
  auto it = e.created.find(v);
  return it == e.created.end() ? nullptr : it->second;
}

bool deps_done(const Op& op) {
  for (const Dep& d : op.deps)
    if (d.stream->completed < d.ticket) return false;
  return true;
}

void worker(std::shared_ptr<Stream> s) {
  Engine& e = engine();
  std::uniform_int_distribution<long> delay(0, e.delay_us);
  std::unique_lock<std::mutex> lock(e.mu);
  for (;;) {
    e.cv.wait(lock, [&] { return s->queue.empty() ? s->stopping : deps_done(s->queue.front()); });
    if (s->queue.empty()) return;  // destroyed, and nothing left
    Op op = std::move(s->queue.front());
    s->queue.pop_front();
    lock.unlock();
    if (e.delay_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(delay(s->rng)));
    CUresult r = op.work();
    if (r != CUDA_SUCCESS) set_sticky_error(op.dev, r);
    op.work = nullptr;  // free what it captured (a snapshot) before taking the lock
    lock.lock();
    ++s->completed;
    --e.pending;
    e.cv.notify_all();
  }
}

// Engine::mu held.
void start_worker(Engine& e, const std::shared_ptr<Stream>& s) {
  if (s->worker_started) return;
  s->worker_started = true;
  s->rng.seed(e.seed * 1000003u + static_cast<uint64_t>(s->serial));
  std::thread(worker, s).detach();
}

// Engine::mu held: what an op enqueued now on s must wait for.
std::vector<Dep> deps_for(Engine& e, const Stream& s) {
  std::vector<Dep> deps;
  auto add = [&](const std::shared_ptr<Stream>& other) {
    if (other->completed < other->enqueued) deps.push_back(Dep{other, other->enqueued});
  };
  if (s.legacy) {
    add(e.per_thread);
    for (auto& kv : e.created)
      if (kv.second->blocking) add(kv.second);
  } else if (s.blocking) {
    add(e.legacy);
  }
  return deps;
}

// Engine::mu held (through `lock`): waits until each stream reached its ticket.
void wait_tickets(Engine& e, std::unique_lock<std::mutex>& lock, const std::vector<Dep>& tickets) {
  e.cv.wait(lock, [&] {
    for (const Dep& d : tickets)
      if (d.stream->completed < d.ticket) return false;
    return true;
  });
}

// Engine::mu held: every stream with what it has enqueued so far.
std::vector<Dep> all_tickets(Engine& e) {
  std::vector<Dep> t{Dep{e.legacy, e.legacy->enqueued}, Dep{e.per_thread, e.per_thread->enqueued}};
  for (auto& kv : e.created) t.push_back(Dep{kv.second, kv.second->enqueued});
  return t;
}

}  // namespace

CUresult sticky_error(int dev) {
  if (dev < 0 || dev >= kMaxDevices) return CUDA_SUCCESS;
  return static_cast<CUresult>(g_sticky[dev].load());
}

void set_sticky_error(int dev, CUresult r) {
  if (dev < 0 || dev >= kMaxDevices) return;
  int expected = CUDA_SUCCESS;
  g_sticky[dev].compare_exchange_strong(expected, static_cast<int>(r));  // the first error sticks
}

int pending_ops() {
  Engine& e = engine();
  std::lock_guard<std::mutex> lock(e.mu);
  return e.pending;
}

bool stream_known(CUstream s) {
  Engine& e = engine();
  std::lock_guard<std::mutex> lock(e.mu);
  return find(e, s) != nullptr;
}

CUresult enqueue(CUstream h, Work work, bool wait) {
  const int dev = current_device();
  Engine& e = engine();
  if (e.sync) {
    CUresult r = work();
    if (r != CUDA_SUCCESS) set_sticky_error(dev, r);
    return sticky_error(dev);
  }
  std::unique_lock<std::mutex> lock(e.mu);
  std::shared_ptr<Stream> s = find(e, h);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  start_worker(e, s);
  s->queue.push_back(Op{std::move(work), deps_for(e, *s), dev});
  const uint64_t ticket = ++s->enqueued;
  ++e.pending;
  e.cv.notify_all();
  if (!wait) return CUDA_SUCCESS;
  wait_tickets(e, lock, {Dep{s, ticket}});
  return sticky_error(dev);
}

void drain_all() {
  Engine& e = engine();
  std::unique_lock<std::mutex> lock(e.mu);
  wait_tickets(e, lock, all_tickets(e));
}

// ---- streams ------------------------------------------------------------------

CUresult fake_cuStreamCreate(CUstream* stream, unsigned int flags) {
  CUresult r = need_context();
  if (r != CUDA_SUCCESS) return r;
  if (stream == nullptr || (flags & ~unsigned{CU_STREAM_NON_BLOCKING}) != 0) return CUDA_ERROR_INVALID_VALUE;
  Engine& e = engine();
  std::lock_guard<std::mutex> lock(e.mu);
  auto s = std::make_shared<Stream>();
  s->serial = e.next_serial++;
  s->handle = 0x5eed0000u + static_cast<uintptr_t>(s->serial) * 0x100u;  // never reused
  s->flags = flags;
  s->blocking = (flags & CU_STREAM_NON_BLOCKING) == 0;
  e.created[s->handle] = s;
  *stream = reinterpret_cast<CUstream>(s->handle);
  FAKE_LOG("flags=0x%x stream=%s", flags, stream_text(*stream));
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamDestroy(CUstream stream) {
  CUresult r = need_context();
  FAKE_LOG("stream=%s", stream_text(stream));
  if (r != CUDA_SUCCESS) return r;
  Engine& e = engine();
  std::unique_lock<std::mutex> lock(e.mu);
  auto it = e.created.find(reinterpret_cast<uintptr_t>(stream));
  if (it == e.created.end()) return CUDA_ERROR_INVALID_HANDLE;  // also 0, LEGACY, PER_THREAD
  std::shared_ptr<Stream> s = it->second;
  wait_tickets(e, lock, {Dep{s, s->enqueued}});  // let pending work finish first
  e.created.erase(reinterpret_cast<uintptr_t>(stream));
  s->stopping = true;
  e.cv.notify_all();
  return CUDA_SUCCESS;
}

CUresult fake_cuStreamSynchronize(CUstream stream) {
  CUresult r = need_context();
  FAKE_LOG("stream=%s", stream_text(stream));
  if (r != CUDA_SUCCESS && r != sticky_error(current_device())) return r;
  Engine& e = engine();
  std::unique_lock<std::mutex> lock(e.mu);
  std::shared_ptr<Stream> s = find(e, stream);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  wait_tickets(e, lock, {Dep{s, s->enqueued}});
  return sticky_error(current_device());
}

CUresult fake_cuStreamQuery(CUstream stream) {
  CUresult r = need_context();
  FAKE_LOG("stream=%s", stream_text(stream));
  if (r != CUDA_SUCCESS) return r;
  Engine& e = engine();
  std::lock_guard<std::mutex> lock(e.mu);
  std::shared_ptr<Stream> s = find(e, stream);
  if (!s) return CUDA_ERROR_INVALID_HANDLE;
  return s->completed == s->enqueued ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult fake_cuCtxSynchronize() {
  CUresult r = need_context();
  if (r != CUDA_SUCCESS && r != sticky_error(current_device())) return r;
  Engine& e = engine();
  std::unique_lock<std::mutex> lock(e.mu);
  wait_tickets(e, lock, all_tickets(e));
  return sticky_error(current_device());
}

// ---- copies and memsets -----------------------------------------------------------

namespace {

const char* where_text(Where w) {
  switch (w) {
    case Where::kDevice: return "D";
    case Where::kPinned: return "H-pinned";
    default: return "H-pageable";
  }
}

// One copy. `async_api`: cuMemcpyAsync (on `stream`) rather than a synchronous call
// (always on the legacy stream). Which calls wait is CUDA's "API synchronization
// behavior" (see the table at the top of fake_cuda_driver.cpp).
CUresult copy(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream, bool async_api) {
  CUresult r = need_context();
  if (r != CUDA_SUCCESS) return r;
  const Where to = classify(dst, n), from = classify(src, n);
  const char* kind;
  bool wait = false, snapshot = false;
  if (to != Where::kDevice && from != Where::kDevice) {
    kind = "HtoH";
  } else if (to != Where::kDevice) {
    kind = "DtoH";
    wait = !async_api || to == Where::kPageable;
  } else if (from == Where::kDevice) {
    kind = "DtoD";
  } else if (from == Where::kPageable) {
    kind = "HtoD-pageable";
    snapshot = true;  // the caller may reuse its buffer as soon as we return
  } else {
    kind = "HtoD-pinned";
    wait = !async_api;
  }
  if (engine().sync) wait = true;
  FAKE_LOG("stream=%s kind=%s bytes=%zu dst=0x%llx src=0x%llx wait=%d", stream_text(stream), kind, n,
             static_cast<unsigned long long>(dst), static_cast<unsigned long long>(src),
             std::strcmp(kind, "HtoH") == 0 ? 1 : wait);
  if (!stream_known(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (std::strcmp(kind, "HtoH") == 0) {
    if (n != 0) std::memmove(host(dst), host(src), n);
    return CUDA_SUCCESS;
  }
  if (n == 0) return CUDA_SUCCESS;
  if (snapshot) {
    auto bytes = std::make_shared<std::vector<unsigned char>>(static_cast<unsigned char*>(host(src)),
                                                               static_cast<unsigned char*>(host(src)) + n);
    return enqueue(stream, [dst, bytes] {
      std::memcpy(host(dst), bytes->data(), bytes->size());
      return CUDA_SUCCESS;
    }, wait);
  }
  return enqueue(stream, [dst, src, n] {
    std::memmove(host(dst), host(src), n);
    return CUDA_SUCCESS;
  }, wait);
}

// cuMemsetD8 (async_api false: legacy stream; returns at once for device memory and
// once done for host memory) and cuMemsetD8Async (enqueued on `stream`).
CUresult memset_d8(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream, bool async_api) {
  CUresult r = need_context();
  if (r != CUDA_SUCCESS) return r;
  const Where to = classify(dst, n);
  const bool wait = engine().sync || (!async_api && to != Where::kDevice);
  FAKE_LOG("stream=%s kind=%s bytes=%zu dst=0x%llx value=0x%02x wait=%d", stream_text(stream), where_text(to), n,
             static_cast<unsigned long long>(dst), value, wait);
  if (!stream_known(stream)) return CUDA_ERROR_INVALID_HANDLE;
  if (n == 0) return CUDA_SUCCESS;
  return enqueue(stream, [dst, value, n] {
    std::memset(host(dst), value, n);
    return CUDA_SUCCESS;
  }, wait);
}

}  // namespace

CUresult fake_cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy(dst, src, n, nullptr, false); }
CUresult fake_cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) { return copy(dst, dptr(src), n, nullptr, false); }
CUresult fake_cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) { return copy(dptr(dst), src, n, nullptr, false); }
CUresult fake_cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n) { return copy(dst, src, n, nullptr, false); }
CUresult fake_cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream stream) {
  return copy(dst, src, n, stream, true);
}

CUresult fake_cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n) {
  return memset_d8(dst, value, n, nullptr, false);
}
CUresult fake_cuMemsetD8Async(CUdeviceptr dst, unsigned char value, size_t n, CUstream stream) {
  return memset_d8(dst, value, n, stream, true);
}

}  // namespace fakecuda
