"""A device-API check that fails inside a thread of a CUDA C++ kernel on the CPU build
(PYSHMEM_DEBUG=1: pyshmem::p to a PE out of range, from thread 2 of a 64-thread block)
raises KernelError from the launch on that PE, naming the call, the thread and the
block, and the PE keeps working (a put to the right-hand PE afterwards). Prints
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
shmem.barrier_all()
shmem.put(dst, np.full(4, me + 1, np.int64), (me + 1) % n)
shmem.barrier_all()
assert dst.tolist() == [(me - 1) % n + 1] * 4, dst
print(f"OK pe={me}")
