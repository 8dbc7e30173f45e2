"""One PE calls global_exit(<status>) while the others wait in barrier_all().

argv: <dir> <PE> <status>. Every PE writes its pid to ``<dir>/pid.<pe>``. The exiting
PE prints ``EXITING pe=<k>`` without flushing: global_exit must flush it.
"""

import os
import sys
import time

import pyshmem as shmem

out, who, status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
me = shmem.my_pe()
with open(os.path.join(out, f"pid.{me}.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.replace(os.path.join(out, f"pid.{me}.tmp"), os.path.join(out, f"pid.{me}"))
shmem.barrier_all()
if me == who:
    time.sleep(0.2)
    print(f"EXITING pe={me}")
    shmem.global_exit(status)
    print(f"AFTER-GLOBAL-EXIT pe={me}", flush=True)   # never reached
shmem.barrier_all()
print(f"PASSED pe={me}", flush=True)
