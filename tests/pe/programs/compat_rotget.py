"""Port of shmem4py's demo/rotget.py: each PE reads its right neighbour's number.

The symmetric source holds the owner's PE number; a get from the next PE into a local
NumPy array must therefore return that PE's number. Prints ``OK pe=<me>``.
"""

import numpy as np

import pyshmem as shmem

mype, npes = shmem.my_pe(), shmem.n_pes()
nextpe = (mype + 1) % npes

src = shmem.empty(1, dtype='i')
src[0] = mype
dst = np.empty(1, dtype='i')
dst[0] = -1

shmem.barrier_all()              # every source is written before anyone reads it
shmem.get(dst, src, nextpe)

assert dst[0] == nextpe, f"PE {mype}: got {dst[0]} from PE {nextpe}"
print(f"{mype}: got {dst[0]}", flush=True)
shmem.barrier_all()              # nobody frees src while a neighbour may still read it
shmem.free(src)
print(f"OK pe={mype}", flush=True)
