"""NVSHMEM-style CUDA C++ kernels (tests/kernels/nvshmem_style.cu: nvshmem_* names only)
driven from Python with pyshmem.cuda.Module on the CPU build, results checked on every PE.

Covers: a ring broadcast (int put + fence + signal_op), a chunked ring reduce
(float put_signal_nbi), a 128-thread block put, warp put_nbi + int64 g + typed atomics,
an MoE-style count shuffle with extern __shared__ counts and int p + barrier_all, and a
block sum reduction over NVSHMEM_TEAM_WORLD with team queries, and half / bfloat16 RMA.
Prints "OK pe=<k>".

    nvshmem_kernels.py [cpu|gpu]   (default cpu; gpu: the cuda backend, GPU arrays; tests/gpu)
"""

import sys
from pathlib import Path

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

me, npes = shmem.my_pe(), shmem.n_pes()
SOURCE = (Path(__file__).resolve().parents[2] / "kernels" / "nvshmem_style.cu").read_text()
TARGET = sys.argv[1] if len(sys.argv) > 1 else "cpu"
module = pcuda.Module(SOURCE, name="nvshmem_style", target=TARGET)
ON_GPU = module.target == "gpu"


def buf(values_or_shape, dtype=None):
    """A symmetric array for the kernels: zeros of a shape, or a copy of host values."""
    if dtype is not None:
        return pcuda.zeros(values_or_shape, dtype) if ON_GPU else shmem.zeros(values_or_shape, dtype)
    values = np.ascontiguousarray(values_or_shape)
    a = buf(values.shape, values.dtype)
    from_host(a, values)
    return a


def host(a):
    return a.copy_to_host() if ON_GPU else np.array(a)


def from_host(a, values):
    if ON_GPU:
        a.copy_from_host(np.ascontiguousarray(values, dtype=a.dtype))
    else:
        a[...] = values


def free(a):
    (pcuda.free if ON_GPU else shmem.free)(a)

k = {name: module.get_kernel(name) for name in
     ("ring_bcast", "ring_reduce", "block_put", "warp_nbi", "shuffle_counts", "team_sum", "half_put", "bad_cmp")}


def check(cond, what):
    if not cond:
        raise AssertionError(f"PE {me}: {what}")


# ring broadcast
N = 37
data = buf(N, np.int32)
sig = buf(1, np.uint64)
if me == 0:
    from_host(data, np.arange(N, dtype=np.int32) * 3 + 1)
shmem.barrier_all()
pcuda.launch(k["ring_bcast"], 1, 1, data, sig, np.uint64(N))
shmem.barrier_all()
check(np.array_equal(host(data), np.arange(N, dtype=np.int32) * 3 + 1), f"ring broadcast: {host(data)[:5]}")

# chunked ring reduce, twice (signals only grow: epoch 1, 2)
CHUNK, NCHUNKS = 16, 5
acc = buf(CHUNK * NCHUNKS, np.float32)
inbox = buf(CHUNK * NCHUNKS, np.float32)
sigs = buf(NCHUNKS, np.uint64)
for epoch in (1, 2):
    mine = buf(np.arange(CHUNK * NCHUNKS, dtype=np.float32) * 0.25 + me + epoch)
    shmem.barrier_all()
    pcuda.launch(k["ring_reduce"], 1, 1, acc, mine, inbox, sigs, np.uint64(CHUNK), np.int32(NCHUNKS),
                 np.uint64(epoch))
    shmem.barrier_all()
    if me == npes - 1:
        expect = np.zeros(CHUNK * NCHUNKS, np.float32)
        for p in range(npes):  # the ring adds in PE order, in float32
            expect = expect + (np.arange(CHUNK * NCHUNKS, dtype=np.float32) * 0.25 + p + epoch)
        check(np.array_equal(host(acc), expect), f"ring reduce epoch {epoch}: {host(acc)[:4]} vs {expect[:4]}")
    shmem.barrier_all()
    free(mine)

# block put from 128 threads
M = 1000
src = buf(np.arange(M, dtype=np.float32) + 1000 * me)
dst = buf(M, np.float32)
shmem.barrier_all()
pcuda.launch(k["block_put"], 1, 128, dst, src, np.uint64(M))
shmem.barrier_all()
left = (me - 1) % npes
check(np.array_equal(host(dst), np.arange(M, dtype=np.float32) + 1000 * left), "block put")

