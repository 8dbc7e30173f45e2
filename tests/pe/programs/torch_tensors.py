"""Torch tensors through every host-API verb, on any number of PEs: symmetric tensors
from pyshmem.torch as targets (and views of them), plain torch tensors as sources,
values checked against what NumPy arrays give; bad tensors rejected with pyshmem
errors. Prints ``OK pe=<me>``.
"""

import warnings

import numpy as np
import torch

import pyshmem as shmem
import pyshmem.torch as st
from _expect import raises

me, npes = shmem.my_pe(), shmem.n_pes()
right, left = (me + 1) % npes, (me - 1) % npes


def check(cond, msg):
    if not cond:
        raise AssertionError(f"PE {me}: {msg}")


def equal(got, want, what):
    got = got.numpy() if isinstance(got, torch.Tensor) else np.asarray(got)
    check(np.array_equal(got, np.asarray(want)), f"{what}: got {got!r}, expected {want!r}")


# ---- allocation: shapes, dtypes (bfloat16 too), fills, symmetric addresses ------------
x = st.zeros((2, 3), dtype=torch.float64)
check(isinstance(x, torch.Tensor) and x.shape == (2, 3) and x.dtype == torch.float64 and x.is_contiguous(), "zeros")
check(bool((x == 0).all()) and shmem.addr_accessible(x, right), "zeros values / symmetric")
equal(st.ones(4, dtype=torch.int32), [1, 1, 1, 1], "ones")
equal(st.full((3,), 2.5), [2.5, 2.5, 2.5], "full")
b16 = st.full(4, 1.5, dtype=torch.bfloat16)
check(b16.dtype == torch.bfloat16 and float(b16[0]) == 1.5, "bfloat16 full")
e = st.empty((0,), dtype=torch.float32)
check(e.numel() == 0, "empty of zero elements")

# ---- RMA: put/get/put_nbi/get_nbi/iput/iget, tensors and views --------------------------
src = torch.arange(6, dtype=torch.float64).reshape(2, 3) + 10 * me
shmem.put(x, src, right)
shmem.barrier_all()
equal(x, np.arange(6).reshape(2, 3) + 10 * left, "put of a tensor into a symmetric tensor")
got = torch.empty(6, dtype=torch.float64)
shmem.get(got, x.view(-1), right)
equal(got, np.arange(6) + 10 * me, "get into a plain tensor")
row = torch.empty(3, dtype=torch.float64)
shmem.get(row, x[1], right)  # a view of a symmetric tensor as the source
equal(row, np.arange(3, 6) + 10 * me, "get from a row view")
shmem.barrier_all()
shmem.put_nbi(x[0], torch.full((3,), -1.0, dtype=torch.float64), right)
shmem.quiet()
nb = torch.zeros(3, dtype=torch.float64)
shmem.get_nbi(nb, x[1], left)
shmem.quiet()
shmem.barrier_all()
equal(x[0], [-1, -1, -1], "put_nbi")
equal(nb, np.arange(3, 6) + 10 * ((left - 1) % npes), "get_nbi")
shmem.barrier_all()
y = st.zeros(8, dtype=torch.int64)
shmem.iput(y, torch.arange(4, dtype=torch.int64) + 1, right, tst=2, sst=1)
shmem.barrier_all()
equal(y, [1, 0, 2, 0, 3, 0, 4, 0], "iput")
ig = torch.zeros(4, dtype=torch.int64)
shmem.iget(ig, y, right, tst=1, sst=2)
equal(ig, [1, 2, 3, 4], "iget")
shmem.barrier_all()
shmem.put(y[1::2], torch.arange(12, dtype=torch.int64).reshape(3, 4)[:, 1][:3], right)  # strided, as NumPy views are
shmem.barrier_all()
equal(y, [1, 1, 2, 5, 3, 9, 4, 0], "put of a strided view into a strided view")
b16_src = torch.tensor([0.5, 0.25, 2.0, 4.0], dtype=torch.bfloat16)
shmem.put(b16, b16_src, right)
shmem.barrier_all()
equal(b16.float(), [0.5, 0.25, 2.0, 4.0], "put of bfloat16")
shmem.barrier_all()
# Sources of other kinds of arrays: a NumPy array into a tensor, a tensor into a NumPy array.
arr = shmem.zeros(3, np.float64)
shmem.put(arr, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64), right)
shmem.put(x[0], np.array([7.0, 8.0, 9.0]), right)
shmem.barrier_all()
equal(arr, [1, 2, 3], "tensor source into a NumPy target")
equal(x[0], [7, 8, 9], "NumPy source into a tensor target")
shmem.barrier_all()
# A tensor that requires grad is read as its data (a source), as torch's own .data is.
w = torch.ones(3, dtype=torch.float64, requires_grad=True)
shmem.put(arr, w, right)
shmem.barrier_all()
equal(arr, [1, 1, 1], "put from a tensor that requires grad")
shmem.barrier_all()
# Parameters, subclasses (read through DLPack) and a tensor whose memory was swapped
# under the same object (set_): each call reads the tensor as it is now.
shmem.put(arr, torch.nn.Parameter(torch.full((3,), 2.0, dtype=torch.float64)), right)
shmem.barrier_all()
equal(arr, [2, 2, 2], "put from an nn.Parameter")
shmem.barrier_all()


