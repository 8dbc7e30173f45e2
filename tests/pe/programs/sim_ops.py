"""pyshmem.device under the Numba CUDA simulator (run with shmemrun --sim).

Kernels call the device API; every value is checked against what the host API would
produce. Prints OK pe=<k>."""
import numpy as np
from numba import cuda

import pyshmem
from pyshmem import device

assert device.SIMULATOR, "run with shmemrun --sim (NUMBA_ENABLE_CUDASIM=1)"
me, n = pyshmem.my_pe(), pyshmem.n_pes()
right, left = (me + 1) % n, (me - 1) % n
T = 32  # threads per block
A = device.array

# 1. put / get / p / g from every thread, slices give offsets.
x = pyshmem.zeros(n * T, np.int64)
got = pyshmem.zeros(T, np.int64)
gval = pyshmem.zeros(T, np.int64)


@cuda.jit
def k_rma(x, got, gval):
    i = cuda.threadIdx.x
    me, n = device.my_pe(), device.n_pes()
    device.p(x[me * T + i:], me * 1000 + i, (me + 1) % n)  # x[me*T+i] on the right neighbour
    cuda.syncthreads()
    if i == 0:
        device.barrier_all()
    cuda.syncthreads()
    device.get(got[i:i + 1], x[me * T + i:me * T + i + 1], (me + 1) % n)
    gval[i] = device.g(x[((me - 1) % n) * T + i:], me)


k_rma[1, T](A(x), A(got), A(gval))
pyshmem.barrier_all()
assert (x[left * T:(left + 1) * T] == left * 1000 + np.arange(T)).all(), x
assert (got == me * 1000 + np.arange(T)).all(), got
assert (gval == left * 1000 + np.arange(T)).all(), gval

# 2. put_signal: data before signal, whole block, then a wait by one thread.
data = pyshmem.zeros(4 * T, np.float64)
src = np.zeros(4 * T, np.float64)
sig = pyshmem.new_signal()
ROUNDS = 5


@cuda.jit
def k_signal(data, src, sig, rnd):
    i = cuda.threadIdx.x
    me, n = device.my_pe(), device.n_pes()
    for j in range(4):
        src[4 * i + j] = me * 1e6 + rnd * 1e3 + 4 * i + j
    cuda.syncthreads()
    device.put_signal_nbi_block(data, src, sig, 1, pyshmem.SIGNAL_ADD, (me + 1) % n)
    if i == 0:
        device.signal_wait_until(sig, pyshmem.CMP_GE, rnd)


for rnd in range(1, ROUNDS + 1):
    k_signal[1, T](A(data), A(src), A(sig), rnd)
    assert (data == left * 1e6 + rnd * 1e3 + np.arange(4 * T)).all(), (rnd, data)
    pyshmem.barrier_all()  # nobody overwrites `data` before its owner checked it
assert pyshmem.signal_fetch(sig) == ROUNDS

# 3. Atomics under contention from every thread of every PE (thread, warp, block forms).
ctr = pyshmem.zeros(1, np.int64)
uniq = pyshmem.zeros(n * T, np.int64)
winners = pyshmem.zeros(1, np.int64)
flag = pyshmem.zeros(1, np.int64)
bits = pyshmem.zeros(1, np.uint64)


@cuda.jit
def k_amo(ctr, uniq, winners, flag, bits):
    i = cuda.threadIdx.x
    me = device.my_pe()
    old = device.atomic_fetch_add(ctr, 1, 0)
    device.atomic_inc(ctr, 0)
    uniq[i] = old
    if device.atomic_compare_swap(flag, 0, me * 100 + i + 1, 0) == 0:
        device.atomic_add(winners, 1, 0)
    device.atomic_or(bits, 1 << me, 0)
    device.quiet()


k_amo[1, T](A(ctr), A(uniq[:T]), A(winners), A(flag), A(bits))
pyshmem.barrier_all()
if me == 0:
    assert ctr[0] == 2 * n * T, ctr
    assert winners[0] == 1, winners
    assert bits[0] == (1 << n) - 1, bits
    assert device.atomic_fetch(ctr, 0) == 2 * n * T
# fetch_add results from all threads of all PEs are distinct
allv = np.zeros(n * T, np.int64)
mine = uniq[:T].copy()
out = pyshmem.zeros(n * T, np.int64)
for pe in range(n):
    pyshmem.put(out[me * T:(me + 1) * T], mine, pe)
pyshmem.barrier_all()
assert len(set(out.tolist())) == n * T, out

