"""One PE raises an uncaught exception while the others are blocked.

argv: <dir> <victim PE> <mode>. mode ``barrier``: the others wait in barrier_all();
mode ``wait``: they wait_until a flag nobody sets. Every PE writes its pid to
``<dir>/pid.<pe>``; the victim writes ``<dir>/raised_at`` just before raising.

The victim's exit must not run the collective finalize: in ``barrier`` mode that
barrier would release the others (``PASSED pe=<k>``), in ``wait`` mode it would hang.
"""

import os
import sys
import time

import numpy as np

import pyshmem as shmem

out, victim, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]


def mark(name, text):
    with open(os.path.join(out, name + ".tmp"), "w") as f:
        f.write(str(text))
    os.replace(os.path.join(out, name + ".tmp"), os.path.join(out, name))


me = shmem.my_pe()
flag = shmem.zeros(1, dtype=np.int64)
mark(f"pid.{me}", os.getpid())
shmem.barrier_all()
if me == victim:
    time.sleep(0.3)
    mark("raised_at", repr(time.time()))
    raise RuntimeError(f"deliberate failure on PE {me}")
if mode == "barrier":
    shmem.barrier_all()
else:
    shmem.wait_until(flag, shmem.CMP.EQ, 1)
print(f"PASSED pe={me}", flush=True)