class Sub(torch.Tensor):
    pass


shmem.put(arr, torch.full((3,), 3.0, dtype=torch.float64).as_subclass(Sub), right)
shmem.barrier_all()
equal(arr, [3, 3, 3], "put from a torch.Tensor subclass")
shmem.barrier_all()
swapped = torch.zeros(3, dtype=torch.float64)
shmem.put(arr, swapped, right)
swapped.set_(torch.full((3,), 4.0, dtype=torch.float64))
shmem.put(arr, swapped, right)
shmem.barrier_all()
equal(arr, [4, 4, 4], "put from a tensor after set_ gave it other memory")
shmem.barrier_all()

# DLPack-only and __array_interface__-only objects (JAX, CuPy on the host export these).


class DLPackOnly:
    def __init__(self, a):
        self._a = a

    def __dlpack__(self, **kw):
        return self._a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


class InterfaceOnly:
    def __init__(self, a):
        self.__array_interface__ = a.__array_interface__
        self._keep = a


shmem.put(arr, DLPackOnly(np.array([4.0, 5.0, 6.0])), right)
shmem.barrier_all()
equal(arr, [4, 5, 6], "put from a DLPack exporter")
shmem.barrier_all()
shmem.put(arr, InterfaceOnly(np.array([7.0, 8.0, 9.0])), right)
shmem.barrier_all()
equal(arr, [7, 8, 9], "put from an __array_interface__ object")
shmem.barrier_all()
ro = np.zeros(3)
ro.flags.writeable = False
raises(shmem.InvalidArgumentError, shmem.get, DLPackOnly(ro), arr, right, match="read-only")
raises(shmem.ShmemTypeError, shmem.put, arr, DLPackOnly(np.zeros(3, dtype=np.float16).view("V2")), right,
       match="failed to export DLPack")

# ---- atomics, signals, waits, locks on symmetric tensors --------------------------------
c = st.zeros(npes, dtype=torch.int64)
shmem.atomic_add(c[me:me + 1], 5, right)
check(shmem.atomic_fetch_add(c[me:me + 1], 1, right) == 5, "atomic_fetch_add returns the old value")
check(shmem.atomic_compare_swap(c[me:me + 1], 6, 42, right) == 6, "atomic_compare_swap")
fetch = torch.zeros(1, dtype=torch.int64)
shmem.atomic_fetch_add_nbi(fetch, c[me:me + 1], 1, right)
shmem.quiet()
check(int(fetch[0]) == 42, f"atomic_fetch_add_nbi into a tensor: {fetch}")
shmem.barrier_all()
check(int(c[left]) == 43, f"atomics landed: {c}")
flag = st.zeros(1, dtype=torch.int64)
shmem.barrier_all()
shmem.atomic_set(flag, me + 1, right)
shmem.wait_until(flag, shmem.CMP_EQ, left + 1)
flags = st.zeros(4, dtype=torch.int64)
shmem.barrier_all()
shmem.put(flags, torch.tensor([1, 1, 1, 1], dtype=torch.int64), right)
shmem.wait_until_all(flags, shmem.CMP_EQ, 1)
check(shmem.test_all(flags, shmem.CMP_EQ, 1), "test_all on a tensor")
shmem.wait_until_all_vector(flags, shmem.CMP_EQ, torch.ones(4, dtype=torch.int64))
sig = shmem.new_signal()
sig_t = st.from_array(sig)
data = st.zeros(4, dtype=torch.float32)
shmem.barrier_all()
shmem.put_signal(data, torch.full((4,), float(me)), right, sig_t, 1, shmem.SIGNAL_SET)
check(shmem.signal_wait_until(sig_t, shmem.CMP_EQ, 1) == 1, "signal_wait_until on a tensor")
equal(data, [left] * 4, "put_signal into a tensor")
check(shmem.signal_fetch(sig_t) == 1, "signal_fetch")
lock = st.from_array(shmem.new_lock())
counter = st.zeros(1, dtype=torch.int64)
cell = torch.zeros(1, dtype=torch.int64)
shmem.barrier_all()
for _ in range(3):  # a read-modify-write of PE 0's counter, made atomic by the lock
    shmem.set_lock(lock)
    shmem.get(cell, counter, 0)
    cell += 1
    shmem.put(counter, cell, 0)
    shmem.quiet()
    shmem.clear_lock(lock)
shmem.barrier_all()
if me == 0:
    check(int(counter[0]) == 3 * npes, f"lock-protected counter: {int(counter[0])}, expected {3 * npes}")

