"""Collectives on symmetric GPU arrays on a real GPU: stream= enqueues the device
collective as a kernel, stream=None waits; a cuda.core stream; split teams. Every
value checked. Prints OK pe=<k>."""

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pc

me, n = shmem.my_pe(), shmem.n_pes()
N = 1000
src = pc.zeros(N * n, np.int64)
dst = pc.zeros(N * n, np.int64)
f = pc.zeros(N, np.float32)
vals = (np.arange(N * n) + 1000 * me).astype(np.int64)
src.copy_from_host(vals)
f.copy_from_host(np.full(N, me + 1, np.float32))
inputs = {p: (np.arange(N * n) + 1000 * p).astype(np.int64) for p in range(n)}
shmem.barrier_all()

shmem.sum_reduce(dst[:N], src[:N])  # stream=None: done on return
assert np.array_equal(dst[:N].copy_to_host(), sum(inputs[p][:N] for p in range(n))), "sum_reduce"
shmem.max_reduce(f, f, stream=0)  # in place, on the default stream
assert np.all(f.copy_to_host() == n), "max_reduce in place"
shmem.broadcast(dst[:N], src[:N], n - 1)
assert np.array_equal(dst[:N].copy_to_host(), inputs[n - 1][:N]), "broadcast"
shmem.fcollect(dst, src[:N])
assert np.array_equal(dst.copy_to_host(), np.concatenate([inputs[p][:N] for p in range(n)])), "fcollect"
shmem.alltoall(dst, src)
assert np.array_equal(dst.copy_to_host(), np.concatenate([inputs[p][me * N:(me + 1) * N] for p in range(n)])), "a2a"
# collect: PE p brings p + 1 blocks of 10 (sizes differ); alltoalls: every other element
shmem.collect(dst, src[:10 * (me + 1)], stream=0)
want = np.concatenate([inputs[p][:10 * (p + 1)] for p in range(n)])
assert np.array_equal(dst[:want.size].copy_to_host(), want), "collect"
dst.copy_from_host(np.full(N * n, -1, np.int64))
shmem.alltoalls(dst, src, 2, 2, 7)  # 7 elements per PE, both strides 2
got = dst.copy_to_host()
for p in range(n):
    block = got[p * 14:(p + 1) * 14]
    assert np.array_equal(block[::2], inputs[p][me * 14:(me + 1) * 14:2]) and np.all(block[1::2] == -1), "alltoalls"
shmem.barrier(stream=0)

# A stream object from cuda.core.
try:
    from cuda.core import Device

    dev = Device()
    dev.set_current()
    stream = dev.create_stream()
    shmem.sum_reduce(dst[:N], src[:N], stream=stream)
    stream.sync()
    assert np.array_equal(dst[:N].copy_to_host(), sum(inputs[p][:N] for p in range(n))), "sum_reduce on a stream"
except ImportError:
    pass

teams = [shmem.TEAM_WORLD.split_strided(0, 1, max(1, n // 2)), shmem.TEAM_SHARED]
for t in teams:
    if t:
        shmem.sum_reduce(dst[:N], src[:N], team=t, stream=0)
        shmem.sync(t, stream=0)
        want = sum(inputs[t.translate_pe(i)][:N] for i in range(t.n_pes()))
        assert np.array_equal(dst[:N].copy_to_host(), want), f"sum_reduce over {t}"
shmem.barrier_all()
teams[0].destroy()
print(f"OK pe={me}", flush=True)
