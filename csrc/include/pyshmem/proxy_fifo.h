/* pyshmem/proxy_fifo.h: the request ring between device-API callers and the proxy thread.
 *
 * Device code (CUDA kernels, the CPU build of the device API) reaches a PE that it
 * cannot load/store by pushing a request here; the PE's proxy thread (csrc/proxy/)
 * drains the ring in ticket order and performs each request with the transport that
 * routes to the target PE. Plain C layout: the ring lives in memory both sides see
 * (ordinary process memory for the CPU build, pinned host memory for GPU kernels: the
 * GPU heap's ring, whose offsets refer to the GPU heap). Local buffers of PUT/GET are
 * addresses in the producer's process: host memory, or GPU global memory for kernels.
 *
 * Protocol (multi-producer, single consumer):
 *  - A producer reserves k consecutive slots with one fetch_add on `head` (its ticket t),
 *    waits until t + k - tail <= capacity, then writes each slot: w0 first, then w1 with
 *    release order. Bit 63 of w1 is the lap flag: set on even laps of the ring, clear on
 *    odd laps, so a slot left over from the previous lap never looks written.
 *  - The consumer reads slot `tail` with acquire order, executes the whole request, then
 *    publishes tail += k (release). tail >= t + k therefore means request t has been
 *    executed: the source may be reused, a get's data or a fetch's result is in place.
 *  - `done` <= tail: every request below ticket `done` is complete *at its target*
 *    (remotely visible). Transports whose operations complete on return (load/store)
 *    advance it with tail; others advance it when they execute a QUIET request.
 *  - An idle proxy thread dozes: it sets proxy_sleeping, re-checks the ring, and waits
 *    on the eventfd `doorbell_fd` (and the transports' own event fds); a host producer
 *    that sees proxy_sleeping after publishing writes to it, which wakes the proxy (GPU
 *    producers cannot: their ring has no doorbell, and its doze is bounded).
 *  - Fetching requests (G, fetching AMO) return their value in the result cell of
 *    their ticket, cells[t & (capacity - 1)], which lives next to the ring (so a GPU
 *    kernel, whose own variables the host cannot write, can read it). A cell is handed
 *    over explicitly because a later request reuses it: the consumer waits until
 *    cell.ticket == 0 (free), writes value, then stores ticket = t + 1 (release); the
 *    producer waits for ticket == t + 1 (acquire), reads value and stores 0.
 *  - Every producer wait is bounded by timeout_ns and returns PYSHMEM_ERR_TIMEOUT;
 *    a failed proxy sets `status` (and `message`) and producers return that status.
 *
 * A request is 1-3 slots of 16 bytes. Header slot (every request):
 *   w0 = byte offset of the target object in the target PE's segment
 *   w1 = flag(1) | kind(7) << 56 | pe(24) << 32 | arg(32)
 * Following slots (bit 63 of each w1 is the lap flag; payload uses bits 0-62):
 *   PUT        arg nbi       s1: w0 source address, w1 nbytes
 *   GET        arg nbi       s1: w0 destination address, w1 nbytes  (header w0 = source)
 *              (nbi 1: the producer does not wait for execution; the proxy may then
 *              read a PUT's source, or write a GET's destination, as late as the next
 *              QUIET: the ordering check holds them)
 *   P          arg nbytes    s1: w0 value bits (1, 2, 4 or 8 bytes, little end first)
 *   G          arg nbytes    header only; the value (1, 2, 4 or 8 bytes) comes back in
 *                            the request's result cell
 *   PUT_SIGNAL arg sig_op    s1: as PUT; s2: w0 signal value, w1 signal's segment offset
 *   AMO        arg op|dtype<<8  s1: w0 operand, w1 1 = fetching (the old value comes
 *                               back in the result cell), 0 = not
 *                            s2: w0 compare value (COMPARE_SWAP)
 *   FENCE, QUIET             header only (pe and w0 are 0)
 */
#ifndef PYSHMEM_PROXY_FIFO_H
#define PYSHMEM_PROXY_FIFO_H

#include "pyshmem/stdint.h"

/* The helpers below are called from host code and from kernels. */
#if defined(__CUDACC__)
#define PYSHMEM_FIFO_FN static inline __host__ __device__
#else
#define PYSHMEM_FIFO_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pyshmem_fifo_entry {
  uint64_t w0;
  uint64_t w1; /* bit 63: lap flag; written last, with release order */
} pyshmem_fifo_entry;

#define PYSHMEM_FIFO_FLAG (1ull << 63)
#define PYSHMEM_FIFO_PAYLOAD_MASK (~PYSHMEM_FIFO_FLAG)
#define PYSHMEM_FIFO_MAX_SLOTS 3 /* slots of the longest request */
#define PYSHMEM_FIFO_MAX_PE ((1 << 24) - 1)