# ---- collectives --------------------------------------------------------------------
n = 4
s = st.full(n, float(me + 1), dtype=torch.float32)
r = st.zeros(n, dtype=torch.float32)
shmem.sum_reduce(r, s)
equal(r, [npes * (npes + 1) / 2] * n, "sum_reduce")
shmem.max_reduce(r, s)
equal(r, [float(npes)] * n, "max_reduce")
shmem.reduce(r, s, shmem.OP_PROD)
equal(r, [float(np.prod(np.arange(1, npes + 1)))] * n, "reduce(prod)")
ir = st.full(n, me + 1, dtype=torch.int32)
iout = st.zeros(n, dtype=torch.int32)
shmem.and_reduce(iout, ir)
want = np.bitwise_and.reduce(np.arange(1, npes + 1, dtype=np.int32))
equal(iout, [want] * n, "and_reduce")
bsrc = st.full(n, float(me), dtype=torch.float32)
shmem.broadcast(r, bsrc, 0)
equal(r, [0.0] * n, "broadcast")
g = st.zeros(n * npes, dtype=torch.float32)
shmem.fcollect(g, s)
equal(g, np.repeat(np.arange(1, npes + 1, dtype=np.float32), n), "fcollect")
shmem.collect(g, s, size=me % 2 + 1)
want = np.concatenate([np.full(p % 2 + 1, p + 1, np.float32) for p in range(npes)])
equal(g[:len(want)], want, "collect")
a_src = st.zeros(npes, dtype=torch.int64)
a_src.copy_(torch.arange(npes) + 100 * me)
a_dst = st.zeros(npes, dtype=torch.int64)
shmem.alltoall(a_dst, a_src, size=1)
equal(a_dst, [100 * p + me for p in range(npes)], "alltoall")
shmem.alltoalls(a_dst, a_src, 1, 1, 1)
equal(a_dst, [100 * p + me for p in range(npes)], "alltoalls")

# ---- ptr: a tensor over the peer's memory -------------------------------------------
peer = shmem.ptr(x, right)
check(isinstance(peer, torch.Tensor) and peer.shape == x.shape and peer.dtype == x.dtype, f"ptr: {peer!r}")
peer16 = shmem.ptr(b16, right)
check(peer16.dtype == torch.bfloat16, "ptr of a bfloat16 tensor keeps its dtype")
shmem.barrier_all()

# ---- bad tensors: pyshmem errors, not wrong answers ----------------------------------
raises(shmem.ShmemTypeError, shmem.put, x.view(-1), torch.zeros(6, dtype=torch.float32), right, match="dtype mismatch")
raises(shmem.ShmemTypeError, shmem.put, y, torch.arange(8)._neg_view(), right, match="negative bit set")
zc = torch.zeros(2, dtype=torch.complex64)
zt = st.zeros(2, dtype=torch.complex64)
raises(shmem.ShmemTypeError, shmem.put, zt, zc.conj(), right, match="conjugate bit set")
raises(shmem.ShmemError, shmem.put, torch.zeros(4, dtype=torch.int64), y[:4], right, match="symmetric")
raises(shmem.ShmemError, shmem.sum_reduce, r, torch.zeros(n, dtype=torch.float32), match="symmetric")
raises(shmem.ShmemTypeError, shmem.put, x, torch.zeros(6, dtype=torch.float64).to_sparse(), right,
       match="torch tensor pyshmem cannot read")
raises(shmem.ShmemTypeError, shmem.put, x, torch.empty(6, dtype=torch.float64, device="meta"), right,
       match="Cannot pack tensors on meta")
with warnings.catch_warnings():
    warnings.simplefilter("ignore", UserWarning)  # nested tensors are a "prototype"
    nested = torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)])
raises(shmem.ShmemTypeError, shmem.put, x, nested, right, match="torch tensor pyshmem cannot read")
raises(shmem.ShmemTypeError, shmem.put, y, y._neg_view(), right, match="negative bit set")  # a symmetric source
raises(shmem.ShmemTypeError, shmem.get, y._neg_view(), torch.zeros(8, dtype=torch.int64), right,
       match="target is a torch tensor with the negative bit set")
t2 = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1]  # a non-contiguous 1-D view
raises(shmem.InvalidArgumentError, shmem.sum_reduce, r[:3], t2, match="source must be a contiguous array")

# ---- free ---------------------------------------------------------------------------
shmem.barrier_all()
raises(shmem.InvalidArgumentError, st.free, x[1], match="not one pyshmem.torch allocated")
for t in (x, y, c, flag, flags, data, counter, s, r, ir, iout, bsrc, g, a_src, a_dst, b16, e, zt):
    st.free(t)
raises(shmem.InvalidArgumentError, st.free, x, match="freed already")
shmem.free(arr)
shmem.barrier_all()
print(f"OK pe={me}", flush=True)
