"""The cuda backend's host side against the fake CUDA driver in its asynchronous mode
(tests/cpp/fake_cuda_driver.cpp: copies, fills and launches run later on per-stream
worker threads, legacy-stream rules as CUDA's), where completion bugs show up.

    python gpu_async.py <case>      (under shmemrun; PYSHMEM_CUDA_DRIVER = the fake)

Cases:
  copies   host put/get of GPU arrays are complete on return: a put (GPU or pageable
           host source) followed by barrier_all is what the peer reads; a fresh zeros
           array is zero before any peer writes, and a peer's early write survives it.
  signal   put_signal into a GPU array with a host signal: the data before the signal.
  state    the device state a module gets is in place before a kernel on any stream runs.
  legacy   host calls on GPU arrays (get, test, put, wait) finish while a user kernel spins
           on the legacy default stream; launch(stream=None) waits for its own stream only.
  devices  device choice (the framework's current context, PYSHMEM_CUDA_DEVICE, local
           rank) and the caller's current context kept across pyshmem calls.
Prints "OK pe=<k>".
"""

import ctypes
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

from _fake_cuda import FAKE, framework_stream, framework_sync
CASE = sys.argv[1]

if CASE == "devices" and os.environ.get("FRAMEWORK_DEVICE"):
    # A framework (PyTorch, CuPy, Numba) selected a GPU before pyshmem.init.
    assert FAKE.fake_cuda_set_current_device(int(os.environ["FRAMEWORK_DEVICE"])) == 0

import pyshmem as shmem  # noqa: E402
import pyshmem.cuda as pc  # noqa: E402
from pyshmem._lib import lib  # noqa: E402

shmem.init()
me, n = shmem.my_pe(), shmem.n_pes()
assert lib.gpu_active(), lib.gpu_describe()
CU_STREAM_LEGACY = 1
user_stream, sync = framework_stream, framework_sync  # a framework's stream and its synchronize


def fake_module(text):
    """Loads a fake-driver module (the fake runs these 'kernels' on its stream workers),
    with the pyshmem_d_state global every module using the device API has."""
    import harness

    image = f"FAKECUDA-MODULE\nglobal pyshmem_d_state {ctypes.sizeof(harness.DeviceState)}\n{text}\n"
    return lib.gpu_module_load(image.encode() + b"\0", "test")


def launch(module, kernel, stream, *params, cooperative=False):
    lib.gpu_launch(lib.gpu_module_function(module, kernel, "test"), [1, 1, 1], [1, 1, 1], 0, stream,
                   [np.uint64(p).tobytes() for p in params], cooperative, "test")


def case_copies():
    for it in range(6):
        x = pc.zeros((n, 8), np.int64)  # reuses the offset the previous round freed (with data in it)
        early = pc.zeros(8, np.int64)
        # No barrier: peers write into my `early` as soon as their zeros() returned. The
        # zero fill of my copy must not land after that.
        for pe in range(n):
            if pe != me:
                pc.put(early[me:me + 1], np.array([1000 * it + me], np.int64), pe)
        gsrc = pc.empty(8, np.int64)
        pc.put(gsrc, np.full(8, 10 * it + me, np.int64), me)  # my own copy, from pageable host memory
        for pe in range(n):
            pc.put(x[me], gsrc, pe)  # GPU to GPU
        shmem.barrier_all()
        got = x.copy_to_host()
        want = np.repeat((10 * it + np.arange(n))[:, None], 8, axis=1)
        assert np.array_equal(got, want), f"round {it}: a put returned before its data landed:\n{got}"
        e = early.copy_to_host()
        for pe in range(n):
            if pe != me:
                assert e[pe] == 1000 * it + pe, f"round {it}: PE {pe}'s early write was wiped by the zero fill: {e}"
        mine = np.zeros(8, np.int64)
        pc.get(mine, x[me], (me + 1) % n)
        assert np.array_equal(mine, want[me]), mine
        shmem.barrier_all()
        pc.free(gsrc)
        pc.free(early)
        pc.free(x)


