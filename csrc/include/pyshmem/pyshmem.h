/* pyshmem/pyshmem.h: the host C API of pyshmem (OpenSHMEM names, `pyshmem_` prefix).
 *
 * Every function returns a pyshmem_status (0 = PYSHMEM_SUCCESS) and passes results
 * through output arguments, which come last. On failure pyshmem_last_error() returns
 * a message naming the call, the PE and the fix.
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

/* Message of the last failed call on this thread ("" if none). */
const char* pyshmem_last_error(void);

/* ---- setup ---- */
/* Collective. Reads PYSHMEM_* variables set by shmemrun; a process started without a
 * launcher is a single-PE job. A no-op when already initialised. */
int pyshmem_init(void);
/* Collective: barrier, then unmap the heap. The runtime cannot be re-initialised. */
int pyshmem_finalize(void);
int pyshmem_my_pe(int* pe_out);
int pyshmem_n_pes(int* npes_out);
/* Ends this PE immediately with `status`; the launcher ends the other PEs. */
void pyshmem_global_exit(int status);
int pyshmem_info_get_version(int* major_out, int* minor_out);
/* Writes the NUL-terminated vendor string into name (PYSHMEM_MAX_NAME_LEN bytes). */
int pyshmem_info_get_name(char* name_out);

/* ---- symmetric memory (collective; each ends with a barrier) ---- */
int pyshmem_malloc(size_t size, void** ptr_out);
int pyshmem_calloc(size_t count, size_t size, void** ptr_out);
/* alignment: a power of two. */
int pyshmem_align(size_t alignment, size_t size, void** ptr_out);
int pyshmem_free(void* ptr);
/* Address of `dest` on `pe` usable by load/store, or NULL in *ptr_out when not reachable. */
int pyshmem_ptr(const void* dest, int pe, void** ptr_out);
int pyshmem_pe_accessible(int pe, int* accessible_out);
int pyshmem_addr_accessible(const void* addr, int pe, int* accessible_out);

/* ---- RMA ---- */
/* Copies nbytes from local `source` to symmetric `dest` on `pe`. Returns when source
 * may be reused; visible at `pe` after quiet. */
int pyshmem_putmem(void* dest, const void* source, size_t nbytes, int pe);
/* Copies nbytes from symmetric `source` on `pe` into local `dest`; complete on return. */
int pyshmem_getmem(void* dest, const void* source, size_t nbytes, int pe);
/* Non-blocking forms: complete (source reusable / dest valid) after quiet. */
int pyshmem_putmem_nbi(void* dest, const void* source, size_t nbytes, int pe);
int pyshmem_getmem_nbi(void* dest, const void* source, size_t nbytes, int pe);
/* Strided: element i (elem_size bytes) moves from source[i*sst] to dest[i*dst];
 * strides in elements, >= 1. */
int pyshmem_iputmem(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                    size_t elem_size, int pe);
int pyshmem_igetmem(void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems,
                    size_t elem_size, int pe);

/* ---- atomics ---- */
/* Generic AMO: op is a pyshmem_amo_op, dtype a pyshmem_dtype; value/cond point at one
 * element (NULL when unused); the previous value is written to fetch_out when non-NULL.
 * Sequentially consistent; complete on return. */
int pyshmem_atomic(int op, int dtype, void* dest, const void* value, const void* cond, int pe, void* fetch_out);
/* Typed conveniences for the common 64-bit cases. */
int pyshmem_int64_atomic_fetch_add(int64_t* dest, int64_t value, int pe, int64_t* fetch_out);
int pyshmem_int64_atomic_compare_swap(int64_t* dest, int64_t cond, int64_t value, int pe, int64_t* fetch_out);
int pyshmem_uint64_atomic_fetch(const uint64_t* source, int pe, uint64_t* fetch_out);

/* ---- signals ---- */
/* Puts nbytes, then updates sig_addr on pe with sig_op (PYSHMEM_SIGNAL_SET/ADD);
 * the data is visible before the signal. */
int pyshmem_putmem_signal(void* dest, const void* source, size_t nbytes, uint64_t* sig_addr, uint64_t signal,
                          int sig_op, int pe);
int pyshmem_putmem_signal_nbi(void* dest, const void* source, size_t nbytes, uint64_t* sig_addr,
                              uint64_t signal, int sig_op, int pe);
int pyshmem_signal_fetch(const uint64_t* sig_addr, uint64_t* value_out);
/* Blocks until the local signal compares `cmp` to value; returns the satisfying value. */
int pyshmem_signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t value, uint64_t* value_out);

/* ---- point-to-point synchronisation ---- */
/* ivar: symmetric integer (dtype: 16/32/64-bit int or uint); value: one element. */
int pyshmem_wait_until(const void* ivar, int dtype, int cmp, const void* value);
int pyshmem_test(const void* ivar, int dtype, int cmp, const void* value, int* satisfied_out);

/* ---- ordering and barriers over all PEs ---- */
int pyshmem_fence(void);
int pyshmem_quiet(void);
int pyshmem_barrier_all(void);
int pyshmem_sync_all(void);

/* ---- teams (pyshmem/team.h: PYSHMEM_TEAM_WORLD, _SHARED, _INVALID) ---- */
typedef struct pyshmem_team_config {
  int num_contexts;
} pyshmem_team_config;
#define PYSHMEM_TEAM_NUM_CONTEXTS 1L /* config_mask bit */
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
/* Frees this PE's entry; fails for WORLD/SHARED and for a team already destroyed. */
int pyshmem_team_destroy(int team);

/* ---- collectives over a team (collective: every member calls, same sizes) ----
 * On return: complete on the calling PE (dest holds the result, source reusable). No
 * prior puts are completed except by pyshmem_barrier (= quiet + team sync). source and
 * dest are symmetric; dest == source is allowed for broadcast and reduce only. */
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

/* ---- locks: lock is a symmetric int64 set to 0 on every PE ---- */
int pyshmem_set_lock(int64_t* lock);
/* *held_out = 0 when the lock was acquired, 1 when it is held by someone (OpenSHMEM). */
int pyshmem_test_lock(int64_t* lock, int* held_out);
int pyshmem_clear_lock(int64_t* lock);

#ifdef __cplusplus
}
#endif
#endif /* PYSHMEM_PYSHMEM_H */
