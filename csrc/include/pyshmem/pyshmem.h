/* pyshmem/pyshmem.h: the host C API of pyshmem (OpenSHMEM names, `pyshmem_` prefix).
 *
 * Every function returns a pyshmem_status (0 = PYSHMEM_SUCCESS) and passes results
 * through output arguments, which come last; an output is written only on success. On
 * failure pyshmem_last_error() returns a message naming the call, the PE and the fix;
 * a call that fails its argument checks has moved nothing.
 *
 * Return codes every call but pyshmem_init/pyshmem_last_error may give, not repeated
 * below: PYSHMEM_ERR_NOT_INIT (before init or after finalize); PYSHMEM_ERR_PE_RANGE (a
 * `pe` outside [0, n_pes) or a `root` outside the team); PYSHMEM_ERR_NOT_SYMMETRIC (an
 * argument documented as symmetric is not in the symmetric heap); PYSHMEM_ERR_INVALID_ARG
 * (a range past the end of its allocation, a freed object, a bad cmp/op/dtype code);
 * PYSHMEM_ERR_TIMEOUT (a peer on another node stopped answering within
 * PYSHMEM_TRANSPORT_TIMEOUT, or the proxy within PYSHMEM_PROXY_TIMEOUT);
 * PYSHMEM_ERR_INTERRUPTED (a blocking wait was interrupted by a signal handler that asked
 * to stop). With PYSHMEM_TIMEOUT set, a wait that lasts longer prints a report of every
 * PE's waits and ends the job instead of returning.
 *
 * Memory model (OpenSHMEM 1.5, see docs/memory_model.md):
 *  - Blocking put routines return when the source buffer may be reused; the data is
 *    visible on the target PE after pyshmem_quiet(). pyshmem_fence() orders puts,
 *    AMOs and signals to the same PE.
 *  - get and fetching atomics return with the value in the destination.
 *  - *_nbi routines complete at the next pyshmem_quiet() (the CPU backend completes
 *    them immediately, which the model allows).
 *  - putmem_signal: the data is visible before the signal update.
 *  - wait_until / test / signal_wait_until are acquire operations.
 *  - barrier_all = quiet + barrier; sync_all = barrier only.
 * All routines except init/finalize/malloc-family/barriers are thread-safe. */
#ifndef PYSHMEM_PYSHMEM_H
#define PYSHMEM_PYSHMEM_H

#include <stddef.h>
#include <stdint.h>

#include "pyshmem/team.h"
#include "pyshmem/types.h"
#include "pyshmem/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Message of the last failed call on this thread ("" if none). Valid until this
 * thread's next failing call. Never fails. */
const char* pyshmem_last_error(void);

/* ---- setup ---- */
/* Collective over all PEs. Reads the PYSHMEM_* variables shmemrun (or another launcher,
 * or mpi4py through pyshmem.bootstrap_mpi) set; a process started without a launcher is
 * a single-PE job. On return every PE's heap is mapped and usable. SUCCESS when already
 * initialised. Errors: BOOTSTRAP (the rendezvous cannot be reached or rejected the
 * job's secret), TIMEOUT (not every PE arrived within PYSHMEM_BOOTSTRAP_TIMEOUT),
 * INVALID_ARG (a malformed PYSHMEM_* value), SYSTEM (the heap, a GPU or a transport
 * cannot be set up), NOT_INIT (after finalize: the runtime cannot be started twice in
 * a process). A failed init leaves no segment, socket or thread behind. */
int pyshmem_init(void);
/* Collective: completes everything this PE issued (quiet, the proxy's queue), meets
 * every PE in a barrier, then unmaps the heap. SUCCESS when not initialised. TIMEOUT
 * when the proxy cannot drain within PYSHMEM_PROXY_TIMEOUT. */
int pyshmem_finalize(void);
/* This PE's number, 0 .. n_pes - 1; the number of PEs of the job. */
int pyshmem_my_pe(int* pe_out);
int pyshmem_n_pes(int* npes_out);
/* Ends the whole job with `status`: every PE waiting in pyshmem notices within its next
 * backoff step and exits with the same status; output is flushed first. Does not
 * return. Before init it exits this process only. */
