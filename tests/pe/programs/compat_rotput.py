"""Port of shmem4py's demo/rotput.py: each PE puts its right neighbour's number there.

A local (plain NumPy) source goes into a symmetric destination on the next PE, so after
the barrier every PE's destination holds its own number. Prints ``OK pe=<me>``.
"""

import numpy as np

import pyshmem as shmem

mype, npes = shmem.my_pe(), shmem.n_pes()
nextpe = (mype + 1) % npes

src = np.empty(1, dtype='i')
src[0] = nextpe
dst = shmem.empty(1, dtype='i')
dst[0] = -1

shmem.barrier_all()              # everyone has initialised dst before any put lands
shmem.put(dst, src, nextpe)
shmem.barrier_all()              # every put is complete and visible

assert dst[0] == mype, f"PE {mype}: dst holds {dst[0]}, expected {mype}"
print(f"{mype}: got {dst[0]}", flush=True)
shmem.free(dst)
print(f"OK pe={mype}", flush=True)
