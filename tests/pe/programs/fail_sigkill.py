"""One PE SIGKILLs itself while the others wait in barrier_all().

argv: <dir> <victim PE>. Every PE writes its pid to ``<dir>/pid.<pe>``; the victim
writes ``<dir>/killed_at`` (time.time()) just before the kill. No PE may get past the
second barrier (``PASSED pe=<k>`` must never appear).
"""

import os
import signal
import sys
import time

import pyshmem as shmem

out, victim = sys.argv[1], int(sys.argv[2])


def mark(name, text):
    with open(os.path.join(out, name + ".tmp"), "w") as f:
        f.write(str(text))
    os.replace(os.path.join(out, name + ".tmp"), os.path.join(out, name))


me = shmem.my_pe()
mark(f"pid.{me}", os.getpid())
shmem.barrier_all()                  # every PE is up and has written its pid
if me == victim:
    time.sleep(0.3)                  # the others are in the barrier below by now
    mark("killed_at", repr(time.time()))
    os.kill(os.getpid(), signal.SIGKILL)
shmem.barrier_all()
print(f"PASSED pe={me}", flush=True)
