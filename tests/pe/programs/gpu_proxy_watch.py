"""The proxy thread and GPU kernels' requests (cuda backend, the fake CUDA driver, every
peer on "another node": PYSHMEM_REMOTE_ONLY=1, so GPU kernels reach peers through the
proxy's GPU ring). GPU kernels cannot wake a dozing proxy; it polls while watched GPU
work is in flight and for PYSHMEM_PROXY_GPU_LINGER_US after a GPU kernel's request.

The fake driver's `proxy_p` kernel pushes an 8-byte p on the ring exactly as the device
API does from a GPU (no doorbell) and ends once the proxy executed it; `spin` is a kernel
that runs until a host flag is set. PE 0 runs the cases, PE 1 checks what landed in its
GPU memory. Case (argv[1]):
  watch    kernels launched through pyshmem are watched: the proxy polls (its CPU time
           over a second is high) while one runs, and dozes (low) after it ended; a
           kernel launched by a framework (not seen by pyshmem) is watched after
           pyshmem.cuda.watch_stream; GPU-ring requests land on the target
  linger   after a GPU kernel's request the proxy polls for PYSHMEM_PROXY_GPU_LINGER_US
           (argv[2] is the expected "busy" or "idle" in the second after it)
Prints "CPU pe=0 <what>=<fraction of a core>" lines, "SERVED pe=0 s=<seconds>" for each
request and "OK pe=<k>".
"""

import ctypes
import os
import sys
import time

import numpy as np

CASE = sys.argv[1]

import pyshmem as shmem  # noqa: E402
import pyshmem.cuda as pc  # noqa: E402
from pyshmem._lib import lib  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "gpu"))
import harness  # noqa: E402
from _fake_cuda import framework_launch, framework_stream, framework_sync  # noqa: E402
from _proxy_cpu import proxy_cpu_fraction  # noqa: E402

shmem.init()
me, n = shmem.my_pe(), shmem.n_pes()
assert lib.gpu_active(), lib.gpu_describe()


def proxy_cpu_over(what, seconds=1.0):
    fraction = proxy_cpu_fraction(seconds)
    print(f"CPU pe={me} {what}={fraction:.3f}", flush=True)
    return fraction


module = lib.gpu_module_load((f"FAKECUDA-MODULE\nglobal pyshmem_d_state {ctypes.sizeof(harness.DeviceState)}\n"
                              "kernel spin wait_flag\nkernel proxy_p proxy_p pyshmem_d_state\n").encode() + b"\0",
                             "test")
spin, proxy_p = (lib.gpu_module_function(module, k, "test") for k in ("spin", "proxy_p"))
cells = pc.zeros(4, np.int64)
flag = np.zeros(1, np.uint64)
shmem.barrier_all()


def launch(function, stream, *params):
    """pyshmem.cuda.launch's path (stream 0: waits for the legacy stream)."""
    lib.gpu_launch(function, [1, 1, 1], [1, 1, 1], 0, stream, [np.uint64(p).tobytes() for p in params], False,
                   "test")


def served(fn):
    t0 = time.monotonic()
    fn()
    print(f"SERVED pe={me} s={time.monotonic() - t0:.4f}", flush=True)


if me == 0 and CASE == "watch":
    time.sleep(1.0)
    proxy_cpu_over("idle_before")
    s = framework_stream()
    launch(spin, s, flag.ctypes.data)  # through pyshmem: watched until it ends
    proxy_cpu_over("pyshmem_kernel_running")
    served(lambda: launch(proxy_p, 0, cells.ptr, 11, 1))  # served by the polling proxy
    flag[0] = 1
    framework_sync(s)
    time.sleep(0.5)
    proxy_cpu_over("after_it_ended")
    flag[0] = 0
    s2 = framework_stream()
    framework_launch(spin, s2, flag.ctypes.data)  # unseen by pyshmem: the proxy keeps dozing
    proxy_cpu_over("framework_kernel_unwatched")
    pc.watch_stream(s2)
    proxy_cpu_over("framework_kernel_watched")
    framework_launch(proxy_p, s2, cells.ptr + 8, 22, 1)
    flag[0] = 1
    served(lambda: framework_sync(s2))
    time.sleep(0.5)
    proxy_cpu_over("after_watched_ended")
elif me == 0 and CASE == "linger":
    time.sleep(1.0)
    s = framework_stream()
    framework_launch(proxy_p, s, cells.ptr, 11, 1)  # unwatched: served when the doze ends
    served(lambda: framework_sync(s))
    time.sleep(0.1)
    fraction = proxy_cpu_over("after_gpu_request")
    if sys.argv[2] == "busy":
        assert fraction > 0.2, fraction
    else:
        assert fraction < 0.1, fraction
shmem.barrier_all()
if me == 1:
    host = np.zeros(4, np.int64)
    pc.get(host, cells, me)
    want = [11, 22, 0, 0] if CASE == "watch" else [11, 0, 0, 0]
    assert host.tolist() == want, host
shmem.barrier_all()
print(f"OK pe={me}", flush=True)
shmem.finalize()
