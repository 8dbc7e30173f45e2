// pyshmem/device/proxy.cuh: the producer side of the proxy FIFO (layout and protocol in
// pyshmem/proxy_fifo.h). Device-API calls whose target PE is not load/store reachable
// (or every call, with PYSHMEM_PROXY_ALL=1) become requests here; the PE's proxy thread
// executes them in ticket order.
//
// Completion, matching the load/store path's guarantees:
//  - blocking put / put_signal: return once the proxy has executed the request, so the
//    source may be reused; nbi forms return once the request is in the ring (the source
//    must stay unchanged until quiet()).
//  - get, g and fetching atomics: return once the result is in place. g and fetching
//    atomics get it through the ring's result cells (GPU kernels' own variables are
//    not host-visible); a get writes the caller's buffer, so from a GPU kernel that
//    buffer must be global memory, as must the source of a put.
//  - fence(): later requests are executed after earlier ones (one proxy, in order).
//  - quiet(): returns when every request pushed before it is complete at its target.
// Every wait is bounded by the ring's timeout_ns (PYSHMEM_PROXY_TIMEOUT) and traps with
// a message naming the call instead of hanging; so does a proxy that failed.
#pragma once

#include <cuda/std/bit>
#include <cuda/std/type_traits>

#include "pyshmem/device/common.cuh"
#include "pyshmem/proxy_fifo.h"

#if !defined(__CUDA_ARCH__) && !defined(__CUDACC_RTC__) && defined(__linux__)
#include <unistd.h>
#endif

