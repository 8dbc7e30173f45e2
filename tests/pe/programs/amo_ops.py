"""Atomics on every PE: each blocking, non-blocking and generic AMO with exact values,
plus contention (exact totals, fetch_add returns forming a permutation) and a
compare_swap race with exactly one winner per round. Prints ``OK pe=<me>``.
"""

import numpy as np

import pyshmem as shmem
from _expect import raises

me, npes = shmem.my_pe(), shmem.n_pes()
right, left = (me + 1) % npes, (me - 1) % npes

INTS = [np.int32, np.int64, np.uint32, np.uint64]
FLOATS = [np.float32, np.float64]


def check(cond, msg):
    if not cond:
        raise AssertionError(f"PE {me}: {msg}")


def same(got, want, what):
    """Value and Python type (int for integer arrays, float for float arrays)."""
    check(type(got) is type(want), f"{what}: returned {type(got).__name__} {got!r}, expected {type(want).__name__}")
    check(got == want, f"{what}: got {got!r}, expected {want!r}")


NO_FLOAT_AMO = "are not supported; use int32, int64, uint32 or uint64"


# ---------------------------------------------------------------------------------------
# Every integer AMO, on slot `me` of an array on my right neighbour (no interference:
# each PE works on its own slot), then the final value is checked by the owner.
for dt in INTS:
    name = np.dtype(dt).name
    bits = np.dtype(dt).itemsize * 8
    unsigned = np.dtype(dt).kind == "u"
    x = shmem.zeros(npes, dt)
    two = shmem.zeros(2, dt)
    t = x[me:me + 1]
    R = right

    shmem.atomic_set(t, 5, R)
    same(shmem.atomic_fetch(t, R), 5, f"{name} set/fetch")
    same(shmem.atomic_swap(t, 9, R), 5, f"{name} swap")
    same(shmem.atomic_fetch(t, R), 9, f"{name} after swap")
    same(shmem.atomic_compare_swap(t, 9, 11, R), 9, f"{name} compare_swap success")
    same(shmem.atomic_fetch(t, R), 11, f"{name} after compare_swap success")
    same(shmem.atomic_compare_swap(t, 9, 13, R), 11, f"{name} compare_swap failure returns current")
    same(shmem.atomic_fetch(t, R), 11, f"{name} compare_swap failure must not write")
    same(shmem.atomic_fetch_inc(t, R), 11, f"{name} fetch_inc")
    shmem.atomic_inc(t, R)
    same(shmem.atomic_fetch_add(t, 7, R), 13, f"{name} fetch_add")
    shmem.atomic_add(t, 5, R)
    same(shmem.atomic_fetch(t, R), 25, f"{name} after add")
    shmem.atomic_set(t, 0b1100, R)
    same(shmem.atomic_fetch_and(t, 0b1010, R), 0b1100, f"{name} fetch_and")       # -> 0b1000
    shmem.atomic_and(t, 0b1001, R)                                                 # -> 0b1000
    same(shmem.atomic_fetch_or(t, 0b0011, R), 0b1000, f"{name} fetch_or")         # -> 0b1011
    shmem.atomic_or(t, 0b0100, R)                                                  # -> 0b1111
    same(shmem.atomic_fetch_xor(t, 0b0101, R), 0b1111, f"{name} fetch_xor")       # -> 0b1010
    shmem.atomic_xor(t, 0b1111, R)                                                 # -> 0b0101
    same(shmem.atomic_fetch(t, R), 0b0101, f"{name} after bitwise ops")
    # full-width values
    if unsigned:
        top = 2 ** bits - 1
        shmem.atomic_set(t, top, R)
        same(shmem.atomic_fetch(t, R), top, f"{name} max value")
        same(shmem.atomic_fetch_inc(t, R), top, f"{name} fetch_inc at max")
        same(shmem.atomic_fetch(t, R), 0, f"{name} unsigned wrap-around")
        shmem.atomic_set(t, 1 << (bits - 1), R)
        same(shmem.atomic_fetch_or(t, 1, R), 1 << (bits - 1), f"{name} high bit")
        same(shmem.atomic_fetch_xor(t, top, R), (1 << (bits - 1)) | 1, f"{name} xor with all ones")
        same(shmem.atomic_fetch(t, R), top ^ ((1 << (bits - 1)) | 1), f"{name} after xor all ones")
    else:
        shmem.atomic_set(t, -5, R)
        same(shmem.atomic_fetch_add(t, -3, R), -5, f"{name} negative fetch_add")
        same(shmem.atomic_compare_swap(t, -8, -(2 ** (bits - 1)), R), -8, f"{name} compare_swap negative")
        same(shmem.atomic_fetch(t, R), -(2 ** (bits - 1)), f"{name} min value")
        same(shmem.atomic_swap(t, 2 ** (bits - 1) - 1, R), -(2 ** (bits - 1)), f"{name} swap to max")
    shmem.atomic_set(t, 100 + me, R)

    # ---- non-blocking fetching forms: the value is in `f` after quiet ----
    f = np.zeros(1, dt)
    shmem.atomic_fetch_nbi(f, t, R)
    shmem.quiet()
    same(int(f[0]), 100 + me, f"{name} fetch_nbi")
    shmem.atomic_swap_nbi(f, t, 40, R)
    shmem.quiet()
    same(int(f[0]), 100 + me, f"{name} swap_nbi")
    shmem.atomic_compare_swap_nbi(f, t, 40, 41, R)
    shmem.quiet()
    same(int(f[0]), 40, f"{name} compare_swap_nbi success")
    shmem.atomic_compare_swap_nbi(f, t, 40, 99, R)
    shmem.quiet()
    same(int(f[0]), 41, f"{name} compare_swap_nbi failure")
    shmem.atomic_fetch_inc_nbi(f, t, R)
    shmem.quiet()
    same(int(f[0]), 41, f"{name} fetch_inc_nbi")
    shmem.atomic_fetch_add_nbi(f, t, 8, R)
    shmem.quiet()
    same(int(f[0]), 42, f"{name} fetch_add_nbi")                                     # -> 50 = 0b110010
    shmem.atomic_fetch_and_nbi(f, t, 0b100011, R)
    shmem.quiet()
    same(int(f[0]), 50, f"{name} fetch_and_nbi")                                     # -> 0b100010 = 34
    shmem.atomic_fetch_or_nbi(f, t, 0b000101, R)
    shmem.quiet()
    same(int(f[0]), 34, f"{name} fetch_or_nbi")                                      # -> 0b100111 = 39
    shmem.atomic_fetch_xor_nbi(f, t, 0b000011, R)
    shmem.quiet()
    same(int(f[0]), 39, f"{name} fetch_xor_nbi")                                     # -> 0b100100 = 36
    same(shmem.atomic_fetch(t, R), 36, f"{name} after nbi ops")

    # ---- generic forms with each AMO member (and string spellings) ----
    shmem.atomic_op(t, 3, shmem.AMO.SET, R)                       # 3
    shmem.atomic_op(t, 12345, shmem.AMO.INC, R)                   # 4 (value ignored)
    shmem.atomic_op(t, 10, shmem.AMO.ADD, R)                      # 14 = 0b1110
    shmem.atomic_op(t, 0b0111, shmem.AMO.AND, R)                  # 0b0110
    shmem.atomic_op(t, 0b1000, shmem.AMO.OR, R)                   # 0b1110
    shmem.atomic_op(t, 0b0011, shmem.AMO.XOR, R)                  # 0b1101 = 13
    same(shmem.atomic_fetch(t, R), 13, f"{name} atomic_op chain")
    shmem.atomic_op(t, 2, "add", R)                               # 15
    shmem.atomic_op(t, 1, "XOR", R)                               # 14
    shmem.atomic_op(t, 0, shmem.AMO_INC, R)                       # 15
    same(shmem.atomic_fetch(t, R), 15, f"{name} atomic_op with strings/aliases")
    same(shmem.atomic_fetch_op(t, 20, shmem.AMO.SET, R), 15, f"{name} fetch_op SET (swap)")
    same(shmem.atomic_fetch_op(t, 0, shmem.AMO.INC, R), 20, f"{name} fetch_op INC")
    same(shmem.atomic_fetch_op(t, 5, shmem.AMO.ADD, R), 21, f"{name} fetch_op ADD")          # 26 = 0b11010
    same(shmem.atomic_fetch_op(t, 0b01011, shmem.AMO.AND, R), 26, f"{name} fetch_op AND")   # 0b01010 = 10
    same(shmem.atomic_fetch_op(t, 0b00101, shmem.AMO.OR, R), 10, f"{name} fetch_op OR")     # 0b01111 = 15
    same(shmem.atomic_fetch_op(t, 0b00110, "xor", R), 15, f"{name} fetch_op XOR")           # 0b01001 = 9
    expect_nbi = [(shmem.AMO.SET, 30, 9), (shmem.AMO.INC, 0, 30), (shmem.AMO.ADD, 2, 31),    # 33 = 0b100001
                  (shmem.AMO.AND, 0b100011, 33), (shmem.AMO.OR, 0b000110, 33),              # 33 -> 39
                  (shmem.AMO.XOR, 0b000001, 39)]                                              # -> 38
    for op, val, prev in expect_nbi:
        f[0] = 0
        shmem.atomic_fetch_op_nbi(f, t, val, op, R)
        shmem.quiet()
        same(int(f[0]), prev, f"{name} fetch_op_nbi {op.name}")
    same(shmem.atomic_fetch(t, R), 38, f"{name} after fetch_op_nbi chain")
    raises(ValueError, shmem.atomic_op, t, 1, "nand", R, match="unknown op 'nand'; use one of AMO.SET")
    raises(ValueError, shmem.atomic_add, two, 1, R, match="target must be a 1-element symmetric array")  # not a 1-element target
    raises(ValueError, shmem.atomic_fetch, two[0:0], R, match="source must be a 1-element symmetric array")

    # the owner sees the final value its left neighbour left in its slot
    shmem.barrier_all()
    check(int(x[left]) == 38, f"{name}: slot of PE {left} holds {x[left]}, expected 38")
    shmem.barrier_all()
    shmem.free(two)
    shmem.free(x)

