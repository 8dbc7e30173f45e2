"""A device-API check that fails inside a thread of a CUDA C++ kernel on the CPU build
(PYSHMEM_DEBUG=1: pyshmem::p to a PE out of range, from thread 2 of a 64-thread block)
raises KernelError from the launch on that PE, naming the call, the thread and the
block, and the PE keeps working (a put to the right-hand PE afterwards); _block and
_warp calls whose threads pass different arguments are reported too. Prints
"OK pe=<k>". Kernel source: tests/kernels/faults_and_schedule.cu.
"""

from pathlib import Path

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = (Path(__file__).resolve().parents[2] / "kernels" / "faults_and_schedule.cu").read_text()

shmem.init()
me, n = shmem.my_pe(), shmem.n_pes()
mod = pcuda.Module(SOURCE, name="faults_and_schedule", target="cpu")
dst = shmem.zeros(4, np.int64)
try:
    pcuda.launch(mod.get_kernel("bad_pe"), 2, 64, dst)
except shmem.KernelError as exc:
    msg = str(exc)
    assert "pyshmem::p on PE" in msg and "PE out of range" in msg, msg
    assert "thread (2,0,0) of block (" in msg and "of kernel bad_pe" in msg, msg
    assert f"pyshmem.cuda.launch on PE {me}" in msg, msg
else:
    raise AssertionError("the device-API check did not fail the launch")
# The collective rule of _block/_warp calls, checked in debug mode.
src, sink = shmem.zeros(256, np.uint8), shmem.zeros(256, np.uint8)
src[:] = np.arange(256)
for kind, expect in ((0, "pyshmem::putmem_block: the threads of the block called it with different arguments "
                         "(thread 0 and thread 5 differ"),
                     (1, "pyshmem::putmem_warp: the lanes of warp 1 called it with different arguments")):
    try:
        pcuda.launch(mod.get_kernel("coop_args"), 1, 64, sink, src, np.int32(kind))
    except shmem.KernelError as exc:
        assert expect in str(exc), str(exc)
    else:
        raise AssertionError(f"kind {kind}: differing arguments were not reported")
pcuda.launch(mod.get_kernel("coop_args"), 1, 64, sink, src, np.int32(2))
assert (sink == src).all()
shmem.barrier_all()
shmem.put(dst, np.full(4, me + 1, np.int64), (me + 1) % n)
shmem.barrier_all()
assert dst.tolist() == [(me - 1) % n + 1] * 4, dst
print(f"OK pe={me}")
