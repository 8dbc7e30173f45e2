"""The OpenSHMEM memory model, checked on every PE with real data.

Each streaming test runs many iterations with changing contents; the consumer verifies
the *entire* payload of that iteration as soon as its synchronisation says so, then
acknowledges so the producer may overwrite it:

  1. put_signal / put_signal_nbi (SET and ADD): data is visible before the signal;
  2. put + fence + put(flag) (blocking, nbi, iput): the flag orders the data;
  3. put + quiet + atomic flag (set/inc), and completion seen by a third PE (quiet
     makes puts visible to everyone, not just the issuer's next op);
  4. ping-pong with wait_until, every payload verified;
  5. ptr() load/store views: visible after quiet + barrier; ptr + fence + atomic flag;
  6. barrier_all completes outstanding put/put_nbi (all-to-all, several rounds);
  7. sync_all as the barrier for atomics;
  8. wait_until_some with a growing status mask: each flagged row is complete.

Locks (mutual exclusion of get/put under the lock) are in lock_ops.py.
Prints ``OK pe=<me>``.
"""

import os

import numpy as np

import pyshmem as shmem

me, npes = shmem.my_pe(), shmem.n_pes()
right, left = (me + 1) % npes, (me - 1) % npes
CMP = shmem.CMP
SCALE = float(os.environ.get("MM_SCALE", "1"))  # >1 for longer soak runs by hand

BIG = 1 << 18  # int64 elements: 2 MiB payloads
base = np.arange(BIG, dtype=np.int64)


def check(cond, msg):
    if not cond:
        raise AssertionError(f"PE {me}: {msg}")


def key(i, pe):
    return i * 1_000_003 + pe * 7 + 1


def verify(arr, i, pe, what):
    exp = base[: arr.size] + key(i, pe)
    if not np.array_equal(arr, exp):
        bad = np.flatnonzero(arr != exp)
        raise AssertionError(
            f"PE {me}: {what}, iteration {i}: {bad.size} of {arr.size} elements are not yet the payload of PE {pe} "
            f"(first {bad[:4]}, last {bad[-2:]}; got {arr[bad[:3]]}, expected {exp[bad[:3]]})"
        )


def iters(n):
    return max(1, int(n * SCALE))


# ---------------------------------------------------------------------------------------
# 1. put_signal ordering: 2 MiB payload + signal, SET/ADD, blocking/nbi, many iterations
data = shmem.zeros(BIG, np.int64)
sig = shmem.new_signal()
ack = shmem.zeros(1, np.int64)
shmem.barrier_all()
N1 = iters(12)
for i in range(N1):
    src = base + key(i, me)
    mode = i % 4
    if mode == 0:
        shmem.put_signal(data, src, right, sig, i + 1, shmem.SIGNAL_SET)
    elif mode == 1:
        shmem.put_signal(data, src, right, sig, 1, shmem.SIGNAL_ADD)      # i -> i + 1
    elif mode == 2:
        shmem.put_signal_nbi(data, src, right, sig, i + 1, shmem.SIGNAL_SET)
    else:
        shmem.put_signal_nbi(data, src, right, sig, 1, shmem.SIGNAL_ADD)
    v = shmem.signal_wait_until(sig, CMP.GE, i + 1)
    check(v == i + 1, f"put_signal iteration {i}: signal {v}, expected {i + 1}")
    verify(data, i, left, f"put_signal mode {mode}")
    shmem.quiet()  # completes my nbi put_signal before its source goes away
    shmem.atomic_set(ack, i + 1, left)     # I consumed iteration i: left may overwrite
    shmem.wait_until(ack, CMP.GE, i + 1)   # right consumed mine
