// coll/coll.h: collective operations over teams, called from the host (OpenSHMEM 1.5
// team-based collectives).
//
// Every routine is collective over the team: all members call it, in the same order
// as their other collectives on that team, with matching arguments (sizes, root, op).
// Mismatches among PEs of one node are detected on every call, among PEs of different
// nodes with PYSHMEM_DEBUG=1; all members then fail with the same error instead of
// hanging. A member that rejects its own arguments makes every member fail, on any
// transport (team_sync_agree). A PE outside the team may not call.
//
// Completion: on return the routine is complete on the calling PE: `dest` holds the
// result and `source` may be modified. No prior puts are completed (use barrier or
// quiet for that), except by barrier().
//
// Memory: `source` must be symmetric (peers read it); `dest` must be symmetric too, as
// OpenSHMEM requires (some algorithms read peers' dest). Sizes are bytes unless named
// nelems. source and dest may be the same object for broadcast and reduce, and must
// not otherwise overlap.
//
// Algorithms (docs/design.md "Collectives"): the barrier is a dissemination barrier
// (ceil(log2 n) rounds); the data collectives pull from peers' symmetric buffers between
// two team barriers, which on one node is a copy straight out of the peer's segment;
// large reductions switch to reduce-scatter + all-gather (PYSHMEM_REDUCE_ALGO).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pyshmem {

// quiet, then team_sync.
void barrier(int team, const char* call);
// `root` is a PE number within the team. dest on every member (root included) gets
// root's nbytes of source.
void broadcast(int team, void* dest, const void* source, size_t nbytes, int root, const char* call);
// dest[i*nbytes ...] gets team member i's source (nbytes, equal on every member).
void fcollect(int team, void* dest, const void* source, size_t nbytes, const char* call);
// Like fcollect with per-PE sizes: member i's bytes follow those of members < i.
// nbytes must be a multiple of elem; dest_bytes is dest's capacity (checked).
void collect(int team, void* dest, size_t dest_bytes, const void* source, size_t nbytes, size_t elem,
             const char* call);
// Block j (nbytes) of my source goes to block (my index) of member j's dest.
void alltoall(int team, void* dest, const void* source, size_t nbytes, const char* call);
// Strided alltoall: element i of block j is source[(j*nelems + i)*sst] / dest[(j*nelems + i)*dst]
// (strides in elements of elem bytes, >= 1).
void alltoalls(int team, void* dest, const void* source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, size_t elem,
               const char* call);
// dest[i] = source_0[i] op source_1[i] op ... over the members in team order (every
// member gets the bitwise-same result). dtype: pyshmem_dtype (complex types included);
// op: pyshmem_reduce_op. Integer arithmetic wraps around.
void reduce(int team, void* dest, const void* source, size_t nelems, int dtype, int op, const char* call);

// Meets the team's members in a collective whose arguments this PE rejected before
// calling it (e.g. in the Python binding): the members' begin/finish barriers stay
// paired, and every other member fails naming this PE. Throws nothing; collective over
// `team` (a team this PE is not a member of cannot be met: it returns at once).
void collective_reject(int team, const char* call);

// True when `op` is defined for `dtype` (and/or/xor: integers; max/min: not complex).
bool reduce_supported(int dtype, int op);
const char* reduce_op_name(int op);

}  // namespace pyshmem
