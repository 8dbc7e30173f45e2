// host/host.h: the C++ host API of the core (namespace pyshmem), used by the Python
// binding and wrapped by the C ABI in include/pyshmem/pyshmem.h.
//
// Every function throws pyshmem::Error on bad input or failure. `call` is the name the
// user called (e.g. "pyshmem.put"), used in error messages. Symmetric addresses are
// addresses in this PE's own heap (its copy of a symmetric object).
//
// Completion and ordering (OpenSHMEM 1.5; see docs/memory_model.md):
//  - put/iput/put_signal return when the source buffer may be reused. The data is
//    visible at the target after quiet(); fence() orders puts to the same PE.
//  - get/iget/atomics return with the result in place.
//  - put_signal: the data is visible at the target before the signal update.
//  - wait_until/test/signal_wait_until are acquire operations: data put before the
//    signal/flag that satisfied them is visible afterwards.
//  - barrier_all = quiet + barrier; sync_all = barrier without completing puts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "heap/symmetric.h"
#include "pyshmem/types.h"

namespace pyshmem {

struct State;

// ---- setup (host/init.cpp) ----
void init();               // collective; a no-op when already initialised
void finalize();           // collective; the runtime cannot be re-initialised afterwards
bool is_initialized();
bool is_finalized();
int my_pe();
int n_pes();
[[noreturn]] void global_exit(int status);
std::string describe();     // multi-line human summary for `python -m pyshmem info`

// ---- memory (host/memory.cpp) ----
// Collective: every PE must call with the same size/align in the same order. Ends with
// a barrier so that no PE accesses the object on a peer that has not allocated it yet.
void* sym_malloc(size_t size, size_t align, bool clear, const char* call);
void sym_free(void* ptr, const char* call);  // collective, ends with a barrier
// Collective symmetric allocation in the GPU heap (host/gpu_memory.cpp); returns its
// device address (the same offset on every PE). `clear` zeroes it. Throws NOMEM with
// the variable to raise, NOT_IMPLEMENTED without a GPU heap.
uint64_t gpu_malloc(size_t size, size_t align, bool clear, const char* call);
// Collective release of an object gpu_malloc returned; no PE still accesses it after.
void gpu_free(uint64_t addr, const char* call);
// With PYSHMEM_DEBUG=1: checks that every PE passed the same `mine` (an encoding of the
// arguments of collective call `call`); throws MISMATCH naming the first PE that did not.
// `mine` is readable: the message shows the differing PE's value next to this PE's.
void collective_check_args(State& s, const char* call, const std::string& what, const std::string& mine);
// "N bytes[, alignment A]": an allocation request as collective_check_args shows it.
std::string describe_request(size_t size, size_t align);
// The agreement step of a collective allocation or free (host or GPU heap): every PE
// arrives, failed or not (team_sync_agree over the world), so PEs stay in step when only
// some fail. Throws on the PEs that did not fail when another did; `what` ("allocate")
// names the step in that message. A failed PE raises its own error afterwards.
void heap_agree(const char* call, const char* what, bool failed);
// "" when is_symmetric(addr, nbytes) (heap/symmetric.h: within one live allocation, the
// bytes its caller asked for); else why not, naming `role`, with *status set
// (NOT_SYMMETRIC outside the heap, INVALID_ARG for freed or out-of-bounds ranges).
std::string symmetric_problem(const char* role, const void* addr, size_t nbytes, pyshmem_status* status);
// Collective (every PE, in the order of its allocations): meets the other PEs in an
// allocation this PE rejected before asking for memory (e.g. a negative shape in
// Python), so they fail too instead of desynchronising. Returns normally (the caller
// raises its own error), except for the MISMATCH that PYSHMEM_DEBUG=1 raises on every PE.
void sym_malloc_reject(const char* call);
size_t sym_bytes_free();
size_t sym_capacity();
void* sym_ptr(const void* addr, int pe, const char* call);  // nullptr when not load/store reachable
bool pe_accessible(int pe);
bool addr_accessible(const void* addr, int pe);

// ---- RMA (host/rma.cpp) ----
void putmem(void* dest, const void* src, size_t nbytes, int pe, const char* call);
// May return before `src` is read: reuse it only after quiet (transports without a
// non-blocking put complete it at once).
void putmem_nbi(void* dest, const void* src, size_t nbytes, int pe, const char* call);
// True when putmem_nbi toward pe returns before `src` has been read (the transport
// that reaches pe has non-blocking puts): the caller keeps src alive until quiet.
bool putmem_nbi_deferred(int pe);
void getmem(void* dest, const void* src, size_t nbytes, int pe, const char* call);
// May return before `dest` is written: read it only after quiet.
void getmem_nbi(void* dest, const void* src, size_t nbytes, int pe, const char* call);
// True when non-blocking gets and fetching nbi atomics toward pe write their local
// result after returning (the ordering check holds them): the caller keeps it alive
// until quiet. (putmem_nbi_deferred says the same of put_nbi's source.)
bool nbi_deferred(int pe);
// Strided: element i goes from src[i*sst] to dest[i*tst] (strides in elements of elem bytes).
void iputmem(void* dest, const void* src, ptrdiff_t tst, ptrdiff_t sst, size_t nelems, size_t elem, int pe,
             const char* call);
void igetmem(void* dest, const void* src, ptrdiff_t tst, ptrdiff_t sst, size_t nelems, size_t elem, int pe,
             const char* call);

// ---- atomics (host/amo.cpp) ----
// op: pyshmem_amo_op; dtype: pyshmem_dtype. `value`/`cond` point at one element of the
// dtype (may be null when the op takes none); `fetch` receives the old value (or null).
// nbi: a fetching form whose `fetch` is valid after quiet (the caller keeps it alive).
void atomic(int op, int dtype, void* dest, const void* value, const void* cond, void* fetch, int pe, const char* call,
            bool nbi = false);

// ---- signals (host/signal.cpp) ----
void putmem_signal(void* dest, const void* src, size_t nbytes, uint64_t* sig_addr, uint64_t signal, int sig_op,
                   int pe, const char* call);
uint64_t signal_fetch(const uint64_t* sig_addr, const char* call);
uint64_t signal_wait_until(uint64_t* sig_addr, int cmp, uint64_t value, const char* call);

// ---- point-to-point synchronisation (host/wait.cpp) ----
enum WaitMode { kWaitAll = 0, kWaitAny = 1, kWaitSome = 2 };
// True when ivar (one element of dtype) compares `cmp` to *value.
bool test(const void* ivar, int dtype, int cmp, const void* value, const char* call);
void wait_until(const void* ivar, int dtype, int cmp, const void* value, const char* call);

// The same on symmetric GPU memory (cuda backend; `ivar`/`sig` are addresses in this
// PE's GPU heap): each poll copies the variable to the host (host/gpu_wait.cpp).
bool gpu_test(uint64_t ivar, int dtype, int cmp, const void* value, const char* call);
void gpu_wait_until(uint64_t ivar, int dtype, int cmp, const void* value, const char* call);
uint64_t gpu_signal_fetch(uint64_t sig, const char* call);
uint64_t gpu_signal_wait_until(uint64_t sig, int cmp, uint64_t value, const char* call);
// wait_vector's semantics on `nelems` GPU variables at `ivars` (each poll copies them all).
size_t gpu_wait_vector(WaitMode mode, bool blocking, uint64_t ivars, size_t nelems, const int* status, int dtype,
                       int cmp, const void* values, bool vector, std::vector<size_t>* indices, const char* call);
// Vector forms over nelems contiguous ivars. status (nullable) excludes elements whose
// entry is non-zero. values points at one value, or at nelems values when `vector`.
// blocking=false tests once. Returns: for kWaitAll 1/0 (satisfied or not); for kWaitAny
// an index or SIZE_MAX; for kWaitSome the count, with indices appended to `indices`.
size_t wait_vector(WaitMode mode, bool blocking, const void* ivars, size_t nelems, const int* status, int dtype,
                   int cmp, const void* values, bool vector, std::vector<size_t>* indices, const char* call);

// ---- ordering and barriers (host/sync.cpp) ----
void fence();
void quiet();
void barrier_all(const char* call);
void sync_all(const char* call);

// ---- locks (host/lock.cpp) ----
// `lock` is a symmetric int64 initialised to 0 on every PE; its copy on PE 0 is the lock word.
void set_lock(int64_t* lock, const char* call);
bool test_lock(int64_t* lock, const char* call);  // true when acquired (note: the C ABI inverts it)
void clear_lock(int64_t* lock, const char* call);

// Polls *addr (dtype) until it compares `cmp` to value; shared by waits, signals, locks.
bool compare(const void* a, int dtype, int cmp, const void* b);

}  // namespace pyshmem
