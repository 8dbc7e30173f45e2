"""A deadlocked job: PE 0 waits on a signal nobody sends, the others in barrier_all().

Only the launcher's --timeout ends it. Prints ``WAITING pe=<k>`` before blocking.
"""

import pyshmem as shmem

me = shmem.my_pe()
sig = shmem.new_signal()
shmem.barrier_all()
print(f"WAITING pe={me}", flush=True)
if me == 0:
    shmem.signal_wait_until(sig, shmem.CMP.EQ, 1)
else:
    shmem.barrier_all()
print(f"PASSED pe={me}", flush=True)
