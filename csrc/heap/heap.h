// heap/heap.h: creating, sharing and tearing down the CPU symmetric heap.
//
// Each PE backs its segment with an anonymous memfd. The fds are passed to the other PEs
// of the node over a Unix socket (SCM_RIGHTS) and every PE maps them into its reserved
// range; then every fd is closed. The segments have no name anywhere in the filesystem
// (nothing in /dev/shm, ever), so they vanish with the last process that maps them, even
// when PEs are killed with SIGKILL.
#pragma once

#include <string>
#include <vector>

#include "core/state.h"

namespace pyshmem {

// Creates this PE's segment (s.config.SYMMETRIC_SIZE of user heap + system area),
// reserves the address range for all PEs and maps its own segment.
void heap_create(State& s);

// Exchanges segment fds with the PEs in s.local_pes and maps theirs. Collective over the
// job (uses the bootstrap). `token` is a secret known only to the PEs of this job.
void heap_attach_peers(State& s, const std::string& token);

// Unmaps everything. Safe to call on a partly created heap (failed init).
void heap_destroy(State& s);

// At finalize: symmetric arrays may outlive the runtime in Python, and touching
// unmapped memory would crash the process. This PE's own segment stays mapped (its
// data stays readable); peer slots are replaced by private anonymous memory, so stale
// views of peers read zeros instead of faulting. Everything goes at process exit.
void heap_retire(State& s);

// Sends `fd` to each local peer and receives one fd from each (index = PE, -1 for self
// and for PEs not in `local_pes`). Used by the CPU heap and, later, for CUDA VMM handles.
std::vector<int> fd_exchange(State& s, int fd, const std::string& token, const char* what);

}  // namespace pyshmem
