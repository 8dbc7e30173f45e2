"""A collective that PE 0 alone rejects must fail on every PE and leave the job in step.

For each case PE 0 passes bad arguments and the others good ones. Every PE must raise
a ShmemError, and the next collectives (a sum_reduce, a barrier) must then give the
right answer on every PE: no PE may be left one collective behind. Prints "OK pe=<k>".
"""

import numpy as np

import pyshmem as shmem

me, npes = shmem.my_pe(), shmem.n_pes()
bad = me == 0
f_t, f_s = shmem.zeros(4, np.float64), shmem.ones(4, np.float64)
i_t, i_s = shmem.zeros(4 * npes, np.int64), shmem.ones(4 * npes, np.int64)
readonly = i_t.view()
readonly.flags.writeable = False
live = shmem.zeros(4)


def expect_all_fail(name, fn, reason):
    """fn() raises on every PE: PE 0 with ``reason`` in its message, the others saying that
    PE 0 rejected the call (see its error); each message names the call and its own PE."""
    try:
        result = fn()
    except shmem.ShmemError as exc:
        msg = str(exc)
        assert msg.startswith("pyshmem.") and f" on PE {me}: " in msg, f"{name}: no call and PE in {msg!r}"
        if bad:
            assert reason in msg, f"{name}: {reason!r} not in {msg!r}"
        else:
            assert f" on PE {me}: PE 0 " in msg and "(see its error)" in msg, f"{name}: should blame PE 0: {msg!r}"
    else:
        raise AssertionError(f"{name}: PE {me} did not raise (returned {result!r})")
    # The job must still be in step: a reduction of known values, then a barrier.
    x = shmem.full(3, me + 1, dtype=np.int64)
    y = shmem.zeros(3, np.int64)
    shmem.sum_reduce(y, x)
    assert (y == npes * (npes + 1) // 2).all(), f"{name}: after the failure sum_reduce gave {y} on PE {me}"
    shmem.free(y)
    shmem.free(x)
    shmem.barrier_all()


cases = {  # name: (the call, where PE 0 is the one passing bad arguments; PE 0's reason)
    "reduce op invalid for dtype": (lambda: shmem.reduce(f_t, f_s, "or" if bad else "max"),
        "the 'or' reduction is not defined for float64"),
    "reduce unknown op": (lambda: shmem.reduce(f_t, f_s, "avg" if bad else "sum"), "unknown reduction op 'avg'"),
    "reduce size too large": (lambda: shmem.sum_reduce(f_t, f_s, 99 if bad else 4),
        "size=99 exceeds target (4) or source (4) elements"),
    "reduce dtype mismatch": (lambda: shmem.sum_reduce(f_t, i_s[:4] if bad else f_s),
        "dtype mismatch: target is float64 but source is int64"),
    "reduce read-only target": (lambda: shmem.sum_reduce(readonly if bad else i_t, i_s), "target is read-only"),
    "reduce None source": (lambda: shmem.sum_reduce(i_t, None if bad else i_s), "source is required (got None)"),
    "broadcast root out of range": (lambda: shmem.broadcast(i_t, i_s, npes + 5 if bad else 0),
        f"root {npes + 5} is not a PE of the team"),
    "broadcast root 2**32+1": (lambda: shmem.broadcast(i_t, i_s, 2**32 + 1 if bad else 1),
        "root 4294967297 is not a PE of the team"),
    "fcollect size too large": (lambda: shmem.fcollect(i_t, i_s, 10**6 if bad else 1), "size=1000000 exceeds source"),
    "collect read-only target": (lambda: shmem.collect(readonly if bad else i_t, i_s, 1), "target is read-only"),
    "alltoall size too large": (lambda: shmem.alltoall(i_t, i_s, 99 if bad else 1),
        f"size=99 per PE x {npes} PEs exceeds target"),
    "alltoalls bad stride": (lambda: shmem.alltoalls(i_t, i_s, 0 if bad else 1, 1, 1),
        "strides must be >= 1 (tst=0, sst=1)"),
    "zeros(-1)": (lambda: shmem.zeros(-1 if bad else 4), "shape must be >= 0 (got -1)"),
    "zeros bad dtype": (lambda: shmem.zeros(4, dtype="nonsense" if bad else np.int64),
        "'nonsense' is not a NumPy dtype"),
    "alloc too large": (lambda: shmem.alloc(2**40 if bad else 64),
        "symmetric heap exhausted: requested 1099511627776 bytes"),
    "alloc bad alignment": (lambda: shmem.alloc(8, align=3 if bad else 64), "alignment 3 is not a power of two"),
    "array of objects": (lambda: shmem.array([object()] if bad else [1]),
        "object arrays cannot live in symmetric memory"),
    "free of a plain array": (lambda: shmem.free(np.zeros(4) if bad else live), "the object is not symmetric memory"),
    "split bad stride": (lambda: shmem.TEAM_WORLD.split_strided(0, 0 if bad else 1, npes),
        f"(start=0, stride=0, size={npes}, parent size {npes})"),
    "split stride not an int": (lambda: shmem.TEAM_WORLD.split_strided(0, 1.5 if bad else 1, npes),
        "stride must be an integer, not float"),
    "split_2d xrange 0": (lambda: shmem.TEAM_WORLD.split_2d(0 if bad else 1), "xrange must be >= 1, got 0"),
}
for name, (fn, reason) in cases.items():
    expect_all_fail(name, fn, reason)
shmem.free(live)  # the failed free released it on no PE
print(f"OK pe={me}", flush=True)