# warp put_nbi, g, atomics
PER_WARP, WARPS = 8, 4
wsrc = buf(np.arange(PER_WARP * WARPS, dtype=np.int64) + 100000 * me)
wdst = buf(PER_WARP * WARPS, np.int64)
counter = buf(1, np.int64)
peek = buf(2, np.int64)
shmem.barrier_all()
pcuda.launch(k["warp_nbi"], 1, 32 * WARPS, wdst, wsrc, np.uint64(PER_WARP), counter, peek)
shmem.barrier_all()
right = (me + 1) % npes
check(np.array_equal(host(wdst), np.arange(PER_WARP * WARPS, dtype=np.int64) + 100000 * right),
      f"warp put_nbi: {host(wdst)[:4]}")
pk = host(peek)
check(int(pk[0]) == 100000 * left and int(pk[1]) == 1, f"int64 g / fetch_add: {pk}")
if me == 0:
    check(int(host(counter)[0]) == npes, f"atomic_add count {host(counter)}")

# MoE-style count shuffle with extern __shared__ counts
NTOK = 203
dest_of_token = buf((np.arange(NTOK, dtype=np.int32) * 7 + me) % npes)
counts_in = buf(npes, np.int32)
shmem.barrier_all()
pcuda.launch(k["shuffle_counts"], 1, 64, dest_of_token, np.int32(NTOK), counts_in, shared_mem=4 * npes)
shmem.barrier_all()
got = host(counts_in)
for s in range(npes):
    want = int(np.count_nonzero((np.arange(NTOK) * 7 + s) % npes == me))
    check(int(got[s]) == want, f"shuffle: from PE {s} got {got[s]}, want {want}")

# team sum reduction (block) and team queries
R = 50
rsrc = buf(np.arange(R, dtype=np.int32) + me)
rdst = buf(R, np.int32)
info = buf(3, np.int32)
shmem.barrier_all()
pcuda.launch(k["team_sum"], 1, 64, rdst, rsrc, np.uint64(R), info)
shmem.barrier_all()
check(np.array_equal(host(rdst), np.arange(R, dtype=np.int32) * npes + npes * (npes - 1) // 2),
      f"sum_reduce: {host(rdst)[:4]}")
check(list(host(info)) == [me, npes, 1], f"team queries / nvshmem_ptr: {list(host(info))}")

# half-precision RMA: float16 values, and one bfloat16 (NumPy has none: its bits as uint16)
H = 24
hsrc = buf(np.arange(H, dtype=np.float16) * 0.25 + me * 0.5)
hdst = buf(H, np.float16)
bdst = buf(2, np.uint16)
shmem.barrier_all()
pcuda.launch(k["half_put"], 1, 1, hdst, hsrc, np.uint64(H), bdst, np.float32(1.5 + me))
shmem.barrier_all()
check(np.array_equal(host(hdst), np.arange(H, dtype=np.float16) * 0.25 + left * 0.5), f"half put: {host(hdst)[:4]}")
want_bits = int(np.array([1.5 + left], np.float32).view(np.uint32)[0] >> 16)  # exact in bfloat16
check(int(host(bdst)[0]) == want_bits, f"bfloat16 p: {host(bdst)[0]:#x}, want {want_bits:#x}")

# a comparison that is no NVSHMEM_CMP_* constant fails the launch, naming the call (CPU
# build only: on a GPU the trap would end the CUDA context of the rest of the program)
flag = buf(1, np.int32)
for which, call in enumerate(() if ON_GPU else ("wait_until", "wait_until_any", "test")):
    try:
        pcuda.launch(k["bad_cmp"], 1, 1, flag, np.int32(42), np.int32(which))
        check(False, f"bad cmp accepted by {call}")
    except shmem.KernelError as e:
        check(f"pyshmem::{call} on PE {me}: cmp must be one of PYSHMEM_CMP_EQ" in str(e), f"bad cmp: {e}")

shmem.barrier_all()
print(f"OK pe={me}", flush=True)
