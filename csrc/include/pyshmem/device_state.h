/* pyshmem/device_state.h: the per-PE facts that code running outside the host API (the
 * device API: CUDA kernels, its CPU build, Numba's shims) needs to
 * compute peer addresses without calling into the runtime.
 *
 * Filled once by pyshmem_init() and constant until pyshmem_finalize(). Plain C, fixed
 * layout (checked by static_asserts in csrc/host/device_state.cpp), so it can be
 * copied to GPU memory as is.
 *
 * Address rule: the symmetric object at `addr` in this PE's heap lives on PE `pe` at
 *   addr + (pe - my_pe) * heap_stride
 * and that address may be dereferenced by this process iff peer_flags[pe] has
 * PYSHMEM_PEER_LOAD_STORE set. Device-API operations to other peers (and to every peer
 * when PYSHMEM_STATE_PROXY_ALL is set) are requests on the proxy FIFO `proxy`. */
#ifndef PYSHMEM_DEVICE_STATE_H
#define PYSHMEM_DEVICE_STATE_H

#include "pyshmem/proxy_fifo.h"
#include "pyshmem/stdint.h"
#include "pyshmem/team.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped when this struct or the proxy FIFO it points to changes layout (3: result cells,
 * 4: the team table and team synchronisation slots, 5: PYSHMEM_TIMEOUT for device waits). */
#define PYSHMEM_DEVICE_STATE_VERSION 6u
#define PYSHMEM_PEER_LOAD_STORE 0x1u /* the peer's segment is mapped in this process */
#define PYSHMEM_STATE_DEBUG 0x1u     /* PYSHMEM_DEBUG=1: device calls check PEs and addresses */
#define PYSHMEM_STATE_PROXY_ALL 0x2u /* PYSHMEM_PROXY_ALL=1: every peer's operations use the proxy */
#define PYSHMEM_STATE_ORDER_CHECK 0x4u /* PYSHMEM_ORDER_CHECK=1: point-to-point operations use the
                                          proxy (which holds them); collectives and barriers stay direct */

/* The system area at offset 0 of every PE's segment, before the user heap. PEs read
 * and write each other's copy (host and device barriers), so this layout is an ABI
 * between the PEs of a job. One barrier counter per cache line: no false sharing. */
#define PYSHMEM_SYS_MAGIC 0x707973686d656d31ull /* "pyshmem1" */
#define PYSHMEM_SYS_BARRIER_ROUNDS 64           /* ceil(log2(PEs)) rounds are used */
typedef struct pyshmem_sys_flag {
  uint64_t value;
  uint64_t pad[7];
} pyshmem_sys_flag;
/* PYSHMEM_TIMEOUT's records (csrc/core/hang.h), written by the owner and read by the
 * PE that reports a hang: what the owner waits for (once a wait stops spinning) ... */
typedef struct pyshmem_sys_wait {
  uint64_t active;  /* 1 while the fields below describe a wait of the owner */
  int64_t since_ns; /* CLOCK_MONOTONIC when it started */
  uint64_t offset;  /* heap offset of the object waited on (UINT64_MAX: none) */
  uint64_t value;   /* the comparison value (its bits) */
  int32_t dtype;    /* pyshmem_dtype of the object, -1 when none */
  int32_t cmp;      /* PYSHMEM_CMP_*, -1 when none */
  int32_t peer;     /* the PE whose action would end the wait, -1 when unknown */
  int32_t pad;
  char call[32];    /* the API call, NUL-terminated */
} pyshmem_sys_wait;
/* ... and a ring of the last operations it issued (kept while PYSHMEM_TIMEOUT is set). */
#define PYSHMEM_SYS_OP_RING 32
#define PYSHMEM_OP_PUT 1
#define PYSHMEM_OP_GET 2
#define PYSHMEM_OP_AMO 3
#define PYSHMEM_OP_SIGNAL 4
typedef struct pyshmem_sys_op {
  int64_t t_ns;    /* CLOCK_MONOTONIC when issued */
  uint64_t offset; /* heap offset of the remote object on `pe` */
  uint64_t bytes;
  int32_t kind;    /* PYSHMEM_OP_* */
  int32_t pe;      /* the target PE */
} pyshmem_sys_op;
typedef struct pyshmem_sys_area {
  uint64_t magic;         /* PYSHMEM_SYS_MAGIC */
  uint64_t pe;            /* owner PE */
  uint64_t barrier_epoch; /* barriers entered by the owner (host and device share it) */
  uint64_t global_exit;   /* status + 1 once any PE called global_exit (waits then exit) */
  uint64_t hang_claim;    /* PE 0's copy: 1 + the PE that reports a PYSHMEM_TIMEOUT hang */
  uint64_t hang_probe;    /* a PYSHMEM_TIMEOUT reporter stores 1; a running thread of the owner answers 2 */
  uint64_t pid;           /* the owner's process id (the report looks up PEs of its node in /proc) */
  uint64_t pad0[1];
  pyshmem_sys_flag barrier[PYSHMEM_SYS_BARRIER_ROUNDS]; /* dissemination: arrivals per round */
  pyshmem_sys_wait wait;
  uint64_t op_count; /* operations recorded so far; the newest is ops[(op_count - 1) % RING] */
  uint64_t clock_ping;  /* trace clock estimate at init: PE 0 sets a PE's round tag here */
  uint64_t clock_pong;  /* PE 0's copy: the answering PE sets the round tag after its stamp */
  int64_t clock_stamp;  /* PE 0's copy: the answering PE's trace clock when the ping arrived */
  uint64_t pad1[4];
  pyshmem_sys_op ops[PYSHMEM_SYS_OP_RING];
} pyshmem_sys_area;

