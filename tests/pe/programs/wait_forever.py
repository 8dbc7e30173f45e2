"""Every PE blocks in a wait nobody satisfies (barrier or wait_until, by argv[1]);
used to check that Ctrl-C (SIGINT) interrupts a blocked PE with KeyboardInterrupt."""
import sys

import numpy as np

import pyshmem as shmem

me = shmem.my_pe()
flag = shmem.zeros(1, np.int64)
print(f"READY pe={me}", flush=True)
try:
    if sys.argv[1] == "barrier" and me == 0:
        shmem.barrier_all()  # PE 0 waits for the others, who wait below
    elif sys.argv[1] == "signal":
        shmem.signal_wait_until(shmem.new_signal(), shmem.CMP.EQ, 1)
    else:
        shmem.wait_until(flag, shmem.CMP.EQ, 1)
except KeyboardInterrupt:
    print(f"INTERRUPTED pe={me}", flush=True)
    sys.exit(3)
