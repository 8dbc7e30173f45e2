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


def expect_all_fail(name, fn):
    try:
        result = fn()
    except shmem.ShmemError as exc:
        if not bad:
            assert "PE 0" in str(exc), f"{name}: the error should name PE 0: {exc}"
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


cases = {
    "reduce op invalid for dtype": lambda: shmem.reduce(f_t, f_s, "or" if bad else "max"),
    "reduce unknown op": lambda: shmem.reduce(f_t, f_s, "avg" if bad else "sum"),
    "reduce size too large": lambda: shmem.sum_reduce(f_t, f_s, 99 if bad else 4),
    "reduce dtype mismatch": lambda: shmem.sum_reduce(f_t, i_s[:4] if bad else f_s),
    "reduce read-only target": lambda: shmem.sum_reduce(readonly if bad else i_t, i_s),
    "reduce None source": lambda: shmem.sum_reduce(i_t, None if bad else i_s),
    "broadcast root out of range": lambda: shmem.broadcast(i_t, i_s, npes + 5 if bad else 0),
    "broadcast root 2**32+1": lambda: shmem.broadcast(i_t, i_s, 2**32 + 1 if bad else 1),
    "fcollect size too large": lambda: shmem.fcollect(i_t, i_s, 10**6 if bad else 1),
    "collect read-only target": lambda: shmem.collect(readonly if bad else i_t, i_s, 1),
    "alltoall size too large": lambda: shmem.alltoall(i_t, i_s, 99 if bad else 1),
    "alltoalls bad stride": lambda: shmem.alltoalls(i_t, i_s, 0 if bad else 1, 1, 1),
    "zeros(-1)": lambda: shmem.zeros(-1 if bad else 4),
    "zeros bad dtype": lambda: shmem.zeros(4, dtype="nonsense" if bad else np.int64),
    "alloc too large": lambda: shmem.alloc(2**40 if bad else 64),
    "alloc bad alignment": lambda: shmem.alloc(8, align=3 if bad else 64),
    "array of objects": lambda: shmem.array([object()] if bad else [1]),
    "free of a plain array": lambda: shmem.free(np.zeros(4) if bad else live),
    "split bad stride": lambda: shmem.TEAM_WORLD.split_strided(0, 0 if bad else 1, npes),
    "split stride not an int": lambda: shmem.TEAM_WORLD.split_strided(0, 1.5 if bad else 1, npes),
    "split_2d xrange 0": lambda: shmem.TEAM_WORLD.split_2d(0 if bad else 1),
}
for name, fn in cases.items():
    expect_all_fail(name, fn)
shmem.free(live)  # the failed free released it on no PE
print(f"OK pe={me}", flush=True)
