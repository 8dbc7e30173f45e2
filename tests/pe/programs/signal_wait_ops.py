"""Signals and point-to-point waits on every PE.

put_signal / put_signal_nbi with SIGNAL_SET and SIGNAL_ADD (counting arrivals from all
PEs), signal_fetch, signal_wait_until return values, wait_until with every CMP in every
spelling, the wait_until_all/any/some (+_vector) family with status masks, and the
test* family before and after the condition holds. Prints ``OK pe=<me>``.
"""

import time

import numpy as np

import pyshmem as shmem
from _expect import raises

me, npes = shmem.my_pe(), shmem.n_pes()
right, left = (me + 1) % npes, (me - 1) % npes
CMP = shmem.CMP


def check(cond, msg):
    if not cond:
        raise AssertionError(f"PE {me}: {msg}")


def same(got, want, what):
    check(type(got) is type(want) and got == want, f"{what}: got {got!r}, expected {want!r}")


def eq(actual, expected, what):
    if not np.array_equal(actual, expected):
        bad = np.flatnonzero(np.asarray(actual).ravel() != np.asarray(expected).ravel())[:6]
        raise AssertionError(f"PE {me}: {what}: mismatch at {bad}: got {np.asarray(actual).ravel()[bad]}")


def payload(pe, m, salt=0):
    return np.arange(m, dtype=np.int64) * 3 + 1_000_000 * (pe + 1) + 7 * salt


# =======================================================================================
# Signals
M = 4096
sig = shmem.new_signal()
check(isinstance(sig, np.ndarray) and sig.dtype == np.uint64 and sig.size == 1, "new_signal: 1-element uint64")
same(shmem.signal_fetch(sig), 0, "fresh signal")
data = shmem.zeros(M, np.int64)
shmem.barrier_all()

# SET: signal value = sender + 1; wait returns it; data is there
shmem.put_signal(data, payload(me, M), right, sig, me + 1, shmem.SIGNAL_SET)
v = shmem.signal_wait_until(sig, CMP.EQ, left + 1)
same(v, left + 1, "signal_wait_until(EQ) return value")
eq(data, payload(left, M), "put_signal SET payload")
same(shmem.signal_fetch(sig), left + 1, "signal_fetch after SET")
shmem.barrier_all()
# a second SET overwrites (does not add)
shmem.put_signal(data, payload(me, M, 1), right, sig, 1000, shmem.SIGNAL_SET)
same(shmem.signal_wait_until(sig, "==", 1000), 1000, "second SET overwrites")
eq(data, payload(left, M, 1), "second put_signal payload")
shmem.barrier_all()

# size= and strided targets, and a signal-only put (size 0); one signal each
sig_sz, sig_st, sig_0 = shmem.new_signal(), shmem.new_signal(), shmem.new_signal()
part = shmem.zeros(M, np.int64)
strided = shmem.zeros(2 * 100, np.int64)
shmem.barrier_all()
shmem.put_signal(part, payload(me, M, 2), right, sig_sz, 3, shmem.SIGNAL_SET, size=10)
shmem.put_signal(strided[::2], payload(me, 100, 3), right, sig_st, 4, shmem.SIGNAL_ADD)
shmem.put_signal(part[:0], payload(me, M)[:0], right, sig_0, 2 ** 64 - 1, shmem.SIGNAL_SET)
same(shmem.signal_wait_until(sig_sz, CMP.GE, 3), 3, "size=10 put_signal")
eq(part[:10], payload(left, M, 2)[:10], "size=10 payload")
eq(part[10:], np.zeros(M - 10, np.int64), "size=10 wrote past size")
same(shmem.signal_wait_until(sig_st, CMP.NE, 0), 4, "strided put_signal (ADD from 0)")
eq(strided[::2], payload(left, 100, 3), "strided put_signal payload")
eq(strided[1::2], np.zeros(100, np.int64), "strided put_signal wrote between elements")
same(shmem.signal_wait_until(sig_0, CMP.GT, 0), 2 ** 64 - 1, "signal-only put, full 64-bit value")
shmem.barrier_all()

