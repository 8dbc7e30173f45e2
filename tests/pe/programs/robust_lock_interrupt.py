"""A set_lock interrupted by a Python signal handler must not wedge the lock: PE 0
holds the lock while PE 1's set_lock is interrupted by SIGALRM; afterwards both PEs
take and release the lock again."""
import signal
import time

import pyshmem as shmem

me = shmem.my_pe()
lock = shmem.new_lock()
if me == 0:
    shmem.set_lock(lock)
shmem.barrier_all()
if me == 1:
    def on_alarm(signum, frame):
        raise TimeoutError("interrupted set_lock")

    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(1)
    try:
        shmem.set_lock(lock)
        print(f"UNEXPECTED-ACQUIRE pe={me}", flush=True)
    except TimeoutError:
        print(f"INTERRUPTED pe={me}", flush=True)
if me == 0:
    time.sleep(2.0)  # PE 1 is interrupted meanwhile
    shmem.clear_lock(lock)
shmem.sync_all()
for _ in range(3):
    shmem.set_lock(lock)
    shmem.clear_lock(lock)
shmem.barrier_all()
print(f"OK pe={me}", flush=True)
