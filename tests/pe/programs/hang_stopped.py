"""PYSHMEM_TIMEOUT with a PE that cannot answer: PE 1 stops itself (SIGSTOP) while PE 0
waits for it in barrier_all, and the other PEs sleep in Python (running, but not in
pyshmem). Run with PYSHMEM_TIMEOUT=2: PE 0's report must tell the stopped PE (did not
answer) from the sleeping ones (answered); shmemrun's SIGKILL ends the stopped PE
(tests/pe/test_hang.py)."""

import os
import signal
import time

import pyshmem as shmem

me = shmem.my_pe()
print(f"pid {me} {os.getpid()}", flush=True)  # the test kills what is left
shmem.barrier_all()
if me == 0:
    shmem.barrier_all()
elif me == 1:
    os.kill(os.getpid(), signal.SIGSTOP)
else:
    time.sleep(60)
