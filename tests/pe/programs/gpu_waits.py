"""Host waits on symmetric GPU memory (the cuda backend; the fake driver in CI):
wait_until, test, signal_fetch, signal_wait_until and the vector waits poll with copies
out of the GPU heap. The last PE writes PE 0's GPU variables with pyshmem.cuda.put (through UCX under
PYSHMEM_REMOTE_ONLY=1) a moment after the barrier; PE 0 waits for them. Then bad input.
Prints "OK pe=<k>"."""

import time

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pc


def expect(exc_type, fragment, fn, *args):
    try:
        fn(*args)
    except exc_type as exc:
        assert fragment in str(exc), f"{fragment!r} not in {exc}"
        return
    raise AssertionError(f"{fn.__name__} did not raise {exc_type.__name__}")


me, n = shmem.my_pe(), shmem.n_pes()
ivar = pc.zeros(1, np.int32)
sig = pc.zeros(1, np.uint64)
assert shmem.test(ivar, shmem.CMP_EQ, 0) and not shmem.test(ivar, shmem.CMP_GT, 0)
assert shmem.signal_fetch(sig) == 0
shmem.barrier_all()
if me == n - 1:
    time.sleep(0.2)  # PE 0 is waiting by now
    pc.put(ivar, np.array([42], np.int32), 0)
    pc.put(sig, np.array([7], np.uint64), 0)
if me == 0:
    shmem.wait_until(ivar, shmem.CMP_EQ, 42)
    assert shmem.signal_wait_until(sig, shmem.CMP_GE, 7) == 7
    assert shmem.test(ivar, shmem.CMP_EQ, 42)
    assert shmem.signal_fetch(sig) == 7
shmem.barrier_all()

# vector waits: the last PE fills PE 0's four flags one by one
flags = pc.zeros(4, np.int64)
assert shmem.test_any(flags, shmem.CMP_NE, 0) is None and shmem.test_some(flags, shmem.CMP_EQ, 1) == []
shmem.barrier_all()
if me == n - 1:
    for i in (2, 0, 3, 1):
        time.sleep(0.05)
        pc.put(flags[i:i + 1], np.array([i + 1], np.int64), 0)
if me == 0:
    first = shmem.wait_until_any(flags, shmem.CMP_GT, 0)
    assert first in (0, 1, 2, 3), first
    shmem.wait_until_all_vector(flags, shmem.CMP_EQ, [1, 2, 3, 4])
    assert shmem.test_all(flags, shmem.CMP_GT, 0)
    assert shmem.wait_until_some(flags, shmem.CMP_GE, 3, status=[0, 0, 1, 0]) == [3]
    assert shmem.test_any(flags, shmem.CMP_EQ, 9, status=[1, 1, 1, 1]) is None
shmem.barrier_all()
pc.free(flags)

two = pc.zeros(2, np.int64)
f = pc.zeros(1, np.float64)
expect(ValueError, "must be a 1-element", shmem.wait_until, two, shmem.CMP_EQ, 0)
expect(TypeError, "wait/test variables must be", shmem.test, f, shmem.CMP_EQ, 0)
expect(ValueError, "outside the symmetric GPU heap", shmem.test, pc.GpuArray(ivar.ptr + (1 << 40), (1,), np.int32),
       shmem.CMP_EQ, 0)
expect(ValueError, "signal must be a 1-element uint64", shmem.signal_fetch, two)
expect(ValueError, "is not a comparison", shmem.wait_until, ivar, 99, 0)
expect(TypeError, "wait/test variables must be", shmem.test_all, f, shmem.CMP_EQ, 0)
shmem.barrier_all()
for a in (f, two, sig, ivar):
    pc.free(a)
print(f"OK pe={me}")
