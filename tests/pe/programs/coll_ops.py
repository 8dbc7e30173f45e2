"""Every host collective over several teams, checked against NumPy on the inputs of all PEs.

Every PE's input is a deterministic function of (PE, dtype, call number), so each PE
computes the expected result of every collective itself, from the same inputs the
others used. Usage: coll_ops.py [quick]  ("quick": fewer dtypes, for the UCX runs).
Prints "OK pe=<k>".
"""

import functools
import sys

import numpy as np

import pyshmem as shmem

QUICK = "quick" in sys.argv[1:]
me, npes = shmem.my_pe(), shmem.n_pes()

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float32, np.float64, np.longdouble]  # longdouble: C's long double (OpenSHMEM's longdouble reductions)
COMPLEX = [np.complex64, np.complex128]
DTYPES = [np.int32, np.uint64, np.float64, np.longdouble, np.complex128] if QUICK else INTS + FLOATS + COMPLEX
_call = 0


def check(cond, what):
    if not cond:
        raise AssertionError(f"PE {me}: {what}")


def data(pe, dtype, n, salt):
    """PE pe's input: small values (products of up to 4 stay exact in every type)."""
    rng = np.random.default_rng(1000 * pe + 7 * salt + np.dtype(dtype).num)
    if np.issubdtype(dtype, np.complexfloating):
        return (rng.integers(-3, 4, n) + 1j * rng.integers(-3, 4, n)).astype(dtype)
    if np.issubdtype(dtype, np.unsignedinteger):
        return rng.integers(0, 6, n).astype(dtype)
    return rng.integers(-5, 6, n).astype(dtype)


def members(team):
    """World PEs of the team, in team order."""
    return [team.translate_pe(i, shmem.TEAM_WORLD) for i in range(team.n_pes())]


NP_OP = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
         "or": np.bitwise_or, "xor": np.bitwise_xor}


def tolerance(dtype, op, nterms):
    """The relative error a correct reduction of ``nterms`` values may have: none for integers
    and for max/min (they pick an input), and for a float sum or product one rounding per
    term in the element's precision (longdouble's or complex64's own epsilon, not float64's).
    The inputs here are small integers, so a correct result is in fact exact."""
    if not np.issubdtype(dtype, np.inexact) or op in ("max", "min"):
        return 0.0
    return float(nterms * np.finfo(dtype).eps)


def ops_for(dtype):
    if np.issubdtype(dtype, np.integer):
        return list(NP_OP)
    if np.issubdtype(dtype, np.floating):
        return ["sum", "prod", "max", "min"]
    return ["sum", "prod"]


def sym(values, n=None):
    """A symmetric array of `n` elements (allocation is collective over the world, so
    PEs outside the team allocate too), holding `values` at its start."""
    a = shmem.zeros(len(values) if n is None else n, values.dtype)
    a[:len(values)] = values
    return a


def run_reduce(team, cap, dtype, n, op, in_place, algo_salt):
    global _call
    _call += 1
    src = sym(data(me, dtype, n, _call + algo_salt))
    dst = src if in_place else shmem.zeros(n, dtype)
    if team:
        with np.errstate(over="ignore"):
            want = functools.reduce(NP_OP[op], [data(p, dtype, n, _call + algo_salt) for p in members(team)])
        if op == "sum" and not in_place and algo_salt == 0:
            shmem.sum_reduce(dst, src, team=team)
        else:
            shmem.reduce(dst, src, op=getattr(shmem.OP, op.upper()), team=team)
        what = f"{op}_reduce {np.dtype(dtype)} n={n} in_place={in_place}: {dst[:4]} != {want[:4]}"
        tol = tolerance(dtype, op, len(members(team)))
        check(np.allclose(dst, want, rtol=tol, atol=0) if tol else np.array_equal(dst, want), f"{what} (rtol {tol})")
    shmem.free(src)
    if not in_place:
        shmem.free(dst)


