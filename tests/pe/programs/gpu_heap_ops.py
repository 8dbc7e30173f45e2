"""The cuda backend's GPU heap under the launcher, against the fake CUDA driver
(tests/cpp/fake_cuda_driver.cpp: "device memory" is host memory, no kernels).

Checks allocation, put/get to every PE (whole arrays, row views, on a "stream"),
collective free and reuse, and the error for each kind of bad input. Prints "OK pe=<k>".
"""

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pc
from pyshmem._lib import lib

me, n = shmem.my_pe(), shmem.n_pes()
assert lib.gpu_active(), lib.gpu_describe()
assert lib.gpu_describe().startswith("cuda: GPU 0 (Fake CUDA device (pyshmem tests))"), lib.gpu_describe()
assert lib.gpu_arch() == "sm_90"
# The fake's "GPU memory" is host memory to UCX too, so UCX's software atomics may go
# there: nothing refuses them (a real GPU heap over tcp is refused: tests/gpu).
assert all(lib.gpu_atomics_problem(pe) == "" for pe in range(n))


def expect(exc_type, fragment, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc_type as exc:
        assert fragment in str(exc), f"{fragment!r} not in {exc}"
        return
    raise AssertionError(f"{fn.__name__} did not raise {exc_type.__name__}")


a = pc.zeros((n, 8), np.int64)
assert isinstance(a, pc.GpuArray) and a.shape == (n, 8) and a.nbytes == n * 64
cai = a.__cuda_array_interface__
assert cai["data"][0] == a.ptr and cai["typestr"] == "<i8" and cai["shape"] == (n, 8)
assert np.array_equal(a.copy_to_host(), np.zeros((n, 8), np.int64))
shmem.barrier_all()  # everyone checked the zeros before anyone writes

# every PE writes its row into every PE's copy, then reads its right neighbour's copy
def row_of(pe):
    return np.arange(8, dtype=np.int64) + 100 * pe


row = row_of(me)
for pe in range(n):
    pc.put(a[me], row, pe, stream=0 if pe % 2 else None)
pc.synchronize(0)  # stream=0 (the legacy default stream) enqueues; barrier_all does not wait for streams
shmem.barrier_all()
want = np.arange(8)[None, :] + 100 * np.arange(n)[:, None]
assert np.array_equal(a.copy_to_host(), want), a.copy_to_host()
got = np.zeros((n, 8), np.int64)
pc.get(got, a, (me + 1) % n)
assert np.array_equal(got, want)
one = np.zeros(8, np.int64)
pc.get(one, a[-1], (me + 1) % n, stream=0)
pc.synchronize()
assert np.array_equal(one, want[-1])

# the host API takes GPU arrays too (same routes), with shmem4py's size= and a stream=
h = pc.zeros((n, 8), np.int64)
shmem.barrier_all()
for pe in range(n):
    shmem.put(h[me], row, pe) if pe % 2 else shmem.put_nbi(h[me], row, pe, stream=0)
pc.synchronize(0)
shmem.barrier_all()
assert np.array_equal(h.copy_to_host(), want)
part = np.zeros(8, np.int64)
shmem.get(part, h[(me + 1) % n], (me + 2) % n, size=3)
assert part.tolist() == list(want[(me + 1) % n][:3]) + [0] * 5, part
shmem.get_nbi(part, h[me], me)
assert np.array_equal(part, row)
expect(TypeError, "dtype mismatch: target is int32 but source is int64", shmem.get, np.zeros(8, np.int32), h[0], 0)
expect(TypeError, "source is a GPU array but the symmetric target is host memory", shmem.put, np.zeros(8, np.int64),
       h[0], 0)
expect(ValueError, "copies of GPU arrays take contiguous arrays", shmem.put, h[0], np.zeros(16, np.int64)[::2], 0)
expect(ValueError, "size=9 elements exceeds the target", shmem.put, h[0], np.zeros(16, np.int64), 0, size=9)
# the rest of the host API does not take GPU arrays yet (waits do: gpu_waits.py), and says so
sig = pc.zeros(1, np.uint64)
ga, gb = pc.zeros(8, np.int64), pc.zeros(8, np.int64)  # for the GPU collectives below
try:
    import cuda.core  # noqa: F401
    have_nvrtc = True
except ImportError:
    have_nvrtc = False
if have_nvrtc and n == 1:  # atomics on GPU arrays run a kernel (NVRTC: slow, so once): the fake driver cannot load it
    expect(shmem.ShmemOSError, "atomics on GPU arrays run a kernel (pyshmem/kernels/host_amo.cu) that cannot be loaded",
           shmem.atomic_fetch_add, h[0][:1], 1, 0)
    # put_signal into a GPU array: the data is copied, the GPU signal needs that kernel too
    expect(shmem.ShmemOSError, "cannot be loaded", shmem.put_signal, h[0], row, 0, sig, 1, shmem.SIGNAL_SET)
    assert np.array_equal(h[0].copy_to_host(), row)
    # collectives on GPU arrays (stream= or not) run a kernel of pyshmem/kernels/coll.cu: routed, then refused
    expect(shmem.ShmemOSError, "(pyshmem/kernels/coll.cu) cannot be loaded", shmem.sum_reduce, ga, gb, stream=0)
    expect(shmem.ShmemOSError, "cannot be loaded", shmem.broadcast, ga, gb, 0)
    expect(shmem.ShmemOSError, "cannot be loaded", shmem.sync, stream=0)
    expect(shmem.ShmemOSError, "cannot be loaded", shmem.collect, ga, gb, 2, stream=0)
    expect(shmem.ShmemOSError, "cannot be loaded", shmem.alltoalls, ga, gb, 2, 1, 1, stream=0)
# argument checks of the GPU collectives come before any kernel
expect(TypeError, "source must be a symmetric GPU array", shmem.fcollect, ga, np.zeros(8, np.int64), stream=0)
expect(TypeError, "with stream= or GPU arrays, target must be a symmetric GPU array", shmem.sum_reduce,
       np.zeros(8, np.int64), np.zeros(8, np.int64), stream=0)
expect(TypeError, "'and' reduction is not defined for float64", shmem.and_reduce, pc.zeros(4), pc.zeros(4), stream=0)
expect(ValueError, "root 9 is not a PE of the team", shmem.broadcast, ga, gb, 9, stream=0)
expect(ValueError, "size=9 exceeds source (8 elements)", shmem.collect, ga, gb, 9, stream=0)
expect(ValueError, "strides must be >= 1 (tst=0, sst=1)", shmem.alltoalls, ga, gb, 0, 1, stream=0)
expect(ValueError, f"size=9 per PE x {n} PEs exceeds target", shmem.alltoalls, ga, gb, 1, 1, 9, stream=0)
expect(TypeError, "atomics on float64 are not supported", shmem.atomic_and, pc.zeros(1, np.float64), 1, 0)
expect(ValueError, "PE 7 is out of range", shmem.atomic_add, h[0][:1], 1, 7)
expect(TypeError, "source is a GPU array but target is host memory", shmem.put_signal, shmem.zeros(8, np.int64),
       h[0], 0, sig, 1, shmem.SIGNAL_SET)
expect(ValueError, "signal must be a 1-element uint64", shmem.put_signal, h[0], row, 0, h[-1][:1], 1,
       shmem.SIGNAL_SET)
gl = pc.zeros(1, np.int64)
expect(NotImplementedError, "is a GPU array, which this argument does not take", shmem.set_lock, gl)
expect(TypeError, "is a GPU array but the symmetric target is host memory", shmem.iput, shmem.zeros(8, np.int64),
       h[0], 0)
shmem.barrier_all()

# strided copies with GPU arrays: every other element of the right neighbour's row `me`
st = pc.zeros((n, 8), np.int64)
shmem.barrier_all()
shmem.iput(st[me], row, (me + 1) % n, 2, 1, 4)  # target stride 2, source stride 1, 4 elements
shmem.barrier_all()
left = (me - 1) % n
got_row = st[left].copy_to_host()
assert got_row[0::2].tolist() == list(row_of(left)[:4]) and not got_row[1::2].any(), got_row
back = np.zeros(8, np.int64)
shmem.iget(back, st[me], (me + 1) % n, 1, 2, 4)  # what this PE put there, read back strided
assert back[:4].tolist() == list(row[:4]) and not back[4:].any(), back
shmem.barrier_all()
pc.free(st)
expect(ValueError, "stream= orders copies of GPU arrays", shmem.put, shmem.zeros(2, np.int64), np.zeros(2, np.int64),
       0, stream=1)
shmem.barrier_all()

# GPU to GPU: a GpuArray (any __cuda_array_interface__ object) as the local side
b = pc.empty(8, np.int64)
b.copy_from_host(row)
pc.put(a[me], b, (me + 1) % n)
shmem.barrier_all()

# free is collective; the next allocation of the same size gets the same offset
ptr = b.ptr
pc.free(b)
c = pc.zeros(8, np.int64)
assert c.ptr == ptr and np.array_equal(c.copy_to_host(), np.zeros(8, np.int64))
shmem.barrier_all()

# bad input: each a clear exception
expect(ValueError, "source has 16 bytes, dest 64", pc.put, c, np.zeros(2, np.int64), 0)
expect(ValueError, "PE 99 is out of range", pc.put, c, row, 99)
expect(ValueError, "not a symmetric GPU object", pc.put, pc.GpuArray(c.ptr + (1 << 40), (8,), np.int64), row, 0)
expect(TypeError, "stream must be None", pc.put, c, row, 0, stream="fast")
expect(TypeError, "not bool", pc.put, c, row, 0, stream=True)
expect(ValueError, "stream handle -1 is negative", pc.get, np.zeros(8, np.int64), c, 0, stream=-1)
expect(TypeError, "stream must be a CUDA stream (0: the legacy default stream), not None", pc.synchronize, None)
expect(TypeError, "dest must be a symmetric GpuArray", pc.put, np.zeros(8), row, 0)
expect(ValueError, "source is not C-contiguous", pc.put, c, np.zeros(16, np.int64)[::2], 0)
expect(shmem.InvalidArgumentError, "not a view", pc.free, a[0])
expect(MemoryError, "PYSHMEM_CUDA_SYMMETRIC_SIZE", pc.empty, 1 << 40, np.uint8)
expect(IndexError, "contiguous", a.__getitem__, slice(0, n, 2))

# GPU modules: NVRTC builds the cubin; the fake driver cannot load it, and says so
src = '#include <pyshmem/device.cuh>\nextern "C" __global__ void k(long long* x) { pyshmem::p(x, 1LL, 0); }\n'
if have_nvrtc:
    expect(shmem.ShmemOSError, "cuModuleLoadData failed", pc.Module, src, name="gpu_fake")
expect(shmem.InvalidArgumentError, "target must be", pc.Module, src, target="tpu")
cpu_mod = pc.Module(src, name="gpu_fake_cpu", target="cpu")
assert cpu_mod.target == "cpu"

shmem.barrier_all()
pc.free(c)
pc.free(sig)
pc.free(a)
print(f"OK pe={me}")
