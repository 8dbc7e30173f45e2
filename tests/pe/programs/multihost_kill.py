"""tests/pe/test_multihost.py: the last PE (on the second host) kills itself while the
others wait for it in a barrier; the job must end, naming it, instead of hanging."""

import os
import signal

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
shmem.barrier_all()
if me == n - 1:
    os.kill(os.getpid(), signal.SIGKILL)
shmem.barrier_all()  # never completes: PE n-1 is gone
print(f"UNEXPECTED pe={me}")
