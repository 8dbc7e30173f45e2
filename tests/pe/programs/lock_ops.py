"""Distributed locks on every PE: mutual exclusion of get/modify/put critical sections
(exact counts), an occupancy check inside the critical section, test_lock semantics
(False means acquired), spinning on test_lock, and the ``Lock`` class (``with``,
non-blocking acquire, destroy). Prints ``OK pe=<me>``.
"""

import os

import numpy as np

import pyshmem as shmem

me, npes = shmem.my_pe(), shmem.n_pes()
K = int(os.environ.get("LOCK_ITERS", "40"))


def check(cond, msg):
    if not cond:
        raise AssertionError(f"PE {me}: {msg}")


def critical(counter, home, inside):
    """Non-atomic read-modify-write of counter on PE `home`, plus an occupancy count."""
    n_in = shmem.atomic_fetch_inc(inside, 0)
    check(n_in == 0, f"{n_in} other PE(s) inside the critical section")
    val = np.zeros(1, np.int64)
    shmem.get(val, counter, home)
    os.sched_yield()  # widen the window in which another PE could sneak in
    val[0] += 1
    shmem.put(counter, val, home)
    n_out = shmem.atomic_fetch_add(inside, -1, 0)
    check(n_out == 1, f"occupancy {n_out} on exit, expected 1")


# --- set_lock / clear_lock, counters on PE 0 and on the last PE ---------------------
lock = shmem.new_lock()
check(isinstance(lock, np.ndarray) and lock.size == 1, "new_lock returns a 1-element symmetric array")
counter = shmem.zeros(1, np.int64)
inside = shmem.zeros(1, np.int64)
shmem.barrier_all()
for i in range(K):
    home = 0 if i % 2 == 0 else npes - 1
    shmem.set_lock(lock)
    critical(counter, home, inside)
    shmem.clear_lock(lock)  # completes the put before the next holder gets the lock
shmem.barrier_all()
expect = {0: 0, npes - 1: 0}
for i in range(K):
    expect[0 if i % 2 == 0 else npes - 1] += npes
if me in expect:
    check(int(counter[0]) == expect[me], f"locked counter {int(counter[0])} != {expect[me]}")
shmem.barrier_all()

# --- test_lock semantics ------------------------------------------------------------
lk = shmem.new_lock()
shmem.barrier_all()
if me == 0:
    got = shmem.test_lock(lk)
    check(got is False, f"test_lock on a free lock returned {got!r} (False means acquired)")
shmem.sync_all()
if me != 0:
    got = shmem.test_lock(lk)
    check(got is True, f"test_lock on a held lock returned {got!r} (True means not acquired)")
shmem.sync_all()
if me == 0:
    shmem.clear_lock(lk)
shmem.sync_all()
last = npes - 1
if me == last:
    check(shmem.test_lock(lk) is False, "test_lock after release should acquire")
shmem.sync_all()
if me == 0 and npes > 1:
    check(shmem.test_lock(lk) is True, "PE 0: lock held by the last PE")
shmem.sync_all()
if me == last:
    shmem.clear_lock(lk)
shmem.barrier_all()

# --- spinning on test_lock as the acquire --------------------------------------------
counter2 = shmem.zeros(1, np.int64)
shmem.barrier_all()
for i in range(K // 2):
    while shmem.test_lock(lk):
        pass
    critical(counter2, 0, inside)
    shmem.clear_lock(lk)
shmem.barrier_all()
if me == 0:
    check(int(counter2[0]) == npes * (K // 2), f"test_lock counter {int(counter2[0])} != {npes * (K // 2)}")
shmem.barrier_all()

# --- the Lock class ------------------------------------------------------------------
L = shmem.Lock()
counter3 = shmem.zeros(1, np.int64)
shmem.barrier_all()
for i in range(K // 2):
    with L as entered:
        check(entered is None, "Lock.__enter__ returns None (shmem4py)")
        critical(counter3, npes - 1, inside)
    if i % 4 == 0:
        while not L.acquire(blocking=False):  # True means acquired
            pass
        critical(counter3, npes - 1, inside)
        L.release()
    if i % 4 == 1:
        check(L.acquire() is True, "blocking acquire returns True")
        critical(counter3, npes - 1, inside)
        L.release()
shmem.barrier_all()
extra = sum(1 for i in range(K // 2) if i % 4 in (0, 1))
if me == npes - 1:
    want = npes * (K // 2 + extra)
    check(int(counter3[0]) == want, f"Lock counter {int(counter3[0])} != {want}")
shmem.barrier_all()
# non-blocking acquire fails while another PE holds the lock
if me == 0:
    check(L.acquire(blocking=False) is True, "acquire(blocking=False) on a free lock")
shmem.sync_all()
if me != 0:
    check(L.acquire(blocking=False) is False, "acquire(blocking=False) on a held lock")
shmem.sync_all()
if me == 0:
    L.release()
shmem.barrier_all()

# --- several locks in one symmetric int64 array are independent ----------------------
locks = shmem.zeros(3, np.int64)
shmem.barrier_all()
if me == 0:
    check(shmem.test_lock(locks[1:2]) is False, "lock 1 of the array acquired")
shmem.sync_all()
if me == npes - 1:
    check(shmem.test_lock(locks[2:3]) is False, "lock 2 is free while lock 1 is held")
    if npes > 1:
        check(shmem.test_lock(locks[1:2]) is True, "lock 1 is held by PE 0")
shmem.sync_all()
if me == 0:
    shmem.clear_lock(locks[1:2])
if me == npes - 1:
    shmem.clear_lock(locks[2:3])
shmem.barrier_all()
for i in range(K // 4):  # all PEs through both locks, nested in a fixed order
    shmem.set_lock(locks[0:1])
    shmem.set_lock(locks[2:3])
    critical(counter, 0, inside)
    shmem.clear_lock(locks[2:3])
    shmem.clear_lock(locks[0:1])
shmem.barrier_all()
if me == 0:
    want = expect[0] + npes * (K // 4)
    check(int(counter[0]) == want, f"nested-lock counter {int(counter[0])} != {want}")
shmem.barrier_all()
L.destroy()
L.destroy()  # second destroy is a no-op
check(int(inside[0]) == 0 or me != 0, "occupancy counter back to 0")

shmem.barrier_all()
shmem.del_lock(lk)
shmem.del_lock(lock)
print(f"OK pe={me}", flush=True)
