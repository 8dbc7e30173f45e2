"""A deadlock inside device code, for PYSHMEM_TIMEOUT: the kernels of hang_signal.py.
PE 0's kernel waits for a signal that nobody sends; the other PEs' kernels put into PE
0's buffer (not its signal) and wait in the device barrier for PE 0, which never
arrives. Runs on the CPU build of the device API (pyshmem.cuda, target="cpu"). With
PYSHMEM_TIMEOUT=2 the job must end within seconds with a report that names the device
calls (tests/pe/test_hang.py)."""

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

SOURCE = r"""
#include <pyshmem/device.cuh>

extern "C" __global__ void deadlock(int64_t* data, uint64_t* sig) {
  if (pyshmem::my_pe() == 0) {
    pyshmem::signal_wait_until(sig, PYSHMEM_CMP_GE, 1);
  } else {
    const int64_t mine[4] = {1, 2, 3, 4};
    pyshmem::put(data, mine, 4, 0);  // toward PE 0, but not its signal
    pyshmem::barrier_all();
  }
}
"""

me = shmem.my_pe()
data = shmem.zeros(4, np.int64)       # allocation #1
sig = shmem.new_signal()              # allocation #2: the signal PE 0's kernel waits on
mod = pcuda.Module(SOURCE, name="hang_device", target="cpu")
shmem.barrier_all()
print(f"PE {me} launches", flush=True)
pcuda.launch(mod.get_kernel("deadlock"), 1, 1, data, sig)
print(f"unreachable on PE {me}", flush=True)
