"""tests/pe/test_mpi_init.py: ranks of an MPI communicator become the PEs of one job
through pyshmem.init(mpi=comm). With TEST_SPLIT=k the world is split into k
communicators, each its own pyshmem job running side by side."""

import os

import numpy as np
from mpi4py import MPI

import pyshmem as shmem

world = MPI.COMM_WORLD
split = int(os.environ.get("TEST_SPLIT", "1"))
comm = world.Split(color=world.rank % split, key=world.rank) if split > 1 else world
shmem.init(mpi=comm)
shmem.init(mpi=comm)  # again: a no-op
me, n = shmem.my_pe(), shmem.n_pes()
assert (me, n) == (comm.Get_rank(), comm.Get_size()), (me, n, comm.Get_rank(), comm.Get_size())
assert "PYSHMEM_JOB_SECRET" not in os.environ, "the secret leaked into the environment"
if split > 1:
    try:
        shmem.init(mpi=world)
        raise AssertionError("init(mpi=world) inside a split job was accepted")
    except shmem.InvalidArgumentError as exc:
        assert "already runs as PE" in str(exc), exc

world_of_pe = comm.allgather(world.Get_rank())  # which world rank is each PE of this job
x = shmem.zeros(4, dtype=np.int64)
counter = shmem.zeros(1, dtype=np.int64)
shmem.put(x, np.full(4, world.Get_rank(), dtype=np.int64), (me + 1) % n)
shmem.atomic_add(counter, me + 1, 0)
shmem.barrier_all()
left = world_of_pe[(me - 1) % n]
assert (x == left).all(), (x, left)
if me == 0:
    assert counter[0] == n * (n + 1) // 2, counter[0]
shmem.barrier_all()
print(f"OK world={world.Get_rank()} pe={me} n={n} left={left}", flush=True)
