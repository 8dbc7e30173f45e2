"""Bad input that once crashed a PE, truncated a value or moved data it must not.

Each check names the issue it guards. Prints "OK pe=<k>".
"""

import os
import subprocess
import sys

import numpy as np

import pyshmem as shmem
from _expect import raises

me, npes = shmem.my_pe(), shmem.n_pes()
peer = (me + 1) % npes


x = shmem.zeros(4, np.int64)
sig = shmem.new_signal()
lock = shmem.new_lock()

# None as a symmetric argument (it once reached a null pointer and killed the PE).
for fn, args in [(shmem.atomic_fetch, (None, 0)), (shmem.atomic_add, (None, 1, 0)),
                 (shmem.atomic_fetch_op, (None, 1, shmem.AMO.ADD, 0)), (shmem.test, (None, shmem.CMP.EQ, 0)),
                 (shmem.wait_until, (None, shmem.CMP.EQ, 0)), (shmem.signal_fetch, (None,)),
                 (shmem.signal_wait_until, (None, shmem.CMP.EQ, 0)), (shmem.set_lock, (None,)),
                 (shmem.test_lock, (None,)), (shmem.clear_lock, (None,)),
                 (shmem.put_signal, (x, np.ones(4, np.int64), peer, None, 1, shmem.SIGNAL_SET))]:
    raises(shmem.ShmemTypeError, fn, *args, match="got None")

# broadcast's root and every PE argument are range-checked, never truncated to 32 bits.
t, s = shmem.zeros(4, np.int64), shmem.full(4, me, dtype=np.int64)
raises(shmem.InvalidArgumentError, shmem.broadcast, t, s, 2**32 + 1, match="root 4294967297")
raises(shmem.InvalidArgumentError, shmem.put, x, np.ones(4, np.int64), 2**32 + peer, match=f"PE {2**32 + peer} is out of range; valid PEs are 0..{npes - 1}")
raises(shmem.InvalidArgumentError, shmem.atomic_inc, x[:1], 2**32, match="PE 4294967296 is out of range")
assert (t == 0).all()

# Vector waits and tests: one rule with scalar test(): integers only, in range.
w = shmem.zeros(3, np.int32)
for fn in (shmem.test_all, shmem.test_any, shmem.test_some, shmem.wait_until_all):
    raises(shmem.ShmemTypeError, fn, w, shmem.CMP.EQ, 0.5, match="must be an integer")
    raises(shmem.ShmemTypeError, fn, w, shmem.CMP.LT, (1,), match="value must be an integer for an integer array, not tuple")
    raises(shmem.ShmemTypeError, fn, w, shmem.CMP.EQ, "x", match="value must be an integer for an integer array, not str")
    raises(shmem.ShmemTypeError, fn, w, shmem.CMP.EQ, None, match="value must be an integer for an integer array, not NoneType")
    raises(shmem.ValueOverflowError, fn, w, shmem.CMP.EQ, 2**40, match="does not fit")
raises(shmem.ShmemTypeError, shmem.test, w[:1], shmem.CMP.EQ, 0.5, match="value must be an integer for an integer array, not float")
raises(shmem.ShmemTypeError, shmem.test_all_vector, w, shmem.CMP.EQ, [0, 0.5, 0], match="values must be an integer for an integer array, not float")
raises(shmem.ValueOverflowError, shmem.test_all_vector, w, shmem.CMP.EQ, np.array([0, 2**40, 0]), match="values 1099511627776 does not fit in the array's element type (int32")
raises(shmem.ShmemTypeError, shmem.test_all_vector, w, shmem.CMP.EQ, np.zeros(3), match="values is a float64 array; pass integers")
raises(shmem.ShmemTypeError, shmem.test_all, w, shmem.CMP.EQ, 0, status="abc", match="status must be a sequence of ints, one per ivar")
assert shmem.test_all(w, shmem.CMP.EQ, 0) is True
assert shmem.test_any(w, shmem.CMP.EQ, 0, status=[1, 0, 0]) == 1
assert shmem.test_all_vector(w, shmem.CMP.EQ, np.array([0, 0, 0], np.int64)) is True