enum pyshmem_fifo_kind {
  PYSHMEM_REQ_PUT = 1,
  PYSHMEM_REQ_GET = 2,
  PYSHMEM_REQ_P = 3,
  PYSHMEM_REQ_PUT_SIGNAL = 4,
  PYSHMEM_REQ_AMO = 5,
  PYSHMEM_REQ_FENCE = 6,
  PYSHMEM_REQ_QUIET = 7,
  PYSHMEM_REQ_G = 8
};

/* Slots used by a request of `kind` (0: not a kind). */
PYSHMEM_FIFO_FN int pyshmem_fifo_kind_slots(int kind) {
  switch (kind) {
    case PYSHMEM_REQ_PUT: case PYSHMEM_REQ_GET: case PYSHMEM_REQ_P: return 2;
    case PYSHMEM_REQ_PUT_SIGNAL: case PYSHMEM_REQ_AMO: return 3;
    case PYSHMEM_REQ_FENCE: case PYSHMEM_REQ_QUIET: case PYSHMEM_REQ_G: return 1;
    default: return 0;
  }
}

PYSHMEM_FIFO_FN uint64_t pyshmem_fifo_header_w1(int kind, int pe, uint32_t arg) {
  return ((uint64_t)(kind & 0x7f) << 56) | ((uint64_t)(pe & PYSHMEM_FIFO_MAX_PE) << 32) | (uint64_t)arg;
}
PYSHMEM_FIFO_FN int pyshmem_fifo_header_kind(uint64_t w1) { return (int)((w1 >> 56) & 0x7f); }
PYSHMEM_FIFO_FN int pyshmem_fifo_header_pe(uint64_t w1) { return (int)((w1 >> 32) & PYSHMEM_FIFO_MAX_PE); }
PYSHMEM_FIFO_FN uint32_t pyshmem_fifo_header_arg(uint64_t w1) { return (uint32_t)w1; }

/* Expected lap flag of the slot that ticket t writes. */
PYSHMEM_FIFO_FN uint64_t pyshmem_fifo_lap_flag(uint64_t ticket, uint32_t capacity) {
  return ((ticket / capacity) & 1u) ? 0u : PYSHMEM_FIFO_FLAG;
}

#define PYSHMEM_FIFO_MESSAGE_BYTES 256

/* Result cell of a fetching request (protocol above). */
typedef struct pyshmem_fifo_cell {
  uint64_t ticket; /* 0: free; t + 1: holds the result of the request with ticket t */
  uint64_t value;  /* the result's bits, zero-extended */
} pyshmem_fifo_cell;

/* Counters on their own cache lines: producers hammer head, the consumer writes tail. */
typedef struct pyshmem_proxy_fifo {
  uint64_t head; /* next ticket; producers fetch_add */
  uint64_t pad0[7];
  uint64_t tail; /* slots consumed; requests below it are executed (consumer writes) */
  uint64_t pad1[7];
  uint64_t done; /* requests below it are complete at their targets (consumer writes) */
  uint32_t proxy_sleeping; /* 1 while the proxy thread dozes (CPU producers then ring the doorbell) */
  int32_t doorbell_fd;     /* an eventfd a producer that saw proxy_sleeping writes 1 to; -1: none */
  uint64_t pad2[6];
  uint32_t status;     /* 0, or the pyshmem_status the proxy failed with */
  uint32_t capacity;   /* slots; a power of two >= PYSHMEM_FIFO_MAX_SLOTS */
  uint64_t timeout_ns; /* bound on every producer wait */
  pyshmem_fifo_entry* entries; /* `capacity` slots, 16-byte aligned */
  pyshmem_fifo_cell* cells;     /* `capacity` result cells */
  char message[PYSHMEM_FIFO_MESSAGE_BYTES]; /* why the proxy failed (status != 0) */
} pyshmem_proxy_fifo;

#ifdef __cplusplus
} /* extern "C" */
static_assert(sizeof(pyshmem_fifo_entry) == 16, "a FIFO slot is 16 bytes");
static_assert(sizeof(pyshmem_fifo_cell) == 16, "a result cell is 16 bytes");
static_assert(sizeof(pyshmem_proxy_fifo) == 192 + 32 + PYSHMEM_FIFO_MESSAGE_BYTES, "FIFO layout is an ABI");
#else
_Static_assert(sizeof(pyshmem_fifo_entry) == 16, "a FIFO slot is 16 bytes");
#endif

#endif /* PYSHMEM_PROXY_FIFO_H */