shmem.barrier_all()
# small payloads, no acks in between: each put_signal carries a distinct slot, and the
# ADD signal says how many slots must be complete
SLOTS, SM = iters(64), 256
slots = shmem.zeros((SLOTS, SM), np.int64)
cnt = shmem.new_signal()
shmem.barrier_all()
for i in range(SLOTS):
    shmem.put_signal(slots[i], base[:SM] + key(i, me), right, cnt, 1, shmem.SIGNAL_ADD)
    seen = shmem.signal_fetch(cnt)
    # every signal counted has its slot complete (put_signals without a fence between
    # them may land in any order, so count complete slots rather than naming them)
    complete = sum(np.array_equal(slots[j], base[:SM] + key(j, left)) for j in range(SLOTS))
    check(complete >= seen, f"streamed put_signal: signal says {seen} but {complete} slots are complete")
check(shmem.signal_wait_until(cnt, CMP.EQ, SLOTS) == SLOTS, "streamed put_signal count")
for j in range(SLOTS):
    verify(slots[j], j, left, "streamed put_signal slot at the end")
shmem.barrier_all()
shmem.free(slots)

# ---------------------------------------------------------------------------------------
# 2./3./5. generic producer/consumer stream over a flag, with several send protocols


def send_fence_put(d, flag, src, i):
    shmem.put(d, src, right)
    shmem.fence()
    shmem.put(flag, np.array([i + 1], np.int64), right)


