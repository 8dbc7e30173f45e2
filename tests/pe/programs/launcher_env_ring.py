"""Started without shmemrun by tests/pe/test_launcher_env.py: rank and size come from a
foreign launcher's variables. A put ring and a barrier; prints "OK pe=<k> of <n> via <launcher>"."""

import os

import numpy as np

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
x = shmem.zeros(1, np.int64)
shmem.put(x, np.array([me], np.int64), (me + 1) % n)
shmem.barrier_all()
assert int(x[0]) == (me - 1) % n, x
print(f"OK pe={me} of {n} via {os.environ.get('EXPECT_LAUNCHER')}")