# RMA/AMO targets are checked against the live allocation they belong to.
small = shmem.zeros(4, np.int64)
after = shmem.zeros(4, np.int64)
big = np.lib.stride_tricks.as_strided(small, shape=(16,), strides=(8,))
raises(shmem.InvalidArgumentError, shmem.put, big, np.full(16, 7, np.int64), peer, match="runs past the allocation")
raises(shmem.InvalidArgumentError, shmem.get, np.zeros(16, np.int64), big, peer, match="runs past the allocation")
raises(shmem.InvalidArgumentError, shmem.atomic_add, big[4:5], 1, peer, match="target range of 8 bytes at byte 32 of its allocation runs past the allocation's end")  # in the padding after small
raises(shmem.InvalidArgumentError, shmem.put, big[3:5], np.ones(2, np.int64), peer, match="target range of 16 bytes at byte 24 of its allocation runs past the allocation's end")
shmem.put(small, np.full(4, 5, np.int64), peer)  # the whole array is fine
shmem.barrier_all()
assert (after == 0).all(), f"a put through an oversized view reached the next allocation: {after}"
assert (small == 5).all()
gone = shmem.zeros(4, np.int64)
spacer = shmem.zeros(1, np.int64)  # keeps gone's block from merging into free space others reuse
untracked = np.lib.stride_tricks.as_strided(gone)  # a view whose base chain does not lead to the allocation
shmem.free(gone)
raises(shmem.InvalidArgumentError, shmem.put, gone, np.ones(4, np.int64), peer, match="was freed")
raises(shmem.InvalidArgumentError, shmem.atomic_fetch, gone[:1], peer, match="was freed")
# Found by address too (the allocator knows no live object there):
raises(shmem.InvalidArgumentError, shmem.put, untracked, np.ones(4, np.int64), peer, match="not in a live symmetric")
raises(shmem.InvalidArgumentError, shmem.sum_reduce, gone, small, match="target is a view of a symmetric allocation that was freed")
# Once a newer allocation reuses the memory, the address is live again: the freed
# array's own block still says it was freed, and the newer object is untouched.
stale = gone[1:3]
newer = shmem.zeros(4, np.int64)
assert newer.__array_interface__["data"][0] == gone.__array_interface__["data"][0], "the allocator reuses first fit"
for fn, args in [(shmem.put, (gone, np.ones(4, np.int64), peer)), (shmem.put, (stale, np.ones(2, np.int64), peer)),
                 (shmem.atomic_add, (stale[:1], 1, peer)), (shmem.get, (np.zeros(2, np.int64), stale, peer))]:
    raises(shmem.InvalidArgumentError, fn, *args, match="was freed")
raises(shmem.InvalidArgumentError, shmem.free, gone, match="double free")  # would have freed `newer`
shmem.barrier_all()
assert (newer == 0).all(), newer
shmem.barrier_all()  # every PE checked before anyone writes
shmem.put(newer, np.full(4, 3, np.int64), peer)
shmem.barrier_all()
assert (newer == 3).all()

# Smaller ones.
shmem.iput(x[:2], np.array([9, 8], np.int64), peer, 2**63 - 1)  # one element: the stride is never used
shmem.barrier_all()
assert x[0] == 9 and x[1] == 0, f"iput with a huge stride moved {x}"
got = np.zeros(2, np.int64)
shmem.iget(got, x, peer, 1, 2**63 - 1)
assert got[0] == 9 and got[1] == 0, got
shmem.barrier_all()
# strides whose extent overflows 64 bits: a range error (separate arrays and a size: nothing else is wrong)
big_y = shmem.zeros(4, np.int64)
raises(shmem.InvalidArgumentError, shmem.alltoalls, big_y, x, 2**63 - 1, 2**63 - 1, 1,
       match=f"size=1 per PE x {npes} PEs exceeds target (1) or source (1) elements")
shmem.free(big_y)
raises(shmem.InvalidArgumentError, shmem.alltoalls, x, x, 1, 1, 1, match="overlap")
raises(shmem.InvalidArgumentError, shmem.zeros, 2**62, match="shape (4611686018427387904,) is too large for an array")
raises(shmem.HeapExhaustedError, shmem.zeros, 2**40, match="symmetric heap exhausted: requested 8796093022208 bytes")
raises(shmem.InvalidArgumentError, shmem.alloc, 2**64, match="count=18446744073709551616 is too large")
raises(shmem.ShmemTypeError, shmem.Ctx.create, 0, 5, match="team must be a pyshmem.Team (e.g. TEAM_WORLD), not int")
raises(shmem.ShmemTypeError, shmem.team_my_pe, 5, match="team must be a pyshmem.Team (e.g. TEAM_WORLD), not int")
raises(shmem.ShmemTypeError, shmem.zeros, 4, dtype="no such dtype", match="'no such dtype' is not a NumPy dtype")
raises(shmem.InvalidArgumentError, shmem.zeros, 4, order="X", match="order must be one of 'C', 'F', not 'X'")
raises(shmem.ShmemTypeError, shmem.alloc, 4, clear=np.zeros(2), match="clear must be True or False, not ndarray")

# The job's secret and rank do not reach child processes.
env = subprocess.run([sys.executable, "-c", "import os; print(sorted(k for k in os.environ if k.startswith('PYSHMEM_')))"],
                     capture_output=True, text=True, check=True).stdout
for name in ("PYSHMEM_JOB_SECRET", "PYSHMEM_PE", "PYSHMEM_NPES", "PYSHMEM_BOOTSTRAP_FD", "PYSHMEM_BOOTSTRAP_ADDR"):
    assert name not in os.environ and name not in env, f"{name} outlived init: {env}"
child = subprocess.run([sys.executable, "-c", "import pyshmem as s; print(s.my_pe(), s.n_pes())"],
                       capture_output=True, text=True, timeout=60, env=dict(os.environ, PYSHMEM_SYMMETRIC_SIZE="8M"))
assert child.returncode == 0 and child.stdout.split() == ["0", "1"], child.stdout + child.stderr

shmem.barrier_all()
print(f"OK pe={me}", flush=True)