# ADD: every PE sends one row to every PE; the signal counts arrivals.
rows = shmem.zeros((npes, M), np.int64)
sig_cnt = shmem.new_signal()
sig_w = shmem.new_signal()
shmem.barrier_all()
for k in range(1, npes + 1):
    p = (me + k) % npes
    shmem.put_signal(rows[me], payload(me, M, p), p, sig_cnt, 1, shmem.SIGNAL_ADD)
    shmem.put_signal(rows[me][:0], rows[me][:0].copy(), p, sig_w, me + 1, shmem.SIGNAL_ADD)
first = shmem.signal_wait_until(sig_cnt, CMP.GT, 0)
check(1 <= first <= npes, f"first arrival count {first}")
complete = sum(np.array_equal(rows[q], payload(q, M, me)) for q in range(npes))
check(complete >= first, f"signal said {first} arrivals but only {complete} rows are complete")
same(shmem.signal_wait_until(sig_cnt, CMP.GE, npes), npes, "SIGNAL_ADD counts every arrival exactly once")
for q in range(npes):
    eq(rows[q], payload(q, M, me), f"row from PE {q}")
same(shmem.signal_wait_until(sig_w, CMP.EQ, npes * (npes + 1) // 2), npes * (npes + 1) // 2, "weighted ADD")
# every comparison, satisfied now, returns the current value; every spelling works
for cmp, val in [(CMP.EQ, npes), (CMP.NE, 0), (CMP.GT, npes - 1), (CMP.GE, npes), (CMP.LT, npes + 1),
                 (CMP.LE, npes), ("!=", 0), (">", 0), ("le", npes), ("GE", 1), (int(CMP.LT), 99), (shmem.CMP_EQ, npes)]:
    same(shmem.signal_wait_until(sig_cnt, cmp, val), npes, f"signal_wait_until({cmp!r}, {val})")
shmem.barrier_all()

# signals as elements of one uint64 symmetric array: one signal per sender
sigs = shmem.zeros(npes, np.uint64)
rows2 = shmem.zeros((npes, 64), np.int64)
shmem.barrier_all()
for k in range(npes):
    p = (me + k) % npes
    shmem.put_signal(rows2[me], payload(me, 64, 9), p, sigs[me:me + 1], 5 + me, shmem.SIGNAL_SET)
for q in range(npes):
    same(shmem.signal_wait_until(sigs[q:q + 1], CMP.EQ, 5 + q), 5 + q, f"signal element {q}")
    eq(rows2[q], payload(q, 64, 9), f"row behind signal element {q}")
eq(sigs, np.arange(5, 5 + npes, dtype=np.uint64), "signal array")
shmem.barrier_all()

# put_signal_nbi (SET and ADD); the sender completes it with quiet
sig_nbi = shmem.new_signal()
nbi = shmem.zeros(M, np.int64)
shmem.barrier_all()
src = payload(me, M, 5)
shmem.put_signal_nbi(nbi, src, right, sig_nbi, 10, shmem.SIGNAL_ADD)
shmem.quiet()
src[:] = 0  # reusable after quiet
same(shmem.signal_wait_until(sig_nbi, CMP.EQ, 10), 10, "put_signal_nbi ADD")
eq(nbi, payload(left, M, 5), "put_signal_nbi payload")
shmem.barrier_all()
shmem.put_signal_nbi(nbi, payload(me, M, 6), right, sig_nbi, 1, shmem.SIGNAL_SET, ctx=shmem.CTX_DEFAULT)
shmem.quiet()
same(shmem.signal_wait_until(sig_nbi, CMP.LT, 10), 1, "put_signal_nbi SET")
eq(nbi, payload(left, M, 6), "put_signal_nbi SET payload")
shmem.barrier_all()

# a signal that arrives late: the wait really blocks
sig_late = shmem.new_signal()
shmem.barrier_all()
if npes > 1 and me == 0:
    time.sleep(0.05)
shmem.put_signal(data, payload(me, M, 7), right, sig_late, 77, shmem.SIGNAL_SET)
same(shmem.signal_wait_until(sig_late, CMP.EQ, 77), 77, "late signal")
eq(data, payload(left, M, 7), "late signal payload")
raises(ValueError, shmem.signal_wait_until, sig_late, "~", 1, match="unknown comparison '~'")
raises(ValueError, shmem.put_signal, data, payload(me, M), right, np.zeros(2, np.uint64), 1, shmem.SIGNAL_SET,
       match="signal is not symmetric memory")
raises(ValueError, shmem.put_signal, data, payload(me, M), right, sig_late, 1, 12345,
       match="sigop must be SIGNAL_SET or SIGNAL_ADD (got 12345)")
shmem.barrier_all()

# =======================================================================================
# wait_until / test with every comparison and spelling, on every wait dtype.
# Round k: I initialise iv[k] so that the condition fails, test() says False, then
# after sync_all my left neighbour atomically stores a value that satisfies it.
BASE = [  # (initial, final, cmp, value)
    (0, 5, CMP.EQ, 5), (7, 8, CMP.NE, 7), (3, 10, CMP.GT, 5),
    (10, 2, CMP.LE, 3), (10, 1, CMP.LT, 2), (0, 9, CMP.GE, 9),
]
OPS = {CMP.EQ: "==", CMP.NE: "!=", CMP.GT: ">", CMP.LE: "<=", CMP.LT: "<", CMP.GE: ">="}
NAMES = {CMP.EQ: "eq", CMP.NE: "Ne", CMP.GT: "GT", CMP.LE: "le", CMP.LT: "lT", CMP.GE: "ge"}
ALIASES = {CMP.EQ: shmem.CMP_EQ, CMP.NE: shmem.CMP_NE, CMP.GT: shmem.CMP_GT,
           CMP.LE: shmem.CMP_LE, CMP.LT: shmem.CMP_LT, CMP.GE: shmem.CMP_GE}
ROUNDS = []
for init, final, cmp, value in BASE:
    for spelled in (cmp, int(cmp), OPS[cmp], NAMES[cmp], ALIASES[cmp]):
        ROUNDS.append((init, final, spelled, value))

for dt in (np.int32, np.int64, np.uint32, np.uint64):
    iv = shmem.zeros(len(ROUNDS), dt)
    for k, (init, final, cmp, value) in enumerate(ROUNDS):
        iv[k] = init
        same(shmem.test(iv[k:k + 1], cmp, value), False, f"{np.dtype(dt).name} test({cmp!r}) before")
    shmem.sync_all()
    for k, (init, final, cmp, value) in enumerate(ROUNDS):
        if k == len(ROUNDS) // 2 and me == 0 and npes > 1:
            time.sleep(0.03)  # make some waits really block
        shmem.atomic_set(iv[k:k + 1], final, right)
    for k, (init, final, cmp, value) in enumerate(ROUNDS):
        shmem.wait_until(iv[k:k + 1], cmp, value)
        check(int(iv[k]) == final, f"{np.dtype(dt).name} wait_until({cmp!r}, {value}): value {iv[k]} != {final}")
        same(shmem.test(iv[k:k + 1], cmp, value), True, f"{np.dtype(dt).name} test({cmp!r}) after")
    shmem.barrier_all()
    shmem.free(iv)

# =======================================================================================
# wait_until_all/any/some, the vector forms and the test* family with status masks.
ALLX = [1] * 6
iv = shmem.zeros(6, np.int32)
shmem.barrier_all()
# nothing written yet (every element 0), nobody writes before the next sync_all
same(shmem.test_all(iv, CMP.EQ, 1), False, "test_all before")
check(shmem.test_any(iv, CMP.EQ, 1) is None, "test_any before: None")
same(shmem.test_some(iv, CMP.EQ, 1), [], "test_some before")
same(shmem.test_all(iv, CMP.EQ, 0), True, "test_all on zeros")
check(shmem.test_any(iv, CMP.EQ, 0) in range(6), "test_any on zeros")
same(shmem.test_some(iv, CMP.EQ, 0), [0, 1, 2, 3, 4, 5], "test_some on zeros")
same(shmem.test_all(iv, CMP.EQ, 1, status=[0, 1, 1, 1, 1, 1]), False, "test_all with one active element")
same(shmem.test_all_vector(iv, CMP.EQ, [1] * 6), False, "test_all_vector before")
check(shmem.test_any_vector(iv, CMP.EQ, np.ones(6, np.int32)) is None, "test_any_vector before")
same(shmem.test_some_vector(iv, CMP.EQ, (1, 1, 1, 1, 1, 1)), [], "test_some_vector before")
# everything excluded: any -> None, some -> [], all -> satisfied (vacuously), no blocking
check(shmem.test_any(iv, CMP.EQ, 1, status=ALLX) is None, "test_any all excluded")
same(shmem.test_some(iv, CMP.EQ, 1, status=ALLX), [], "test_some all excluded")
same(shmem.test_all(iv, CMP.EQ, 1, status=ALLX), True, "test_all all excluded")
check(shmem.wait_until_any(iv, CMP.EQ, 1, status=ALLX) is None, "wait_until_any all excluded")
same(shmem.wait_until_some(iv, CMP.EQ, 1, status=np.ones(6, np.int32)), [], "wait_until_some all excluded")
check(shmem.wait_until_all(iv, CMP.EQ, 1, status=ALLX) is None, "wait_until_all all excluded")
check(shmem.wait_until_any_vector(iv, CMP.EQ, [1] * 6, status=ALLX) is None, "wait_until_any_vector all excluded")
same(shmem.wait_until_some_vector(iv, CMP.EQ, [1] * 6, status=ALLX), [], "wait_until_some_vector all excluded")
check(shmem.wait_until_all_vector(iv, CMP.EQ, [1] * 6, status=ALLX) is None, "wait_until_all_vector all excluded")
check(shmem.test_any_vector(iv, CMP.EQ, [1] * 6, status=ALLX) is None, "test_any_vector all excluded")
same(shmem.test_some_vector(iv, CMP.EQ, [1] * 6, status=ALLX), [], "test_some_vector all excluded")
same(shmem.test_all_vector(iv, CMP.EQ, [1] * 6, status=ALLX), True, "test_all_vector all excluded")
shmem.sync_all()
# my left neighbour sets elements 1, 3, 4 to 1 (element 4 late)
for k in (1, 3):
    shmem.atomic_set(iv[k:k + 1], 1, right)
if me == 0 and npes > 1:
    time.sleep(0.03)
shmem.atomic_set(iv[4:5], 1, right)
shmem.wait_until_all(iv, CMP.EQ, 1, status=[1, 0, 1, 0, 0, 1])
eq(iv, [0, 1, 0, 1, 1, 0], "after wait_until_all with status")
# the state is now final: {1, 3, 4} == 1, the rest 0
same(shmem.test_all(iv, CMP.EQ, 1), False, "test_all after (not all set)")
same(shmem.test_all(iv, CMP.EQ, 1, status=(1, 0, 1, 0, 0, 1)), True, "test_all after with status")
check(shmem.test_any(iv, CMP.EQ, 1) in (1, 3, 4), "test_any after")
same(shmem.test_some(iv, CMP.EQ, 1), [1, 3, 4], "test_some after")
same(shmem.test_some(iv, "==", 1, status=[0, 1, 0, 0, 0, 0]), [3, 4], "test_some with status")
same(shmem.test_any(iv, "eq", 1, status=[1, 1, 1, 1, 0, 1]), 4, "test_any with status")
check(shmem.test_any(iv, "ne", 0, status=[1, 1, 1, 1, 1, 0]) is None, "test_any only a failing element active")
check(shmem.wait_until_any(iv, CMP.NE, 0) in (1, 3, 4), "wait_until_any")
same(shmem.wait_until_any(iv, CMP.NE, 0, status=[1, 1, 1, 1, 0, 0]), 4, "wait_until_any with status")
same(shmem.wait_until_some(iv, "GT", 0), [1, 3, 4], "wait_until_some")
same(shmem.wait_until_some(iv, CMP.GT, 0, status=[0, 0, 0, 1, 0, 0]), [1, 4], "wait_until_some with status")
check(shmem.wait_until_all(iv, ">=", 0) is None, "wait_until_all >= 0")
# vector forms: one comparison value per element
same(shmem.test_all_vector(iv, CMP.EQ, [0, 1, 0, 1, 1, 0]), True, "test_all_vector")
check(shmem.wait_until_all_vector(iv, CMP.EQ, np.array([0, 1, 0, 1, 1, 0])) is None, "wait_until_all_vector")
same(shmem.test_all_vector(iv, CMP.EQ, [1] * 6), False, "test_all_vector not all")
same(shmem.test_all_vector(iv, CMP.EQ, [1] * 6, status=[1, 0, 1, 0, 0, 1]), True, "test_all_vector with status")
same(shmem.test_any_vector(iv, CMP.EQ, [5, 5, 5, 1, 5, 5]), 3, "test_any_vector")
check(shmem.test_any_vector(iv, CMP.EQ, [5] * 6) is None, "test_any_vector none")
same(shmem.test_some_vector(iv, CMP.EQ, [1, 0, 1, 1, 0, 0]), [3, 5], "test_some_vector")
same(shmem.wait_until_some_vector(iv, CMP.EQ, [1, 0, 1, 1, 0, 0]), [3, 5], "wait_until_some_vector")
same(shmem.wait_until_some_vector(iv, CMP.EQ, [1, 0, 1, 1, 0, 0], status=[0, 0, 0, 0, 0, 1]), [3],
     "wait_until_some_vector with status")
check(shmem.wait_until_any_vector(iv, CMP.LT, [0, 2, 0, 0, 2, 0]) in (1, 4), "wait_until_any_vector LT")
same(shmem.test_some_vector(iv, "<", [0, 2, 0, 0, 2, 0]), [1, 4], "test_some_vector LT")
same(shmem.test_some_vector(iv, CMP.GE, [0, 2, 0, 2, 1, 1]), [0, 2, 4], "test_some_vector GE")
same(shmem.test_some_vector(iv, "le", [0] * 6), [0, 2, 5], "test_some_vector LE")
same(shmem.wait_until_any_vector(iv, CMP.GT, [9, 9, 9, 0, 9, 9]), 3, "wait_until_any_vector GT")
same(shmem.test_some_vector(iv, CMP.NE, [0, 0, 0, 0, 0, 0], status=[0, 1, 0, 0, 0, 0]), [3, 4],
     "test_some_vector NE with status")
shmem.barrier_all()

# blocking any/some/all where the satisfying writes arrive later (uint64 / int64 ivars)
ivb = shmem.zeros(6, np.uint64)
ivc = shmem.zeros(6, np.int64)
shmem.barrier_all()
if me == 0 and npes > 1:
    time.sleep(0.03)
shmem.atomic_set(ivb[2:3], 7, right)
same(shmem.wait_until_any(ivb, CMP.NE, 0), 2, "blocking wait_until_any")
same(shmem.wait_until_some(ivb, CMP.GE, 7), [2], "wait_until_some after late write")
shmem.sync_all()
if me == 0 and npes > 1:
    time.sleep(0.03)
shmem.atomic_set(ivb[5:6], 9, right)
same(shmem.wait_until_some_vector(ivb, CMP.EQ, [1, 1, 1, 1, 1, 9]), [5], "blocking wait_until_some_vector")
shmem.wait_until_all_vector(ivb, CMP.EQ, [0, 0, 7, 0, 0, 9])
eq(ivb, np.array([0, 0, 7, 0, 0, 9], np.uint64), "ivars after vector waits")
for k in range(6):  # one element at a time; the consumer waits for all of them
    shmem.atomic_set(ivc[k:k + 1], -3, right)
    if me == 0 and k % 2 and npes > 1:
        time.sleep(0.005)
shmem.wait_until_all(ivc, CMP.EQ, -3)
eq(ivc, np.full(6, -3, np.int64), "wait_until_all after one-by-one writes")
shmem.barrier_all()

# argument errors
raises(TypeError, shmem.wait_until, shmem.zeros(1, np.float64), CMP.EQ, 0, match="ivar is float64; wait/test variables")
raises(ValueError, shmem.test, ivc, CMP.EQ, 0, match="ivar must be a 1-element symmetric array (e.g. a[i:i+1]), got 6")
raises(ValueError, shmem.test_any, ivc, CMP.EQ, 0, status=[0, 0], match="status has 2 entries but ivars has 6")
raises(ValueError, shmem.test_all_vector, ivc, CMP.EQ, [0, 0], match="values has 2 entries but ivars has 6")
shmem.barrier_all()

print(f"OK pe={me}", flush=True)
