"""Port of shmem4py's demo/race_winner.py: the first compare-and-swap on PE 0 wins.

Every PE tries to swap -1 for its own number in PE 0's copy of a 1-element array; the
returned old value is a Python int, and exactly one PE sees -1. Prints ``OK pe=<me>``.
"""

import pyshmem as shmem

mype, npes = shmem.my_pe(), shmem.n_pes()

race_winner = shmem.array([-1])            # int64, collective, ends with sync_all
winners = shmem.zeros(1, dtype='i')

oldval = shmem.atomic_compare_swap(race_winner, -1, mype, 0)
assert type(oldval) is int, f"PE {mype}: atomic_compare_swap returned {type(oldval).__name__}"
if oldval == -1:
    print(f"PE {mype} was first", flush=True)
    shmem.atomic_inc(winners, 0)
else:
    assert 0 <= oldval < npes, f"PE {mype}: old value {oldval} is not a PE number"

shmem.barrier_all()
if mype == 0:
    assert winners[0] == 1, f"{winners[0]} PEs think they won"
    assert 0 <= race_winner[0] < npes, f"race_winner holds {race_winner[0]}"
seen = shmem.atomic_fetch(race_winner, 0)        # the winner's number, for every PE
expected = mype if oldval == -1 else oldval
assert seen == expected, f"PE {mype}: PE 0 names winner {seen}, my compare_swap saw {oldval}"

shmem.barrier_all()
shmem.free(winners)
shmem.free(race_winner)
print(f"OK pe={mype}", flush=True)
