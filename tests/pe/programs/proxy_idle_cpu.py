"""The proxy thread of an idle PE sleeps: its CPU time over quiet seconds stays low.

Every PE initialises (the proxy runs whenever a peer is remote, as here under
PYSHMEM_REMOTE_ONLY=1, to progress UCX), does some work, then sleeps in Python outside
pyshmem while the proxy thread ("pyshmem-proxy" in /proc) is measured. Prints
"IDLE pe=<k> cpu=<fraction of one core>" and "OK pe=<k>".
"""

import sys
import time

import numpy as np

import pyshmem as shmem
from _proxy_cpu import proxy_cpu_fraction

me, n = shmem.my_pe(), shmem.n_pes()


x = shmem.zeros(1024, np.int64)
for i in range(200):  # activity first: the proxy then has to calm down by itself
    shmem.put(x, np.full(1024, i, np.int64), (me + 1) % n)
    shmem.barrier_all()
time.sleep(0.5)
quiet = float(sys.argv[1]) if len(sys.argv) > 1 else 2.0
fraction = proxy_cpu_fraction(quiet)
print(f"IDLE pe={me} cpu={fraction:.4f}", flush=True)
shmem.barrier_all()
print(f"OK pe={me}")
