"""Port of shmem4py's demo/race_winner_test.py: PE 0 polls 1-element slices with test().

PEs 1..n-1 each set their own slot of PE 0's ``wait_vars`` with atomic_set; PE 0 polls
``test(wait_vars[i:i+1], CMP.NE, 0)`` round-robin and names the first slot it finds set.
With one PE there is nobody to race (the demo exits early). Prints ``OK pe=<me>``.
"""

import time

import pyshmem as shmem

mype, npes = shmem.my_pe(), shmem.n_pes()
wait_vars = shmem.zeros(npes, dtype='i')

if npes > 1:
    if mype == 0:
        winner = None
        deadline = time.monotonic() + 30
        idx = 1
        while winner is None:
            assert time.monotonic() < deadline, "PE 0: nobody set a wait variable"
            if shmem.test(wait_vars[idx:idx + 1], shmem.CMP.NE, 0):
                winner = idx
            idx = idx % (npes - 1) + 1
        assert wait_vars[winner] == winner, f"slot {winner} holds {wait_vars[winner]}"
        print(f"PE {winner} won the race", flush=True)
        # Everybody else arrives too: wait for all slots (a vector wait).
        shmem.wait_until_all(wait_vars[1:], shmem.CMP.NE, 0)
        assert list(wait_vars[1:]) == list(range(1, npes)), list(wait_vars)
    else:
        shmem.atomic_set(wait_vars[mype:mype + 1], mype, 0)
else:
    assert not shmem.test(wait_vars[0:1], shmem.CMP.NE, 0)

shmem.barrier_all()
shmem.free(wait_vars)
print(f"OK pe={mype}", flush=True)