def send_fence_nbi(d, flag, src, i):
    one = np.array([i + 1], np.int64)
    shmem.put_nbi(d[: d.size // 2], src[: d.size // 2], right)
    shmem.put_nbi(d[d.size // 2:], src[d.size // 2:], right)
    shmem.fence()
    shmem.put_nbi(flag, one, right)
    shmem.quiet()  # before `one` and `src` may go away


def send_fence_iput(d, flag, src, i):
    shmem.iput(d, src, right, tst=2, sst=2)            # even elements
    shmem.iput(d[1:], src[1:], right, tst=2, sst=2)    # odd elements
    shmem.fence()
    shmem.atomic_set(flag, i + 1, right)


def send_quiet_set(d, flag, src, i):
    shmem.put(d, src, right)
    shmem.quiet()
    shmem.atomic_set(flag, i + 1, right)


def send_quiet_inc(d, flag, src, i):
    shmem.put_nbi(d, src, right)
    shmem.quiet()
    shmem.atomic_inc(flag, right)


def send_ptr_store(d, flag, src, i):
    view = shmem.ptr(d, right)
    check(view is not None, "ptr() to a same-node PE must not be None")
    view[:] = src  # plain stores into the peer's memory
    shmem.fence()
    shmem.atomic_set(flag, i + 1, right)


def recv_wait(flag, i):
    shmem.wait_until(flag, CMP.GE, i + 1)


def recv_test(flag, i):
    while not shmem.test(flag, CMP.GE, i + 1):
        pass


def stream(name, send, recv, n_iter, m):
    d = shmem.zeros(m, np.int64)
    flag = shmem.zeros(1, np.int64)
    ack = shmem.zeros(1, np.int64)
    shmem.barrier_all()
    for i in range(n_iter):
        send(d, flag, base[:m] + key(i, me), i)
        recv(flag, i)
        check(int(flag[0]) == i + 1, f"{name}: flag {int(flag[0])} != {i + 1}")
        verify(d, i, left, name)
        shmem.atomic_set(ack, i + 1, left)
        shmem.wait_until(ack, CMP.GE, i + 1)
    shmem.barrier_all()
    for arr in (ack, flag, d):
        shmem.free(arr)


stream("put+fence+put(flag)", send_fence_put, recv_wait, iters(10), BIG // 2)
stream("put_nbi+fence+put_nbi(flag)", send_fence_nbi, recv_test, iters(8), BIG // 2)
stream("iput+fence+atomic_set", send_fence_iput, recv_wait, iters(6), BIG // 8)
stream("put+quiet+atomic_set", send_quiet_set, recv_wait, iters(10), BIG // 2)
stream("put_nbi+quiet+atomic_inc", send_quiet_inc, recv_test, iters(8), BIG // 2)
if os.environ.get("PYSHMEM_REMOTE_ONLY") == "1":  # no peer memory is mapped: ptr() says so
    probe = shmem.zeros(1, np.int64)
    check(shmem.ptr(probe, right) is None or right == me, "ptr() to a remote PE must be None")
    shmem.free(probe)
else:
    stream("ptr store+fence+atomic_set", send_ptr_store, recv_wait, iters(8), BIG // 2)

# 3b. quiet completes puts for every PE: I put to B = right, quiet, then tell
# C = right+1 (an atomic); C waits and *gets* the data from B.
B, C = right, (me + 2) % npes
from_a = (me - 2) % npes  # the PE that tells me (I am its C); its B is my left
d3 = shmem.zeros(BIG // 4, np.int64)
go = shmem.zeros(1, np.int64)
done = shmem.zeros(1, np.int64)
shmem.barrier_all()
for i in range(iters(6)):
    shmem.put(d3, base[: d3.size] + key(i, me), B)
    shmem.quiet()
    shmem.atomic_set(go, i + 1, C)
    shmem.wait_until(go, CMP.EQ, i + 1)
    got = np.empty(d3.size, np.int64)
    shmem.get(got, d3, left)  # left is from_a's B
    verify(got, i, from_a, "put+quiet seen by a third PE (get)")
    shmem.atomic_set(done, i + 1, from_a)
    shmem.wait_until(done, CMP.EQ, i + 1)
    shmem.barrier_all()  # left's d3 is overwritten by my left-left next round only after all checked
shmem.barrier_all()

# get_nbi completes at quiet
g = np.zeros(d3.size, np.int64)
shmem.get_nbi(g, d3, right)
shmem.quiet()
exp_src = (right - 1) % npes  # who last put into right's d3: right's left, i.e. me
verify(g, iters(6) - 1, exp_src, "get_nbi after quiet")
shmem.barrier_all()

# ---------------------------------------------------------------------------------------
# 4. ping-pong: pairs (0,1), (2,3); a PE without a partner plays both sides.
partner = me ^ 1 if (me ^ 1) < npes else me
PP, PM = iters(200), 64
pbuf = shmem.zeros(PM, np.int64)
pflag = shmem.zeros(1, np.int64)
shmem.barrier_all()
initiator = me <= partner


def pp_send(i):
    shmem.put(pbuf, base[:PM] + key(i, me), partner)
    shmem.fence()
    shmem.put(pflag, np.array([i + 1], np.int64), partner)


def pp_recv(i):
    shmem.wait_until(pflag, CMP.EQ, i + 1)
    verify(pbuf, i, partner, "ping-pong payload")


for i in range(PP):
    if initiator:
        pp_send(i)
        pp_recv(i)
    else:
        pp_recv(i)
        pp_send(i)
shmem.barrier_all()

# ---------------------------------------------------------------------------------------
# 5. ptr(): stores through the view are visible to the peer after quiet + barrier
# Not under PYSHMEM_REMOTE_ONLY, where no peer memory is mapped (section 3 checks that).
if os.environ.get("PYSHMEM_REMOTE_ONLY") != "1":
    arr = shmem.zeros(1000, np.int64)
    v = shmem.ptr(arr, right)
    check(v is not None and v.shape == arr.shape and v.dtype == arr.dtype, "ptr view shape/dtype")
    mine = shmem.ptr(arr, me)
    check(mine.__array_interface__["data"][0] == arr.__array_interface__["data"][0], "ptr(x, my_pe) is x itself")
    v[:] = base[:1000] + key(0, me)
    shmem.quiet()
    shmem.barrier_all()
    verify(arr, 0, left, "ptr store after quiet+barrier")
    vl = shmem.ptr(arr, left)
    verify(np.array(vl), 0, (left - 1) % npes, "ptr load of a peer after barrier")
    # views of 2-D F arrays and of strided slices keep shape and strides
    f2 = shmem.zeros((6, 5), np.float32, order="F")
    pv = shmem.ptr(f2, right)
    check(pv.shape == f2.shape and pv.strides == f2.strides and pv.flags.f_contiguous, "ptr keeps F layout")
    sv = shmem.ptr(arr[3::4], right)
    check(sv.shape == arr[3::4].shape and sv.strides == arr[3::4].strides, "ptr keeps strides")
    shmem.barrier_all()
    pv[:, 2] = me + 0.5
    sv[:] = -me - 1
    shmem.quiet()
    shmem.barrier_all()
    check(np.all(f2[:, 2] == left + 0.5) and np.all(f2[:, [0, 1, 3, 4]] == 0), "ptr store into an F column")
    check(np.all(arr[3::4] == -left - 1), "ptr store through a strided view")
    check(np.array_equal(np.delete(arr, np.arange(3, 1000, 4)),
                         np.delete(base[:1000] + key(0, left), np.arange(3, 1000, 4))), "ptr strided store wrote outside")
    shmem.barrier_all()

# ---------------------------------------------------------------------------------------
# 6. barrier_all completes outstanding puts: all-to-all with put_nbi (no quiet) and put
RM = BIG // 4
A = shmem.zeros((npes, RM), np.int64)
for it in range(iters(4)):
    for k in range(npes):
        p = (me + k) % npes
        if it % 2:
            shmem.put_nbi(A[me], base[:RM] + key(it * npes + p, me), p)
        else:
            shmem.put(A[me], base[:RM] + key(it * npes + p, me), p)
    shmem.barrier_all()
    for q in range(npes):
        verify(A[q], it * npes + me, q, f"barrier_all all-to-all round {it}")
    shmem.barrier_all()  # everyone checked before the next round overwrites
shmem.free(A)

# ---------------------------------------------------------------------------------------
# 7. sync_all as the barrier for atomics: every PE adds into slot i on every PE, then
# sync_all, then each PE checks its own slot. Fetching AMOs are complete when they return,
# so sync_all alone suffices; non-fetching ones are completed by quiet (OpenSHMEM: sync_all
# does not complete outstanding updates), so those rounds use quiet + sync_all.
NI = iters(20)
counters = shmem.zeros(NI, np.int64)
marks = shmem.zeros(NI, np.int64)
for i in range(NI):
    for k in range(npes):
        if i % 2 == 0:
            shmem.atomic_fetch_add(counters[i:i + 1], me + 1 + i, (me + k) % npes)
        else:
            shmem.atomic_add(counters[i:i + 1], me + 1 + i, (me + k) % npes)
    if i % 2 == 0:
        shmem.atomic_swap(marks[i:i + 1], key(i, me), right)
    else:
        shmem.atomic_set(marks[i:i + 1], key(i, me), right)
        shmem.quiet()
    shmem.sync_all()
    want = npes * (npes + 1) // 2 + npes * i
    check(int(counters[i]) == want, f"sync_all round {i}: counter {int(counters[i])} != {want}")
    check(int(marks[i]) == key(i, left), f"sync_all round {i}: atomic_set from left not visible")
shmem.barrier_all()

# ---------------------------------------------------------------------------------------
# 8. gather with wait_until_some: flag[q] is set (after a fence) once row q is written;
# the consumer excludes rows it has already seen through `status`.
GM = 8192
rows = shmem.zeros((npes, GM), np.int64)
flags = shmem.zeros(npes, np.int32)
shmem.barrier_all()
for k in range(1, npes + 1):
    p = (me + k) % npes
    shmem.put(rows[me], base[:GM] + key(p, me), p)
    shmem.fence()
    shmem.atomic_set(flags[me:me + 1], 1, p)
status = np.zeros(npes, np.int32)
seen = []
while len(seen) < npes:
    idx = shmem.wait_until_some(flags, CMP.EQ, 1, status=status)
    check(idx and all(status[j] == 0 for j in idx), f"wait_until_some returned {idx} with status {status}")
    for q in idx:
        verify(rows[q], me, q, "gathered row flagged by wait_until_some")
        status[q] = 1
        seen.append(q)
check(sorted(seen) == list(range(npes)), f"rows seen {seen}")
check(shmem.wait_until_any(flags, CMP.EQ, 1, status=status) is None, "all rows excluded")
shmem.barrier_all()

print(f"OK pe={me}", flush=True)
