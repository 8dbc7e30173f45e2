"""An idle proxy thread wakes for work at once, however long its doze.

Two PEs on two "hosts" (UCX over tcp: an atomic on PE 1 completes only when PE 1
progresses its worker). Run with PYSHMEM_PROXY_IDLE_SLEEP_MAX_US far above the waits
here, so that a proxy woken only by its doze timer would answer seconds late:

1. Both PEs go quiet. PE 1 then sleeps in Python, outside pyshmem, for WAIT_S + 2 s:
   only its proxy can answer. PE 0 sleeps WAIT_S, then a CPU-build kernel does one
   fetching atomic on PE 1: the request wakes PE 0's dozing proxy through the ring's
   doorbell, and its arrival wakes PE 1's dozing proxy through UCX's event fd.
2. The same with a host-API atomic_fetch_add from PE 0 (PE 1's proxy only).

After WAIT_S of idling a proxy's doze (doubling from 50 us) is seconds long. PE 0 prints
"WAKE kernel=<s> host=<s>", the time of each operation; both PEs print "OK pe=<k>".
"""

import time

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda

WAIT_S = 5.0
SOURCE = r"""
#include <pyshmem/device.cuh>
extern "C" __global__ void fetch_add_on(int64_t* counter, int pe, int64_t* old) {
  old[0] = pyshmem::atomic_fetch_add(counter, int64_t(1), pe);
}
"""

me = shmem.my_pe()
assert shmem.n_pes() == 2
counter = shmem.zeros(1, np.int64)
old = shmem.zeros(1, np.int64)
mod = pcuda.Module(SOURCE, name="multihost_proxy_wake", target="cpu")  # compiled before the quiet period
took = {}
for what in ("kernel", "host"):
    shmem.barrier_all()
    if me == 1:
        time.sleep(WAIT_S + 2.0)
    else:
        time.sleep(WAIT_S)
        t0 = time.monotonic()
        if what == "kernel":
            pcuda.launch(mod.get_kernel("fetch_add_on"), 1, 1, counter, np.int32(1), old)
            value = int(old[0])
        else:
            value = int(shmem.atomic_fetch_add(counter, 1, 1))
        took[what] = time.monotonic() - t0
        assert value == (0 if what == "kernel" else 1), (what, value)
shmem.barrier_all()
if me == 1:
    assert int(counter[0]) == 2, int(counter[0])
else:
    print(f"WAKE kernel={took['kernel']:.4f} host={took['host']:.4f}", flush=True)
print(f"OK pe={me}", flush=True)