def run_data_collectives(team, cap, dtype, n):
    """cap: the largest size of the teams this split made (array sizes must agree on all PEs)."""
    global _call
    ids = members(team) if team else []
    size, mine = len(ids), (team.my_pe() if team else 0)
    # broadcast from every root, into a separate target and in place
    for root in range(cap):
        _call += 1
        src = sym(data(me, dtype, n, _call))
        dst = shmem.zeros(n, dtype)
        if root < size:
            shmem.broadcast(dst, src, root, team=team)
            check(np.array_equal(dst, data(ids[root], dtype, n, _call)), f"broadcast root={root} {np.dtype(dtype)}")
            shmem.broadcast(src, src, root, team=team)
            check(np.array_equal(src, data(ids[root], dtype, n, _call)), f"in-place broadcast root={root}")
        shmem.free(dst)
        shmem.free(src)
    # fcollect
    _call += 1
    src = sym(data(me, dtype, n, _call))
    dst = shmem.zeros(n * cap, dtype)
    if team:
        shmem.fcollect(dst, src, team=team)
        want = np.concatenate([data(p, dtype, n, _call) for p in ids])
        check(np.array_equal(dst[:n * size], want), f"fcollect {np.dtype(dtype)}")
    shmem.free(dst)
    shmem.free(src)
    # collect with a different count on each PE (0 included)
    _call += 1
    counts = [(i * 3 + 1) % (n + 2) for i in range(cap)]
    src = sym(data(me, dtype, n + 2, _call))
    dst = shmem.full(sum(counts) + 3, 99, dtype)
    if team:
        shmem.collect(dst, src, size=counts[mine], team=team)
        total = sum(counts[:size])
        want = np.concatenate([data(p, dtype, n + 2, _call)[:c] for p, c in zip(ids, counts)])
        check(np.array_equal(dst[:total], want), f"collect {np.dtype(dtype)}: {dst} != {want}")
        check(np.all(dst[total:] == 99), "collect wrote past the collected elements")
    shmem.free(dst)
    shmem.free(src)
    # alltoall: block j of my source goes to PE j
    _call += 1
    src = sym(data(me, dtype, n * cap, _call))
    dst = shmem.zeros(n * cap, dtype)
    if team:
        shmem.alltoall(dst[:n * size], src[:n * size], team=team)
        want = np.concatenate([data(p, dtype, n * cap, _call)[mine * n:(mine + 1) * n] for p in ids])
        check(np.array_equal(dst[:n * size], want), f"alltoall {np.dtype(dtype)}")
    shmem.free(dst)
    shmem.free(src)
    # alltoalls with strides 2 (target) and 3 (source)
    _call += 1
    tst, sst = 2, 3
    src = sym(data(me, dtype, n * cap * sst, _call))
    dst = shmem.zeros(n * cap * tst, dtype)
    if team:
        shmem.alltoalls(dst, src, tst, sst, n, team=team)
        for j, p in enumerate(ids):
            theirs = data(p, dtype, n * cap * sst, _call)
            got = dst[j * n * tst:(j + 1) * n * tst:tst]
            check(np.array_equal(got, theirs[mine * n * sst:(mine + 1) * n * sst:sst]), f"alltoalls block {j}")
        check(np.all(dst[1::tst] == 0), "alltoalls wrote between the strided elements")
    shmem.free(dst)
    shmem.free(src)


def exercise(team, cap):
    """Runs on every PE; PEs outside `team` (TEAM_INVALID) only allocate."""
    for dtype in DTYPES:
        for op in ops_for(dtype):
            run_reduce(team, cap, dtype, 5, op, in_place=False, algo_salt=0)
        run_reduce(team, cap, dtype, 4, "sum", in_place=True, algo_salt=1)
    for dtype in ([np.int64, np.complex64] if QUICK else [np.int8, np.int64, np.float32, np.complex128]):
        run_data_collectives(team, cap, dtype, 3)
    # A large reduction (reduce-scatter + all-gather under auto), in place and not.
    for in_place in (False, True):
        run_reduce(team, cap, np.float64, 40_000, "sum", in_place, algo_salt=2)
        run_reduce(team, cap, np.int32, 33_333, "max", in_place, algo_salt=3)
    if team:
        team.sync()
        shmem.barrier(team)


exercise(shmem.TEAM_WORLD, npes)
# TEAM_SHARED: every PE of this node (all PEs under one shmemrun on one host, unless
# PYSHMEM_REMOTE_ONLY makes each PE its own "node").
shared = shmem.TEAM_SHARED.n_pes()
check(shared in (1, npes), f"TEAM_SHARED has {shared} PEs")
exercise(shmem.TEAM_SHARED, shared)
# Every second PE, starting at 1 (a strided team; PE 0 is outside it when npes > 1).
odd = shmem.TEAM_WORLD.split_strided(1 % npes, 2, None) if npes > 1 else shmem.TEAM_WORLD.split_strided(0, 1, 1)
check(bool(odd) == (npes == 1 or me % 2 == 1), f"strided team membership: {odd}")
exercise(odd, max(1, npes // 2))
# A 2-D grid two PEs wide: rows and columns.
xteam, yteam = shmem.team_split_2d(shmem.TEAM_WORLD, 2)
check(xteam.n_pes() == min(2, npes - (me // 2) * 2), f"row size {xteam.n_pes()}")
check(xteam.my_pe() == me % 2 and yteam.my_pe() == me // 2, "2-D coordinates")
exercise(xteam, min(2, npes))
exercise(yteam, (npes + 1) // 2)
# Teams of teams: the first PE of each row, and translation back to the world.
sub = xteam.split_strided(0, 1, 1)
check(bool(sub) == (me % 2 == 0), "sub-team membership")
if sub:
    check(sub.translate_pe(0, shmem.TEAM_WORLD) == me, "sub-team translation")
    sub.destroy()
for t in (odd, xteam, yteam):
    t.destroy()
# long double reductions combine in long double, not through double: where it has the
# bits (x86's 64-bit mantissa, binary128), 1 + (npes-1) * 2**-60 survives the sum.
if np.finfo(np.longdouble).nmant >= 60:
    src = shmem.full(1, 2.0 ** -60 if me else 1.0, dtype=np.longdouble)
    dst = shmem.zeros(1, np.longdouble)
    shmem.sum_reduce(dst, src)
    want = np.longdouble(1) + np.longdouble(2.0 ** -60) * (npes - 1)
    check(dst[0] == want and (npes == 1 or dst[0] != 1), f"long double sum {dst[0]!r} != {want!r}")
    shmem.free(src)
    shmem.free(dst)
shmem.barrier_all()
print(f"OK pe={me}", flush=True)
