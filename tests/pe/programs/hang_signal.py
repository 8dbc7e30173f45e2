"""A deadlock for PYSHMEM_TIMEOUT: PE 0 waits for a signal that nobody sends, while the
other PEs put into PE 0's buffer (not its signal) and then wait in barrier_all for PE
0, which never arrives. Run with PYSHMEM_TIMEOUT=2: the job must end within seconds
with a report (tests/pe/test_hang.py). Without the timeout it would hang forever."""

import numpy as np

import pyshmem as shmem

me = shmem.my_pe()
data = shmem.zeros(4, np.int64)       # allocation #1
sig = shmem.new_signal()              # allocation #2: the signal PE 0 waits on
shmem.barrier_all()
if me == 0:
    print("PE 0 waits for the signal", flush=True)
    shmem.signal_wait_until(sig, shmem.CMP.GE, 1)
else:
    shmem.put(data, np.arange(4, dtype=np.int64), 0)  # toward PE 0, but not its signal
    shmem.barrier_all()
print(f"unreachable on PE {me}", flush=True)
