/* pyshmem/team.h: teams as the host API, the device API and the Python binding see them.
 *
 * A team is an ordered subset of the world's PEs given by a triplet: team index i is
 * world PE start + i * stride, for i < size. A team handle is an int:
 *   PYSHMEM_TEAM_WORLD (0), PYSHMEM_TEAM_SHARED (1), PYSHMEM_TEAM_INVALID (-1), and for
 *   teams made by a split, (generation << 16) | index, where `index` selects the entry
 *   of the team table and the team's synchronisation slot. The generation makes a
 *   handle of a destroyed team fail instead of naming whichever team reuses its index.
 *
 * Every member of a team uses the same index, so the team's synchronisation slot sits
 * at the same offset in every member's segment (symmetric). Slot layout, at
 *   segment base + team_pool_offset + index * team_slot_bytes:
 *   [0, 64)                    uint64 epoch: barriers this PE entered on the team
 *   [64 + 64 r, 128 + 64 r)    uint64 arrivals of dissemination round r (r < team_rounds)
 *   [64 + 64 team_rounds, ...) publish area: words a PE exposes to the team's members
 *                              during a collective (counts, masks)
 * Counters only grow while a team lives; a new team's members zero its slot before the
 * split that creates it returns. */
#ifndef PYSHMEM_TEAM_H
#define PYSHMEM_TEAM_H

#include "pyshmem/stdint.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PYSHMEM_TEAM_WORLD 0
#define PYSHMEM_TEAM_SHARED 1
#define PYSHMEM_TEAM_INVALID (-1)
#define PYSHMEM_TEAM_INDEX(handle) ((handle) & 0xffff)
#define PYSHMEM_TEAM_GENERATION(handle) ((uint32_t)(handle) >> 16)
#define PYSHMEM_TEAM_MAX_INDEX 0x10000 /* the index field's range */

/* One entry of the team table (32 bytes). Entries of teams this PE is not part of, and
 * free entries, have my_index == -1. */
typedef struct pyshmem_team_desc {
  int32_t start;          /* world PE of team index 0 */
  int32_t stride;         /* world PEs between consecutive members (>= 1) */
  int32_t size;           /* number of members */
  int32_t my_index;       /* this PE's index in the team, -1 when not a member */
  uint32_t generation;    /* matches PYSHMEM_TEAM_GENERATION of the live handle */
  uint32_t num_contexts;  /* the team's config (OpenSHMEM team_config_t.num_contexts) */
  uint32_t pad[2];
} pyshmem_team_desc;

#define PYSHMEM_TEAM_SLOT_HEADER 64u /* bytes before the round counters */

#ifdef __cplusplus
}
#endif
#endif /* PYSHMEM_TEAM_H */
