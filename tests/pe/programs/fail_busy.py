"""PEs that run forever, exchanging data, until they are killed from outside.

argv: <dir>. Every PE writes its pid to ``<dir>/pid.<pe>`` once it holds symmetric
memory and has passed a barrier, then loops: put to the right neighbour + barrier.
"""

import os
import sys

import numpy as np

import pyshmem as shmem

out = sys.argv[1]
me, npes = shmem.my_pe(), shmem.n_pes()
buf = shmem.zeros(1 << 16, dtype=np.int64)
src = np.arange(1 << 16, dtype=np.int64)
shmem.barrier_all()
with open(os.path.join(out, f"pid.{me}.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.replace(os.path.join(out, f"pid.{me}.tmp"), os.path.join(out, f"pid.{me}"))
while True:
    shmem.put(buf, src, (me + 1) % npes)
    shmem.barrier_all()