# shmem4py keyword names and ctx=CTX_DEFAULT
kw = shmem.zeros(npes, np.int64)
kt = kw[me:me + 1]
D = shmem.CTX_DEFAULT
shmem.atomic_set(target=kt, value=3, pe=right, ctx=D)
same(shmem.atomic_fetch(source=kt, pe=right, ctx=D), 3, "atomic_fetch(source=...)")
same(shmem.atomic_compare_swap(target=kt, cond=3, value=4, pe=right, ctx=D), 3, "compare_swap keywords")
same(shmem.atomic_fetch_add(target=kt, value=2, pe=right, ctx=D), 4, "fetch_add keywords")
same(shmem.atomic_fetch_op(target=kt, value=1, op=shmem.AMO.ADD, pe=right, ctx=D), 6, "fetch_op keywords")
kf = np.zeros(1, np.int64)
shmem.atomic_fetch_op_nbi(fetch=kf, target=kt, value=0, op="inc", pe=right, ctx=D)
shmem.atomic_compare_swap_nbi(fetch=kf[0:1], target=kt, cond=8, value=9, pe=right)  # after quiet: 8
shmem.quiet(ctx=D)
same(int(kf[0]), 8, "nbi keywords (last fetch wins)")
shmem.barrier_all()
check(int(kw[left]) == 9, f"keyword AMOs left {int(kw[left])}")
shmem.barrier_all()

