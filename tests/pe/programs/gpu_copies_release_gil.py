"""Every host-API call that copies GPU memory releases the GIL while the copy runs: a
copy may wait behind a stream's kernels, and a stream's host callback may need the GIL.

Run against the fake CUDA driver with a long FAKE_CUDA_DELAY_US (each driver op sleeps a
random time up to it): a ticker thread must keep ticking through every call that took
long. A call that happened to be short says nothing, so each is tried until one was
long. (A copy on a stream is only enqueued: nothing to see there.) Prints "OK pe=<k>".
"""

import threading
import time

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pc

me = shmem.my_pe()
g = pc.zeros(16, np.int64)
sig = pc.zeros(1, np.uint64)
host_sig = shmem.new_signal()
h = np.arange(16, dtype=np.int64)
ticks = 0
stop = False


def tick():
    global ticks
    while not stop:
        time.sleep(0.002)
        ticks += 1


ticker = threading.Thread(target=tick)
ticker.start()
CALLS = {
    "put": lambda: shmem.put(g, h, me),
    "get": lambda: shmem.get(h, g, me),
    "put_nbi": lambda: shmem.put_nbi(g, h, me),
    "get_nbi": lambda: shmem.get_nbi(h, g, me),
    "iput": lambda: shmem.iput(g, h, me, 2, 2, 4),
    "iget": lambda: shmem.iget(h, g, me, 2, 2, 4),
    "put_signal (host signal)": lambda: shmem.put_signal(g, h, me, host_sig, 1, shmem.SIGNAL_SET),
    "test": lambda: shmem.test(g[:1], shmem.CMP_GE, 0),
    "test_all": lambda: shmem.test_all(g[:4], shmem.CMP_GE, 0),
    "signal_fetch": lambda: shmem.signal_fetch(sig),
}
try:
    for name, call in CALLS.items():
        for attempt in range(40):
            before, t0 = ticks, time.perf_counter()
            call()
            took, ticked = time.perf_counter() - t0, ticks - before
            if took >= 0.15:
                # 150 ms of a 2 ms ticker: ~75 ticks with the GIL free, at most 1 without.
                assert ticked >= 5, f"{name} held the GIL: {ticked} ticks in {took * 1e3:.0f} ms"
                break
        else:
            raise AssertionError(f"{name}: no call took 150 ms in 40 tries (is FAKE_CUDA_DELAY_US set?)")
finally:
    stop = True
    ticker.join()
pc.synchronize(0)
shmem.barrier_all()
print(f"OK pe={me}")