namespace pyshmem {
inline namespace device_api {
namespace detail {

// Polls `ready()` until it holds. Returns PYSHMEM_SUCCESS, the status the proxy failed
// with, or PYSHMEM_ERR_TIMEOUT after f->timeout_ns.
template <class Ready>
PYSHMEM_HD int fifo_wait(pyshmem_proxy_fifo* f, Ready ready) {
  Backoff b;
  uint64_t start = 0;
  for (;;) {
    if (ready()) return PYSHMEM_SUCCESS;
    const uint32_t st = sys_atomic<uint32_t>(f->status).load(cuda::std::memory_order_acquire);
    if (st) return static_cast<int>(st);
    if ((b.iter & 63) == 0) {  // read the clock every 64 polls only
      const uint64_t now = now_ns();
      if (start == 0) start = now;
      else if (now - start > f->timeout_ns) return PYSHMEM_ERR_TIMEOUT;
    }
    b.pause();
  }
}

// Waits until *counter >= target (see fifo_wait).
PYSHMEM_HD int fifo_wait_counter(pyshmem_proxy_fifo* f, uint64_t* counter, uint64_t target) {
  return fifo_wait(f, [&] { return sys_atomic<uint64_t>(*counter).load(cuda::std::memory_order_acquire) >= target; });
}

// Reserves k slots, waits (bounded) for room, and writes the request `req[0..k)`.
// On success *ticket is the request's first ticket; it has been executed once
// f->tail >= *ticket + k. Returns a pyshmem_status.
PYSHMEM_HD int fifo_push(pyshmem_proxy_fifo* f, const pyshmem_fifo_entry* req, int k, uint64_t* ticket) {
  const uint32_t cap = f->capacity;
  if (k < 1 || static_cast<uint32_t>(k) > cap) return PYSHMEM_ERR_INVALID_ARG;
  const uint64_t t = sys_atomic<uint64_t>(f->head).fetch_add(static_cast<uint64_t>(k), cuda::std::memory_order_relaxed);
  const uint64_t need = t + static_cast<uint64_t>(k);
  if (need > cap) {
    const int st = fifo_wait_counter(f, &f->tail, need - cap);
    if (st != PYSHMEM_SUCCESS) return st;
  }
  for (int i = 0; i < k; ++i) {
    const uint64_t ti = t + static_cast<uint64_t>(i);
    pyshmem_fifo_entry& slot = f->entries[ti & (cap - 1)];
    sys_atomic<uint64_t>(slot.w0).store(req[i].w0, cuda::std::memory_order_relaxed);
    const uint64_t w1 = (req[i].w1 & PYSHMEM_FIFO_PAYLOAD_MASK) | pyshmem_fifo_lap_flag(ti, cap);
    sys_atomic<uint64_t>(slot.w1).store(w1, cuda::std::memory_order_release);  // publishes w0 too
  }
#if !defined(__CUDA_ARCH__) && defined(__linux__)
  // Wake a dozing proxy (pairs with its store of proxy_sleeping, then re-check).
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_system);
  if (sys_atomic<uint32_t>(f->proxy_sleeping).load(cuda::std::memory_order_relaxed) && f->doorbell_fd >= 0) {
    const uint64_t one = 1;
    const ssize_t wrote = ::write(f->doorbell_fd, &one, sizeof one);  // fails only when 2^64-2 rings are unread
    (void)wrote;
  }
#endif
  *ticket = t;
  return PYSHMEM_SUCCESS;
}

PYSHMEM_HD const char* status_text(int st) {
  return st == PYSHMEM_ERR_TIMEOUT ? "timed out waiting for the proxy thread (raise PYSHMEM_PROXY_TIMEOUT if it is only slow)"
                                   : "the proxy thread failed";
}

// This PE's ring; traps when the PE runs no proxy (nothing can reach `pe` then).
PYSHMEM_HD pyshmem_proxy_fifo* proxy_fifo(const char* call, int pe) {
  pyshmem_proxy_fifo* f = state().proxy;
  if (!f) trap(call, "PE is not load/store reachable and this PE runs no proxy", pe);
  return f;
}

PYSHMEM_HD void proxy_check(const char* call, pyshmem_proxy_fifo* f, int st, int pe) {
  if (st != PYSHMEM_SUCCESS) trap(call, status_text(st), pe, f->status ? f->message : nullptr);
}

// Pushes a request and returns the ticket just past it (wait for tail >= that).
PYSHMEM_HD uint64_t proxy_submit(const char* call, pyshmem_proxy_fifo* f, const pyshmem_fifo_entry* req, int pe) {
  const int k = pyshmem_fifo_kind_slots(pyshmem_fifo_header_kind(req[0].w1));
  uint64_t t = 0;
  proxy_check(call, f, fifo_push(f, req, k, &t), pe);
  return t + static_cast<uint64_t>(k);
}

PYSHMEM_HD void proxy_wait_executed(const char* call, pyshmem_proxy_fifo* f, uint64_t end, int pe) {
  proxy_check(call, f, fifo_wait_counter(f, &f->tail, end), pe);
}

// Byte offset of symmetric `sym` in this PE's segment (the same on every PE).
PYSHMEM_HD uint64_t seg_offset(const void* sym) {
  const pyshmem_device_state& s = state();
  return reinterpret_cast<uint64_t>(sym) - (s.heap_base + static_cast<uint64_t>(s.my_pe) * s.heap_stride);
}

PYSHMEM_HD pyshmem_fifo_entry entry(uint64_t w0, uint64_t w1) {
  pyshmem_fifo_entry e;
  e.w0 = w0;
  e.w1 = w1;
  return e;
}

// The bits of a 1/2/4/8-byte value, zero-extended, and back (no memcpy: NVRTC has none).
template <class T>
PYSHMEM_HD uint64_t to_bits(T v) {
  if constexpr (sizeof(T) == 8) return cuda::std::bit_cast<uint64_t>(v);
  else if constexpr (sizeof(T) == 4) return cuda::std::bit_cast<uint32_t>(v);
  else if constexpr (sizeof(T) == 2) return cuda::std::bit_cast<uint16_t>(v);
  else return cuda::std::bit_cast<uint8_t>(v);
}
template <class T>
PYSHMEM_HD T from_bits(uint64_t b) {
  if constexpr (sizeof(T) == 8) return cuda::std::bit_cast<T>(b);
  else if constexpr (sizeof(T) == 4) return cuda::std::bit_cast<T>(static_cast<uint32_t>(b));
  else if constexpr (sizeof(T) == 2) return cuda::std::bit_cast<T>(static_cast<uint16_t>(b));
  else return cuda::std::bit_cast<T>(static_cast<uint8_t>(b));
}

// pyshmem_dtype code of T (kind * 16 + size, see pyshmem/types.h).
template <class T>
PYSHMEM_HD constexpr int dtype_of() {
  return (cuda::std::is_floating_point<T>::value ? 0x20 : cuda::std::is_signed<T>::value ? 0x00 : 0x10) |
         static_cast<int>(sizeof(T));
}

// PUT or GET: `sym` is the symmetric side, `local` the caller's buffer.
PYSHMEM_HD void proxy_rma(const char* call, int kind, const void* sym, const void* local, size_t nbytes, int pe,
                          bool blocking) {
  pyshmem_proxy_fifo* f = proxy_fifo(call, pe);
  const pyshmem_fifo_entry req[2] = {entry(seg_offset(sym), pyshmem_fifo_header_w1(kind, pe, blocking ? 0u : 1u)),
                                     entry(reinterpret_cast<uint64_t>(local), nbytes)};
  const uint64_t end = proxy_submit(call, f, req, pe);
  if (blocking) proxy_wait_executed(call, f, end, pe);
}
PYSHMEM_HD void proxy_put(const char* call, void* dest, const void* src, size_t nbytes, int pe, bool blocking) {
  proxy_rma(call, PYSHMEM_REQ_PUT, dest, src, nbytes, pe, blocking);
}
PYSHMEM_HD void proxy_get(const char* call, void* dest, const void* src, size_t nbytes, int pe, bool blocking) {
  proxy_rma(call, PYSHMEM_REQ_GET, src, dest, nbytes, pe, blocking);
}

// The result of the fetching request with ticket t, taken from its cell (which is then
// free for the request that reuses it; protocol in pyshmem/proxy_fifo.h).
PYSHMEM_HD uint64_t proxy_result(const char* call, pyshmem_proxy_fifo* f, uint64_t t, int pe) {
  pyshmem_fifo_cell& c = f->cells[t & (f->capacity - 1)];
  proxy_check(call, f,
              fifo_wait(f, [&] { return sys_atomic<uint64_t>(c.ticket).load(cuda::std::memory_order_acquire) == t + 1; }),
              pe);
  const uint64_t v = sys_atomic<uint64_t>(c.value).load(cuda::std::memory_order_relaxed);
  sys_atomic<uint64_t>(c.ticket).store(0, cuda::std::memory_order_release);
  return v;
}

// g: the value comes back in the request's result cell (host-visible for GPU kernels).
template <class T>
PYSHMEM_HD T proxy_g(const char* call, const T* source, int pe) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "g moves 1, 2, 4 or 8 bytes");
  pyshmem_proxy_fifo* f = proxy_fifo(call, pe);
  const pyshmem_fifo_entry req[1] = {
      entry(seg_offset(source), pyshmem_fifo_header_w1(PYSHMEM_REQ_G, pe, static_cast<uint32_t>(sizeof(T))))};
  const uint64_t end = proxy_submit(call, f, req, pe);
  return from_bits<T>(proxy_result(call, f, end - 1, pe));
}