void pyshmem_global_exit(int status);
/* The OpenSHMEM specification version this library follows (1.5). Never fails. */
int pyshmem_info_get_version(int* major_out, int* minor_out);
/* Writes the NUL-terminated vendor string into name (PYSHMEM_MAX_NAME_LEN bytes).
 * Never fails. */
int pyshmem_info_get_name(char* name_out);

/* ---- symmetric memory ----
 * Collective over all PEs, in the same order with the same arguments on every PE: the
 * object gets the same offset everywhere. Each ends with a barrier, so no PE touches
 * the object on a peer that has not allocated it (or still uses it, for free). A PE
 * that fails still meets the others, so all PEs fail together: NOMEM (the heap cannot
 * hold it: raise PYSHMEM_SYMMETRIC_SIZE), INVALID_ARG (an alignment that is not a power
 * of two), MISMATCH (with PYSHMEM_DEBUG=1: PEs passed different arguments). */
int pyshmem_malloc(size_t size, void** ptr_out);
/* Like pyshmem_malloc of count * size bytes, zeroed on every PE before the barrier
 * (INVALID_ARG when count * size overflows size_t). */
int pyshmem_calloc(size_t count, size_t size, void** ptr_out);
/* alignment: a power of two. */
int pyshmem_align(size_t alignment, size_t size, void** ptr_out);
/* Collective: quiet, then the barrier, then the release. INVALID_ARG for anything but
 * a live pointer an allocation call returned (on every PE). NULL is a no-op. */
int pyshmem_free(void* ptr);
/* Address of symmetric `dest` on `pe` that this PE can load from and store to (the
 * peer's segment mapped here), or NULL in *ptr_out when `pe` is reached only through a
 * transport (another node). Local; no communication. */
int pyshmem_ptr(const void* dest, int pe, void** ptr_out);
/* 1 in *accessible_out when some transport reaches `pe` (any PE of a running job is
 * reachable: 0 only for an out-of-range pe); addr_accessible also needs `addr` to be
 * symmetric. Local; never PE_RANGE. */
int pyshmem_pe_accessible(int pe, int* accessible_out);
int pyshmem_addr_accessible(const void* addr, int pe, int* accessible_out);

/* ---- RMA ----
 * dest (put) or source (get) is symmetric: the object at the same offset on `pe`; the
 * other side is any local memory. nbytes 0 is a no-op that still checks its arguments.
 * Ordering: puts to one PE are ordered by pyshmem_fence, completed by pyshmem_quiet. */
/* Copies nbytes from local `source` to symmetric `dest` on `pe`. Returns when source
 * may be reused; visible at `pe` after quiet (at once for same-node PEs). */
int pyshmem_putmem(void* dest, const void* source, size_t nbytes, int pe);
/* Copies nbytes from symmetric `source` on `pe` into local `dest`; complete on return. */
int pyshmem_getmem(void* dest, const void* source, size_t nbytes, int pe);
/* Non-blocking forms: return at once; complete (source reusable / dest valid) after
 * pyshmem_quiet (or a barrier). Toward PEs reached by load/store they complete in the
 * call, which the model allows. The buffers must stay valid until then. */
int pyshmem_putmem_nbi(void* dest, const void* source, size_t nbytes, int pe);
int pyshmem_getmem_nbi(void* dest, const void* source, size_t nbytes, int pe);
/* Strided: element i (elem_size bytes, > 0) moves from source[i*sst] to
 * dest[i*dst]; strides in elements, >= 1 (INVALID_ARG otherwise). Completion as for
 * putmem/getmem. */
int pyshmem_iputmem(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                    size_t elem_size, int pe);
int pyshmem_igetmem(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                    size_t elem_size, int pe);