# 0-d symmetric array as target: every PE adds me+1 into its right neighbour's scalar
z = shmem.zeros((), np.int64)
shmem.atomic_add(z, me + 1, right)
shmem.barrier_all()
check(int(z) == left + 1, f"0-d target holds {int(z)}, expected {left + 1}")
shmem.barrier_all()

# ---------------------------------------------------------------------------------------
# Extended AMOs on floats: fetch, set, swap (+ nbi and generic SET)
for dt in FLOATS:
    name = np.dtype(dt).name
    x = shmem.zeros(npes, dt)
    t = x[me:me + 1]
    R = right
    shmem.atomic_set(t, 1.5, R)
    same(shmem.atomic_fetch(t, R), 1.5, f"{name} set/fetch")
    same(shmem.atomic_swap(t, -2.25, R), 1.5, f"{name} swap")
    same(shmem.atomic_fetch(t, R), -2.25, f"{name} after swap")
    f = np.zeros(1, dt)
    shmem.atomic_swap_nbi(f, t, 1048576.5, R)
    shmem.quiet()
    same(float(f[0]), -2.25, f"{name} swap_nbi")
    shmem.atomic_fetch_nbi(f, t, R)
    shmem.quiet()
    same(float(f[0]), 1048576.5, f"{name} fetch_nbi")
    shmem.atomic_op(t, 0.125 + me, shmem.AMO.SET, R)
    same(shmem.atomic_fetch_op(t, 7.0, shmem.AMO.SET, R), 0.125 + me, f"{name} fetch_op SET")
    shmem.atomic_fetch_op_nbi(f, t, -0.5, shmem.AMO.SET, R)
    shmem.quiet()
    same(float(f[0]), 7.0, f"{name} fetch_op_nbi SET")
    raises(TypeError, shmem.atomic_add, t, 1.0, R, match=f"atomics on {name} {NO_FLOAT_AMO}")          # not an extended AMO
    raises(TypeError, shmem.atomic_fetch_inc, t, R, match=f"atomics on {name} {NO_FLOAT_AMO}")
    raises(TypeError, shmem.atomic_compare_swap, t, 1.0, 2.0, R, match=f"atomics on {name} {NO_FLOAT_AMO}")
    shmem.barrier_all()
    check(float(x[left]) == -0.5, f"{name}: slot of PE {left} holds {x[left]}")
    shmem.barrier_all()
    shmem.free(x)

