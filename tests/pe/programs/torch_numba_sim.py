"""Symmetric torch tensors passed straight to a Numba CUDA kernel (the simulator): the
device API's put_signal and waits act on them, and the values land in the heap.
Prints ``OK pe=<me>``."""

import os

os.environ.setdefault("NUMBA_ENABLE_CUDASIM", "1")

import torch  # noqa: E402
from numba import cuda  # noqa: E402

import pyshmem  # noqa: E402
import pyshmem.torch as st  # noqa: E402
from pyshmem import device  # noqa: E402

N = 8


@cuda.jit
def send(inbox, outbox, sig):
    i = cuda.threadIdx.x
    me, n = device.my_pe(), device.n_pes()
    outbox[i] = me * 100 + i
    cuda.syncthreads()
    device.put_signal_nbi_block(inbox, outbox, sig, 1, pyshmem.SIGNAL_SET, (me + 1) % n)
    if i == 0:
        device.signal_wait_until(sig, pyshmem.CMP_EQ, 1)


me, n = pyshmem.my_pe(), pyshmem.n_pes()
inbox = st.zeros(N, dtype=torch.int64)
outbox = st.zeros(N, dtype=torch.int64)
sig = st.zeros(1, dtype=torch.uint64)
send[1, N](inbox, outbox, sig)
cuda.synchronize()
pyshmem.barrier_all()
left = (me - 1) % n
assert torch.equal(inbox, left * 100 + torch.arange(N)), inbox
for t in (inbox, outbox, sig):
    st.free(t)
print(f"OK pe={me}", flush=True)
