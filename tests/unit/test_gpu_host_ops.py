"""Host-API atomics on GPU arrays (pyshmem/_gpu_host_ops.py) run their one-thread kernel
on pyshmem's private non-blocking stream and wait for that stream only: a kernel of the
user's spinning on the legacy default stream until this very atomic arrives must not
hold it back. The kernel itself needs a GPU (tests/gpu); this checks the launch."""

import ctypes

import numpy as np

from pyshmem import _gpu_host_ops, _gpu_kernels


class _Lib:
    """Stands in for the compiled module's GPU calls and records them in order."""

    def __init__(self):
        self.calls = []
        self.cell = ctypes.c_uint64(41)

    def gpu_host_cell(self, call):
        return ctypes.addressof(self.cell)

    def gpu_private_stream(self, call):
        self.calls.append(("private_stream", call))
        return 0xABC0

    def gpu_stream_synchronize(self, stream, call):
        self.calls.append(("synchronize", stream))


def test_host_atomic_runs_on_the_private_stream_and_waits_for_it_alone(monkeypatch):
    fake = _Lib()
    monkeypatch.setattr(_gpu_host_ops, "lib", fake)
    monkeypatch.setattr(_gpu_host_ops, "_host_amo_kernel", lambda: "kernel")

    def launch(kernel, grid, block, *args, stream=None):
        fake.calls.append(("launch", kernel, stream, int(args[2])))

    monkeypatch.setattr(_gpu_kernels, "launch", launch)
    old = _gpu_host_ops.amo(1, 0x13, 0x1000, 5, 0, 0, True, call="pyshmem.atomic_fetch_add")
    assert old == 41
    assert fake.calls == [("private_stream", "pyshmem.atomic_fetch_add"), ("launch", "kernel", 0xABC0, 0x1000),
                          ("synchronize", 0xABC0)], fake.calls


def test_non_fetching_host_atomic_returns_none(monkeypatch):
    fake = _Lib()
    monkeypatch.setattr(_gpu_host_ops, "lib", fake)
    monkeypatch.setattr(_gpu_host_ops, "_host_amo_kernel", lambda: "kernel")
    monkeypatch.setattr(_gpu_kernels, "launch", lambda *a, stream=None: fake.calls.append(("launch", stream)))
    assert _gpu_host_ops.amo(1, 0x13, 0x1000, np.uint64(5), 0, 0, False) is None
    assert fake.calls[-1] == ("synchronize", 0xABC0)
