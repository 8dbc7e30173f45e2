/* A C program using only the public C API (pyshmem/pyshmem.h): ring put, atomics,
 * put_signal, lock. Run under shmemrun; prints "OK pe=<k>" on success. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyshmem/device_state.h"
#include "pyshmem/pyshmem.h"

#define CHECK(call)                                                              \
  do {                                                                           \
    int rc_ = (call);                                                            \
    if (rc_ != PYSHMEM_SUCCESS) {                                                \
      fprintf(stderr, "%s failed (%d): %s\n", #call, rc_, pyshmem_last_error()); \
      return 1;                                                                  \
    }                                                                            \
  } while (0)

int main(void) {
  int me, n;
  long scratch = 0;
  /* Before init every call fails with NOT_INIT and says how to fix it. */
  if (pyshmem_putmem(&scratch, &scratch, sizeof scratch, 0) != PYSHMEM_ERR_NOT_INIT ||
      strstr(pyshmem_last_error(), "before init") == NULL) {
    fprintf(stderr, "expected NOT_INIT before init, got: %s\n", pyshmem_last_error());
    return 1;
  }
  CHECK(pyshmem_init());
  CHECK(pyshmem_my_pe(&me));
  CHECK(pyshmem_n_pes(&n));
  long* ring;
  int64_t* counter;
  uint64_t* sig;
  int64_t* lock;
  CHECK(pyshmem_calloc(8, sizeof(long), (void**)&ring));
  CHECK(pyshmem_calloc(1, sizeof(int64_t), (void**)&counter));
  CHECK(pyshmem_calloc(1, sizeof(uint64_t), (void**)&sig));
  CHECK(pyshmem_calloc(1, sizeof(int64_t), (void**)&lock));

  long mine[8];
  for (int i = 0; i < 8; ++i) mine[i] = me * 100 + i;
  CHECK(pyshmem_putmem(ring, mine, sizeof mine, (me + 1) % n));
  CHECK(pyshmem_barrier_all());
  int left = (me + n - 1) % n;
  for (int i = 0; i < 8; ++i)
    if (ring[i] != left * 100 + i) {
      fprintf(stderr, "ring[%d] = %ld, expected %d\n", i, ring[i], left * 100 + i);
      return 1;
    }

  /* Non-blocking puts of distinct sources, completed by one quiet (over UCX with
     PYSHMEM_REMOTE_ONLY=1 they really are in flight until then). They overlap, so a
     fence between them makes the last one the one that stays. */
  CHECK(pyshmem_barrier_all()); /* everyone checked the first ring before it is overwritten */
  long burst[64][8];
  for (int k = 0; k < 64; ++k)
    for (int i = 0; i < 8; ++i) burst[k][i] = me * 100000 + k * 10 + i;
  for (int k = 0; k < 64; ++k) {
    CHECK(pyshmem_putmem_nbi(ring, burst[k], sizeof burst[k], (me + 1) % n));
    CHECK(pyshmem_fence());
  }
  CHECK(pyshmem_quiet());
  CHECK(pyshmem_barrier_all());
  for (int i = 0; i < 8; ++i)
    if (ring[i] != left * 100000 + 63 * 10 + i) {
      fprintf(stderr, "after put_nbi burst ring[%d] = %ld\n", i, ring[i]);
      return 1;
    }

  int64_t old;
  for (int i = 0; i < 100; ++i) CHECK(pyshmem_int64_atomic_fetch_add(counter, 1, 0, &old));
  CHECK(pyshmem_barrier_all());
  if (me == 0 && *counter != 100 * n) {
    fprintf(stderr, "counter = %lld, expected %d\n", (long long)*counter, 100 * n);
    return 1;
  }

  /* put_signal: every PE sends its first element (me * 100) to its own slot of PE 0's
     ring and adds 1 to PE 0's signal; once the signal says n, all n slots have landed. */
  CHECK(pyshmem_putmem_signal(ring + me % 8, mine, sizeof(long), sig, 1, PYSHMEM_SIGNAL_ADD, 0));
  if (me == 0) {
    uint64_t got;
    CHECK(pyshmem_signal_wait_until(sig, PYSHMEM_CMP_EQ, (uint64_t)n, &got));
    if (got != (uint64_t)n) return 1;
    for (int k = 0; k < n && k < 8; ++k)
      if (ring[k] != k * 100L) {
        fprintf(stderr, "after the signal said %d, ring[%d] = %ld, expected %d\n", n, k, ring[k], k * 100);
        return 1;
      }
  }
  CHECK(pyshmem_set_lock(lock));
  CHECK(pyshmem_clear_lock(lock));
  int held;
  void* p;
  const char* remote_only = getenv("PYSHMEM_REMOTE_ONLY");
  const int all_remote = remote_only && strcmp(remote_only, "1") == 0 && n > 1;
  CHECK(pyshmem_ptr(ring, (me + 1) % n, &p));
  if (!p != all_remote) return 1; /* peers' memory is mapped unless every peer is remote */
  /* The device state gives the same peer addresses as pyshmem_ptr, by arithmetic. */
  const pyshmem_device_state* ds;
  CHECK(pyshmem_device_state_get(&ds));
  if (ds->version != PYSHMEM_DEVICE_STATE_VERSION || ds->my_pe != me || ds->n_pes != n) return 1;
  for (int pe = 0; pe < n; ++pe) {
    void* q;
    CHECK(pyshmem_ptr(ring, pe, &q));
    uint64_t computed = (uint64_t)(uintptr_t)ring + (uint64_t)((int64_t)(pe - me) * (int64_t)ds->heap_stride);
    if (all_remote && pe != me) {
      if (q || (ds->peer_flags[pe] & PYSHMEM_PEER_LOAD_STORE)) return 1;
      continue;
    }
    if (!(ds->peer_flags[pe] & PYSHMEM_PEER_LOAD_STORE) || (uint64_t)(uintptr_t)q != computed) {
      fprintf(stderr, "device state disagrees with pyshmem_ptr for PE %d\n", pe);
      return 1;
    }
  }
  if ((uint64_t)(uintptr_t)ring < ds->heap_base + (uint64_t)me * ds->heap_stride + ds->user_offset) return 1;
  CHECK(pyshmem_barrier_all());
  if (me == 0) { /* nobody holds the lock after the barrier: test_lock takes it */
    CHECK(pyshmem_test_lock(lock, &held));
    if (held) return 1;
    CHECK(pyshmem_test_lock(lock, &held));
    if (!held) return 1;
    CHECK(pyshmem_clear_lock(lock));
  }
  CHECK(pyshmem_barrier_all());
  if (pyshmem_putmem(ring, mine, 8, n + 5) != PYSHMEM_ERR_PE_RANGE) return 1;
  if (strstr(pyshmem_last_error(), "out of range") == NULL) return 1;
  /* A stride whose extent overflows must be refused, not wrap around the range check. */
  if (pyshmem_iputmem(ring, mine, (ptrdiff_t)1 << 60, 1, 3, 8, me) != PYSHMEM_ERR_INVALID_ARG ||
      strstr(pyshmem_last_error(), "overflows") == NULL) {
    fprintf(stderr, "expected an overflow error, got: %s\n", pyshmem_last_error());
    return 1;
  }
  CHECK(pyshmem_free(ring));
  CHECK(pyshmem_finalize());
  if (pyshmem_device_state_get(&ds) != PYSHMEM_ERR_NOT_INIT) return 1;
  if (pyshmem_barrier_all() != PYSHMEM_ERR_NOT_INIT || strstr(pyshmem_last_error(), "after finalize") == NULL) {
    fprintf(stderr, "expected NOT_INIT after finalize, got: %s\n", pyshmem_last_error());
    return 1;
  }
  printf("OK pe=%d\n", me);
  return 0;
}