# ---------------------------------------------------------------------------------------
# Contention: everyone hammers PE 0's counters.
K = 150
ctr = shmem.zeros(4, np.int64)      # [fetch_add target, inc target, mixed uint32 below, -]
mixed = shmem.zeros(1, np.uint32)
rets = shmem.zeros(npes * K, np.int64)
shmem.barrier_all()
mine = []
for i in range(K):
    mine.append(shmem.atomic_fetch_add(ctr[0:1], 1, 0))
    shmem.atomic_inc(ctr[1:2], 0)
    j = i % 4
    if j == 0:
        shmem.atomic_fetch_inc(mixed, 0)
    elif j == 1:
        shmem.atomic_inc(mixed, 0)
    elif j == 2:
        shmem.atomic_add(mixed, 2, 0)
    else:
        shmem.atomic_fetch_add(mixed, 3, 0)
check(all(a < b for a, b in zip(mine, mine[1:])), "fetch_add returns from one PE must increase")
shmem.put(rets[me * K:(me + 1) * K], np.array(mine, np.int64), 0)
shmem.barrier_all()
if me == 0:
    check(int(ctr[0]) == npes * K, f"fetch_add total {int(ctr[0])} != {npes * K}")
    check(int(ctr[1]) == npes * K, f"inc total {int(ctr[1])} != {npes * K}")
    per_pe = sum((1, 1, 2, 3)[i % 4] for i in range(K))
    check(int(mixed[0]) == npes * per_pe, f"mixed uint32 total {int(mixed[0])} != {npes * per_pe}")
    check(np.array_equal(np.sort(rets), np.arange(npes * K)),
          "fetch_add returns are not a permutation of 0..n*K-1 "
          f"(dups: {np.unique(rets)[np.unique(rets, return_counts=True)[1] > 1][:5]})")

# every PE increments every PE's counter (all-to-all atomics)
aa = shmem.zeros(1, np.uint64)
shmem.barrier_all()
K2 = 60
for i in range(K2):
    for p in range(npes):
        shmem.atomic_inc(aa, (me + p) % npes)
shmem.barrier_all()
check(int(aa[0]) == npes * K2, f"all-to-all inc total {int(aa[0])} != {npes * K2}")

# ---------------------------------------------------------------------------------------
# compare_swap race: exactly one winner per round, and the stored id is the winner's.
ROUNDS = 24
race = shmem.full(ROUNDS, -1, np.int64)
wins = shmem.zeros(ROUNDS, np.int64)
who = shmem.zeros(ROUNDS, np.int64)
for r in range(ROUNDS):
    shmem.sync_all()  # start each round together
    old = shmem.atomic_compare_swap(race[r:r + 1], -1, me, 0)
    check(type(old) is int, "compare_swap returns int")
    if old == -1:
        shmem.atomic_inc(wins[r:r + 1], 0)
        shmem.atomic_add(who[r:r + 1], me + 1, 0)
    else:
        check(0 <= old < npes and old != me, f"round {r}: lost compare_swap but saw {old}")
shmem.barrier_all()
if me == 0:
    check(np.all(wins == 1), f"compare_swap winners per round: {wins.tolist()}")
    check(np.array_equal(who - 1, race), f"winner ids {(who - 1).tolist()} != stored {race.tolist()}")
shmem.barrier_all()

print(f"OK pe={me}", flush=True)
