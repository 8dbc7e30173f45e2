"""One PE exits with status 5 before it ever starts pyshmem; the others block in init().

argv: <dir> <PE>. Every PE writes its pid to ``<dir>/pid.<pe>`` first. The others stay
in the rendezvous (waiting for the missing PE) until the launcher ends them.
"""

import os
import sys

out, who = sys.argv[1], int(sys.argv[2])
me = int(os.environ["PYSHMEM_PE"])
with open(os.path.join(out, f"pid.{me}.tmp"), "w") as f:
    f.write(str(os.getpid()))
os.replace(os.path.join(out, f"pid.{me}.tmp"), os.path.join(out, f"pid.{me}"))
if me == who:
    sys.exit(5)

import pyshmem as shmem  # noqa: E402

shmem.init()
shmem.barrier_all()
print(f"PASSED pe={me}", flush=True)