// p: the value travels in the request, so the call returns at once (like a put_nbi).
template <class T>
PYSHMEM_HD void proxy_p(const char* call, T* dest, T value, int pe) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "p moves 1, 2, 4 or 8 bytes");
  pyshmem_proxy_fifo* f = proxy_fifo(call, pe);
  const pyshmem_fifo_entry req[2] = {
      entry(seg_offset(dest), pyshmem_fifo_header_w1(PYSHMEM_REQ_P, pe, static_cast<uint32_t>(sizeof(T)))),
      entry(to_bits(value), 0)};
  proxy_submit(call, f, req, pe);
}

PYSHMEM_HD void proxy_put_signal(const char* call, void* dest, const void* src, size_t nbytes, uint64_t* sig_addr,
                                 uint64_t signal, int sig_op, int pe, bool blocking) {
  pyshmem_proxy_fifo* f = proxy_fifo(call, pe);
  const pyshmem_fifo_entry req[3] = {
      entry(seg_offset(dest), pyshmem_fifo_header_w1(PYSHMEM_REQ_PUT_SIGNAL, pe, static_cast<uint32_t>(sig_op))),
      entry(reinterpret_cast<uint64_t>(src), nbytes), entry(signal, seg_offset(sig_addr))};
  const uint64_t end = proxy_submit(call, f, req, pe);
  if (blocking) proxy_wait_executed(call, f, end, pe);
}

// An atomic through the proxy. Fetching forms wait for the result; others return once
// the request is queued (their effect is ordered by fence and completed by quiet).
template <class T>
PYSHMEM_HD T proxy_amo(const char* call, int op, T* dest, T value, T cond, int pe, bool fetching) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomics are on 4- and 8-byte types");
  pyshmem_proxy_fifo* f = proxy_fifo(call, pe);
  const uint32_t arg = static_cast<uint32_t>(op) | (static_cast<uint32_t>(dtype_of<T>()) << 8);
  const pyshmem_fifo_entry req[3] = {entry(seg_offset(dest), pyshmem_fifo_header_w1(PYSHMEM_REQ_AMO, pe, arg)),
                                     entry(to_bits(value), fetching ? 1u : 0u), entry(to_bits(cond), 0)};
  const uint64_t end = proxy_submit(call, f, req, pe);
  if (!fetching) return T();
  return from_bits<T>(proxy_result(call, f, end - 3, pe));
}

// This PE's ring when it holds requests not yet complete at their targets, else null.
PYSHMEM_HD pyshmem_proxy_fifo* proxy_in_flight() {
  pyshmem_proxy_fifo* f = state().proxy;
  if (!f) return nullptr;
  const uint64_t head = sys_atomic<uint64_t>(f->head).load(cuda::std::memory_order_acquire);
  return sys_atomic<uint64_t>(f->done).load(cuda::std::memory_order_acquire) >= head ? nullptr : f;
}

// fence: the proxy executes in order; transports that reorder get a FENCE request.
PYSHMEM_HD void proxy_fence() {
  pyshmem_proxy_fifo* f = proxy_in_flight();
  if (!f) return;
  const pyshmem_fifo_entry req[1] = {entry(0, pyshmem_fifo_header_w1(PYSHMEM_REQ_FENCE, 0, 0))};
  proxy_submit("fence", f, req, -1);
}

// quiet: every request pushed so far is complete at its target on return.
PYSHMEM_HD void proxy_quiet(const char* call) {
  pyshmem_proxy_fifo* f = proxy_in_flight();
  if (!f) return;
  const pyshmem_fifo_entry req[1] = {entry(0, pyshmem_fifo_header_w1(PYSHMEM_REQ_QUIET, 0, 0))};
  const uint64_t end = proxy_submit(call, f, req, -1);
  proxy_check(call, f, fifo_wait_counter(f, &f->done, end), -1);
}

}  // namespace detail
}  // namespace device_api
}  // namespace pyshmem