# 4. fence/quiet ordering: payload then flag via fence, consumer waits on flag in a kernel.
payload = pyshmem.zeros(T, np.int64)
ready = pyshmem.zeros(1, np.int64)
seen = pyshmem.zeros(T, np.int64)


@cuda.jit
def k_order(payload, ready, seen, src):
    i = cuda.threadIdx.x
    me, n = device.my_pe(), device.n_pes()
    device.put_warp(payload, src, (me + 1) % n)
    if i == 0:
        device.fence()
        device.p(ready, 1, (me + 1) % n)
        device.wait_until(ready, pyshmem.CMP_EQ, 1)
    cuda.syncthreads()
    seen[i] = payload[i]


srcv = (me + 1) * 7 + np.arange(T, dtype=np.int64)
k_order[1, T](A(payload), A(ready), A(seen), A(srcv))
assert (seen == (left + 1) * 7 + np.arange(T)).all(), seen

# 5. Barrier from a whole block, then everybody sees everybody's put.
slots = pyshmem.zeros(n, np.int64)


@cuda.jit
def k_barrier(slots):
    me, n = device.my_pe(), device.n_pes()
    if cuda.threadIdx.x == 0:
        for pe in range(n):
            device.p(slots[me:], me + 1, pe)
    device.barrier_all_block()


k_barrier[1, T](A(slots))
assert (slots == np.arange(1, n + 1)).all(), slots
assert device.test(slots[me:], pyshmem.CMP_EQ, me + 1) == 1

# 6. Waits on arrays of flags: every PE raises its flag on every PE; the kernel takes
# them in arrival order with wait_until_any and a status mask, then checks the rest of
# the family on the final state (some, all, _vector, test_*, an empty wait set).
flags = pyshmem.zeros(n, np.uint64)
status = np.zeros(n, np.int32)
order = np.full(n, -1, np.int64)
idx = np.full(n, -1, np.int64)
res = np.zeros(8, np.int64)
want = np.ones(n, np.uint64)


@cuda.jit
def k_sets(flags, status, order, idx, res, want):
    if cuda.threadIdx.x == 0:
        me, n = device.my_pe(), device.n_pes()
        for pe in range(n):
            device.p(flags[me:], 1, pe)
        k = 0
        while True:
            i = device.wait_until_any(flags, pyshmem.CMP_EQ, 1, status)
            if i < 0:
                break
            order[k] = i
            status[i] = 1
            k += 1
        res[0] = k
        res[1] = device.wait_until_some(flags, idx, pyshmem.CMP_EQ, 1)
        device.wait_until_all(flags, pyshmem.CMP_EQ, 1)
        device.wait_until_all_vector(flags, pyshmem.CMP_EQ, want)
        res[2] = device.test_all(flags, pyshmem.CMP_EQ, 1)
        res[3] = device.test_any(flags, pyshmem.CMP_GT, 1)
        res[4] = device.test_some_vector(flags[n:], idx[n:], pyshmem.CMP_EQ, want[n:], status[n:])  # empty
        res[5] = device.wait_until_any_vector(flags, pyshmem.CMP_EQ, want, status)  # every flag excluded
        res[6] = device.test_any_vector(flags, pyshmem.CMP_GE, want)
        res[7] = device.test_all_vector(flags, pyshmem.CMP_NE, want)


k_sets[1, T](A(flags), status, order, idx, res, want)
assert sorted(order.tolist()) == list(range(n)), order
assert res.tolist() == [n, n, 1, -1, 0, -1, 0, 0], res
assert idx.tolist() == list(range(n)), idx
try:
    device.wait_until_some(flags, idx[:0], pyshmem.CMP_EQ, 1)  # outside a kernel: one thread
    raise AssertionError("indices shorter than ivars was accepted")
except pyshmem.InvalidArgumentError as e:
    assert "pyshmem.device.wait_until_some" in str(e) and "indices is shorter than ivars" in str(e), e
for call, message in ((lambda: device.test_all(flags, pyshmem.CMP_EQ, 1, np.zeros(n, np.int64)),
                       "status must be None or an int32 array, not an array of int64"),
                      (lambda: device.test_some(flags, np.zeros(n, np.int32), pyshmem.CMP_EQ, 1),
                       "indices must be an int64 or uint64 array"),
                      (lambda: device.wait_until_any(pyshmem.zeros(4 * n, np.uint64)[::2], pyshmem.CMP_EQ, 0),
                       "ivars is not contiguous")):
    try:
        call()
        raise AssertionError(f"accepted: {message}")
    except pyshmem.ShmemTypeError as e:
        assert message in str(e), e
pyshmem.barrier_all()
print(f"OK pe={me}", flush=True)