def case_signal():
    data = pc.zeros(4096, np.int64)
    sig = shmem.zeros(1, np.uint64)
    for it in range(1, 7):
        if me == 0:
            shmem.put_signal(data, np.full(4096, it, np.int64), 1, sig, it, shmem.SIGNAL_SET)
        elif me == 1:
            shmem.signal_wait_until(sig, shmem.CMP_EQ, it)
            got = data.copy_to_host()
            assert (got == it).all(), f"round {it}: the signal arrived before the data ({np.unique(got)})"
        shmem.barrier_all()


def case_state():
    import harness

    size = ctypes.sizeof(harness.DeviceState)
    mod = fake_module("kernel read copy_global pyshmem_d_state")
    out = pc.zeros(size, np.uint8)
    stream = user_stream()  # a framework's non-blocking stream: not ordered after the legacy stream
    launch(mod, "read", stream, out.ptr)
    sync(stream)
    st = harness.DeviceState.from_buffer_copy(out.copy_to_host().tobytes())
    assert (st.version, st.my_pe, st.n_pes) == (harness.STATE_VERSION, me, n), \
        f"a kernel read the device state before it was uploaded: version {st.version}, pe {st.my_pe}, n {st.n_pes}"
    assert st.heap_base != 0


def case_legacy():
    mod = fake_module("kernel spin wait_flag\nkernel store store_u64")
    flag = np.zeros(1, np.uint64)  # host memory: the fake's kernels read it
    g = pc.zeros(8, np.int64)
    shmem.barrier_all()
    # A user kernel spins on the legacy default stream until the host sets `flag`.
    launch(mod, "spin", CU_STREAM_LEGACY, flag.ctypes.data)
    done = []

    def host_calls():
        pc.put(g, np.arange(8, dtype=np.int64), me)
        back = np.zeros(8, np.int64)
        pc.get(back, g, me)
        assert np.array_equal(back, np.arange(8)), back
        assert shmem.test(g[1:2], shmem.CMP_EQ, 1)
        shmem.wait_until(g[2:3], shmem.CMP_EQ, 2)
        done.append(time.monotonic())

    worker = threading.Thread(target=host_calls)
    worker.start()
    worker.join(20)
    released = time.monotonic()
    flag[0] = 1  # lets the spinning kernel end
    worker.join(30)
    assert done and done[0] < released, "host calls on GPU arrays waited for a kernel on the legacy stream"
    sync(CU_STREAM_LEGACY)  # the spinning kernel saw the flag and ended
    # launch(stream=None) waits for the legacy stream, not for kernels on other streams.
    flag[0] = 0
    other = user_stream()
    launch(mod, "spin", other, flag.ctypes.data)
    cell = np.zeros(1, np.uint64)
    t0 = time.monotonic()
    timer = threading.Timer(15, lambda: flag.__setitem__(0, 1))
    timer.start()
    launch(mod, "store", 0, cell.ctypes.data, 7)
    waited = time.monotonic() - t0
    flag[0] = 1
    timer.cancel()
    sync(other)
    assert cell[0] == 7
    assert waited < 10, f"launch(stream=None) waited {waited:.1f} s for a kernel on another stream"
    # A cooperative launch (cuLaunchCooperativeKernel; the test's FAKE_CUDA_LOG shows it)
    # runs and completes like an ordinary one.
    launch(mod, "store", 0, cell.ctypes.data, 9, cooperative=True)
    assert cell[0] == 9


def case_devices():
    want = os.environ["WANT_DEVICE"].split(",")[me]
    desc = lib.gpu_describe()
    assert desc.startswith(f"cuda: GPU {want} "), desc
    before = FAKE.fake_cuda_current_device()
    g = pc.zeros(8, np.int64)
    pc.put(g, np.arange(8, dtype=np.int64), (me + 1) % n)
    shmem.barrier_all()
    assert np.array_equal(g.copy_to_host(), np.arange(8))
    assert FAKE.fake_cuda_current_device() == before, \
        f"pyshmem left GPU {FAKE.fake_cuda_current_device()}'s context current on the caller's thread (was {before})"


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "gpu"))
{"copies": case_copies, "signal": case_signal, "state": case_state, "legacy": case_legacy,
 "devices": case_devices}[CASE]()
shmem.barrier_all()
print(f"OK pe={me}", flush=True)
shmem.finalize()