/* ---- atomics ---- */
/* Generic AMO on symmetric `dest` on `pe`: op is a pyshmem_amo_op, dtype a
 * pyshmem_dtype; value/cond point at one element (NULL when unused); the previous value
 * is written to fetch_out when non-NULL. Atomic with respect to every other atomic on
 * the same word through pyshmem (host or device API), not to plain stores. Fetching
 * operations are complete on return; non-fetching ones are visible at `pe` after
 * quiet, ordered with puts to `pe` by fence. TYPE: the op is not defined for the dtype
 * (bitwise ops on floats); INVALID_ARG: dest not aligned to its element size. */
int pyshmem_atomic(int op, int dtype, void* dest, const void* value, const void* cond, int pe, void* fetch_out);
/* Typed conveniences for the common 64-bit cases. */
int pyshmem_int64_atomic_fetch_add(int64_t* dest, int64_t value, int pe, int64_t* fetch_out);
int pyshmem_int64_atomic_compare_swap(int64_t* dest, int64_t cond, int64_t value, int pe, int64_t* fetch_out);
int pyshmem_uint64_atomic_fetch(const uint64_t* source, int pe, uint64_t* fetch_out);

/* ---- signals ---- */
/* Puts nbytes, then updates the symmetric uint64 sig_addr on pe with sig_op
 * (PYSHMEM_SIGNAL_SET/ADD): a PE that sees the new signal value sees the data. Returns
 * when source may be reused (_nbi: after quiet); INVALID_ARG for another sig_op or an
 * unaligned signal. */
int pyshmem_putmem_signal(void* dest, const void* source, size_t nbytes, uint64_t* sig_addr, uint64_t signal,
                          int sig_op, int pe);
int pyshmem_putmem_signal_nbi(void* dest, const void* source, size_t nbytes, uint64_t* sig_addr,
                              uint64_t signal, int sig_op, int pe);
/* Reads this PE's copy of the signal (an atomic load, acquire). */
int pyshmem_signal_fetch(const uint64_t* sig_addr, uint64_t* value_out);
/* Blocks until this PE's signal compares `cmp` (PYSHMEM_CMP_*) to value, then writes the
 * satisfying value: acquire, so the data of the put_signal that set it is visible. The
 * wait spins, yields, then sleeps (core/backoff.h); INVALID_ARG for a bad cmp. */
int pyshmem_signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t value, uint64_t* value_out);

/* ---- point-to-point synchronisation ---- */
/* ivar: this PE's copy of a symmetric integer (dtype: 16/32/64-bit int or uint);
 * value: one element of that type. wait_until blocks until `*ivar cmp value` holds;
 * test writes 1 or 0 at once. Both are acquire operations: stores delivered before the
 * one that satisfied the condition are visible after. INVALID_ARG for a bad cmp, TYPE
 * for a dtype that is not a wait type. */
int pyshmem_wait_until(const void* ivar, int dtype, int cmp, const void* value);
int pyshmem_test(const void* ivar, int dtype, int cmp, const void* value, int* satisfied_out);

/* ---- ordering and barriers over all PEs ----
 * fence: puts, AMOs and signals issued before it to a PE are delivered there before
 * those issued after it (per PE; no completion). quiet: every put, non-fetching AMO,
 * signal and nbi operation this PE issued (from any thread, and from device code
 * through the proxy) is complete and visible at its target. barrier_all: quiet, then
 * every PE meets. sync_all: every PE meets, completing nothing. All four are collective
 * only for the barriers (every PE must call them, in the same order). */
int pyshmem_fence(void);
int pyshmem_quiet(void);
int pyshmem_barrier_all(void);
int pyshmem_sync_all(void);

/* ---- teams (pyshmem/team.h: PYSHMEM_TEAM_WORLD, _SHARED, _INVALID) ---- */
typedef struct pyshmem_team_config {
  int num_contexts;
} pyshmem_team_config;
#define PYSHMEM_TEAM_NUM_CONTEXTS 1L /* config_mask bit */
/* This PE's number in `team` (-1 when not a member) and the team's size; INVALID_ARG for
 * a destroyed or never-created team handle. Local. */
