"""Device-API teams and collectives in Numba kernels under the CUDA simulator (run with
shmemrun --sim): the same results as the host API's collectives. Prints OK pe=<k>."""
import numpy as np
from numba import cuda

import pyshmem
from pyshmem import device

assert device.SIMULATOR, "run with shmemrun --sim (NUMBA_ENABLE_CUDASIM=1)"
me, n = pyshmem.my_pe(), pyshmem.n_pes()
A = device.array
T = 32
N = 6

row, col = pyshmem.team_split_2d(pyshmem.TEAM_WORLD, 2)  # rows of two PEs
src = pyshmem.array((np.arange(N * n) + 100 * me).astype(np.int64))
red = pyshmem.zeros(N, np.int64)
fmax = pyshmem.zeros(N, np.float64)
fsrc = pyshmem.array(np.linspace(0, 1, N) * (me + 1))
bcast = pyshmem.zeros(N, np.int64)
gathered = pyshmem.zeros(N * n, np.int64)
a2a = pyshmem.zeros(N * n, np.int64)
coll = pyshmem.zeros(N * n, np.int64)
info = pyshmem.zeros(4, np.int32)


@cuda.jit
def k_coll(team, src, red, fsrc, fmax, bcast, gathered, a2a, coll, info):
    i = cuda.threadIdx.x
    if i == 0:
        info[0] = device.team_my_pe(team)
        info[1] = device.team_n_pes(team)
        info[2] = device.team_translate_pe(team, 0, device.TEAM_WORLD)
        device.sum_reduce(team, red, src[:6])
        device.max_reduce(team, fmax, fsrc)
        device.fcollect(team, gathered, src[:6])
        device.sync(team)
    device.broadcast_block(team, bcast, src[:6], 0)  # every thread of the block calls
    device.alltoall_warp(team, a2a, src)  # the first warp: all 32 threads
    device.collect_block(team, coll, src[:device.team_my_pe(team) + 1])  # member j brings j + 1
    if i == 0:
        device.barrier(team)


for team in (pyshmem.TEAM_WORLD, row):
    members = [team.translate_pe(j) for j in range(team.n_pes())]
    size, mine = len(members), team.my_pe()
    src[:] = np.arange(N * n) + 100 * me
    pyshmem.barrier_all()
    k_coll[1, T](int(team), A(src), A(red), A(fsrc), A(fmax), A(bcast), A(gathered), A(a2a), A(coll), A(info))
    inputs = {p: np.arange(N * n) + 100 * p for p in members}
    assert list(info) == [mine, size, members[0], 0], info
    assert (red == sum(inputs[p][:N] for p in members)).all(), red
    assert np.allclose(fmax, np.linspace(0, 1, N) * (max(members) + 1)), fmax
    assert (bcast == inputs[members[0]][:N]).all(), bcast
    assert (gathered[:N * size] == np.concatenate([inputs[p][:N] for p in members])).all(), gathered
    blk = N * n // size
    assert (a2a[:blk * size] == np.concatenate([inputs[p][mine * blk:(mine + 1) * blk] for p in members])).all(), a2a
    want = np.concatenate([inputs[p][:j + 1] for j, p in enumerate(members)])
    assert (coll[:want.size] == want).all(), coll
    pyshmem.barrier_all()

row.destroy()
col.destroy()
pyshmem.barrier_all()
print(f"OK pe={me}", flush=True)