typedef struct pyshmem_device_state {
  uint32_t version;           /* PYSHMEM_DEVICE_STATE_VERSION */
  int32_t my_pe;
  int32_t n_pes;
  uint32_t flags;             /* PYSHMEM_STATE_* bits */
  uint64_t heap_base;         /* address of PE 0's slot in this process's reserved range */
  uint64_t heap_stride;       /* bytes between consecutive PEs' slots */
  uint64_t heap_size;         /* bytes of each PE's segment (system area included) */
  uint64_t user_offset;       /* offset of the user heap inside each segment; the
                                 pyshmem_sys_area sits at offset 0 */
  const uint8_t* peer_flags;  /* n_pes entries of PYSHMEM_PEER_* bits */
  pyshmem_proxy_fifo* proxy;  /* this PE's request ring, or null when no proxy runs */
  const pyshmem_team_desc* teams; /* max_teams entries (pyshmem/team.h), indexed by
                                     PYSHMEM_TEAM_INDEX(handle); updated by team splits */
  uint64_t team_pool_offset;  /* offset of team slot 0 inside each segment */
  uint32_t team_slot_bytes;   /* bytes between consecutive team slots */
  uint32_t max_teams;         /* entries of `teams` */
  uint32_t team_rounds;       /* round counters per slot: ceil(log2(n_pes)), at least 1 */
  uint32_t pad0;
  uint64_t wait_timeout_ns;   /* PYSHMEM_TIMEOUT in ns (0: device waits are unbounded) */
  /* CPU build only (null in GPU memory): PYSHMEM_TIMEOUT's hook for device-API waits.
   * phase PYSHMEM_WAIT_PUBLISH: the wait stopped spinning, record it for a report;
   * PYSHMEM_WAIT_END: it ended; PYSHMEM_WAIT_EXPIRED: it outlasted wait_timeout_ns, so
   * report every PE's waits and end the job (does not return); PYSHMEM_WAIT_POLL: a
   * sleeping poll (every 64th), which exits the process when another PE called
   * global_exit. */
  void (*wait_hook)(int phase, const char* call, const void* object, int32_t dtype, int32_t cmp, uint64_t value,
                    int32_t peer, uint64_t waited_ns);
  /* CPU build with PYSHMEM_TIMEOUT set (else null): records a device-API operation
   * (PYSHMEM_OP_* toward `pe` on symmetric `sym`) in this PE's ring of last operations. */
  void (*note_op)(int32_t kind, int32_t pe, const void* sym, uint64_t bytes);
  /* CPU build while a transport needs this PE's progress for remote operations to
   * complete (UCX: puts over tcp and emulated atomics land only when the target
   * progresses; else null): device-API waits on symmetric memory call it every poll, so
   * a kernel thread waiting for a remote PE's signal applies the arrival itself instead
   * of waiting for the proxy thread's next poll. Returns the events it handled. */
  unsigned (*progress)(void);
} pyshmem_device_state;
#define PYSHMEM_WAIT_PUBLISH 0
#define PYSHMEM_WAIT_END 1
#define PYSHMEM_WAIT_EXPIRED 2
#define PYSHMEM_WAIT_POLL 3

#if !defined(__CUDACC_RTC__) /* a host function: not declared in runtime-compiled device code */
/* Points *state_out at this PE's state (owned by the runtime, valid until finalize).
 * Returns PYSHMEM_ERR_NOT_INIT before init / after finalize. */
int pyshmem_device_state_get(const pyshmem_device_state** state_out);
#endif

#ifdef __cplusplus
}
#endif
#endif /* PYSHMEM_DEVICE_STATE_H */