int pyshmem_team_my_pe(int team, int* pe_out);
int pyshmem_team_n_pes(int team, int* npes_out);
/* *pe_out = -1 when src_pe of src_team is not a member of dest_team. */
int pyshmem_team_translate_pe(int src_team, int src_pe, int dest_team, int* pe_out);
/* Collective over parent: members start + i*stride (parent numbering), i < size. PEs
 * outside the new team get PYSHMEM_TEAM_INVALID. Fails (on every PE of the node, and on
 * every PE with PYSHMEM_DEBUG=1) when PEs pass different arguments, and on every member
 * when no team slot is free on all of them (PYSHMEM_MAX_TEAMS). config may be NULL. */
int pyshmem_team_split_strided(int parent, int start, int stride, int size, const pyshmem_team_config* config,
                               long config_mask, int* team_out);
/* Collective over parent: parent PE i sits at (i % xrange, i / xrange); *xteam_out gets my
 * row (same y), *yteam_out my column (same x). */
int pyshmem_team_split_2d(int parent, int xrange, const pyshmem_team_config* xconfig, long xmask,
                          const pyshmem_team_config* yconfig, long ymask, int* xteam_out, int* yteam_out);
/* Frees this PE's entry (local; OpenSHMEM requires the members to call it, in the same
 * order as their splits); INVALID_ARG for WORLD/SHARED and for a team already destroyed. */
int pyshmem_team_destroy(int team);

/* ---- collectives over a team (collective: every member calls, same sizes) ----
 * On return: complete on the calling PE (dest holds the result, source reusable). No
 * prior puts are completed except by pyshmem_barrier (= quiet + team sync). source and
 * dest are symmetric; dest == source is allowed for broadcast and reduce only. A member
 * that rejects its arguments still meets the others, so every member fails together
 * (MISMATCH where the members disagree: sizes, root, op, dtype; INVALID_ARG where dest
 * cannot hold the result); INVALID_ARG when this PE is not a member of `team`. */
int pyshmem_team_sync(int team);
int pyshmem_barrier(int team);
/* dest on every member <- nbytes of source on team PE root. */
int pyshmem_broadcastmem(int team, void* dest, const void* source, size_t nbytes, int root);
/* dest[i*nbytes] <- member i's source (nbytes, the same on every member). */
int pyshmem_fcollectmem(int team, void* dest, const void* source, size_t nbytes);
/* Like fcollectmem with per-member nbytes, concatenated in team order; dest_bytes is the
 * capacity of dest (checked). */
int pyshmem_collectmem(int team, void* dest, size_t dest_bytes, const void* source, size_t nbytes);
/* Block j (nbytes) of source -> block (my team PE) of member j's dest. */
int pyshmem_alltoallmem(int team, void* dest, const void* source, size_t nbytes);
/* Strided alltoall: element i of block j at source[(j*nelems+i)*sst], dest[(j*nelems+i)*dst]. */
int pyshmem_alltoallsmem(int team, void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                         size_t elem_size);
/* dest[i] = source_0[i] op ... op source_(n-1)[i] over the members in team order (the same
 * bits on every member). dtype: pyshmem_dtype (complex and long double included); op: pyshmem_reduce_op. */
int pyshmem_reduce(int team, void* dest, const void* source, size_t nelems, int dtype, int op);

/* ---- locks: lock is a symmetric int64 set to 0 on every PE ----
 * A fair (ticket) lock: set_lock blocks until this PE holds it, in request order, and
 * acquires (what the previous holder stored before clear_lock is visible). clear_lock
 * completes this PE's puts (quiet) and releases it; INVALID_ARG when the lock is not
 * held. Locks are 8-byte aligned (INVALID_ARG otherwise). */
int pyshmem_set_lock(int64_t* lock);
/* *held_out = 0 when the lock was acquired, 1 when it is held by someone (OpenSHMEM). */
int pyshmem_test_lock(int64_t* lock, int* held_out);
int pyshmem_clear_lock(int64_t* lock);

#ifdef __cplusplus
}
#endif
#endif /* PYSHMEM_PYSHMEM_H */
