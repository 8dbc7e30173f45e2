"""A small recorded program for pyshmem.model replay: a put to the right-hand
neighbour, a barrier, a sum reduction, a get from the right-hand neighbour, a barrier."""

import numpy as np

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
x = shmem.ones(1024, np.float32)
y = shmem.zeros(1024, np.float32)
shmem.put(y, x, (me + 1) % n)  # 4,096 bytes
shmem.barrier_all()
shmem.sum_reduce(y, x, 1024)  # 4,096 bytes
assert y[0] == n
shmem.get(y[:64], x[:64], (me + 1) % n)  # 256 bytes
shmem.barrier_all()
shmem.free(y)
shmem.free(x)
