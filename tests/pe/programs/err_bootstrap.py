"""Start one PE from a hand-made environment and report how init() ends.

Prints ``INIT-OK pe=<k>`` and exits 0 when the rendezvous succeeds, else
``ERR <type> [<bases>] t=<seconds>: <message>`` and exits 3, where t is the time
init() took.
"""

import sys
import time

import pyshmem as shmem

t0 = time.monotonic()
try:
    shmem.init()
except shmem.ShmemError as exc:
    bases = ",".join(c.__name__ for c in type(exc).__mro__)
    print(f"ERR {type(exc).__name__} [{bases}] t={time.monotonic() - t0:.2f}: {exc}", flush=True)
    sys.exit(3)
print(f"INIT-OK pe={shmem.my_pe()}", flush=True)
