"""The torch-tensor fast path (csrc/python/torch_abi.cpp: libtorch's stable C ABI)
against torch's DLPack exporter, field by field, on every kind of tensor a call may
get: the two must read the same memory, type and layout, or the fast path must decline
the tensor (and DLPack then reports it)."""

import os
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from conftest import REPO  # noqa: E402
from pyshmem._lib import lib  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # complex32, nested and quantized are "prototype"

FIELDS = ("ptr", "kind", "itemsize", "format", "ndim", "nelems", "contiguous", "stride", "gpu")
DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.int16, torch.int32,
          torch.int64, torch.uint8, torch.uint16, torch.uint32, torch.uint64, torch.bool, torch.complex64,
          torch.complex128, torch.complex32]


def _layouts(dtype):
    base = torch.zeros(4, 6, dtype=dtype)
    yield "0-d", torch.zeros((), dtype=dtype)
    yield "empty", torch.zeros(0, dtype=dtype)
    yield "1-D", torch.zeros(5, dtype=dtype)
    yield "2-D", base
    yield "transposed (Fortran order)", base.t()
    yield "offset and strides", base[1:, ::2]
    yield "strided 1-D", base.view(-1)[1::3]
    yield "a column", base[:, 2]
    yield "expanded (stride 0)", torch.zeros(1, dtype=dtype).expand(7)
    yield "channels_last", torch.zeros(2, 3, 4, 5, dtype=dtype).to(memory_format=torch.channels_last)


def test_fast_path_is_on_for_the_pinned_torch():
    state = lib._torch_fast_path()
    assert state == {"enabled": True, "bits": True, "status": "on"}, (
        f"torch {torch.__version__}: the stable-ABI fast path is off ({state['status']}); every tensor argument "
        "now costs torch's DLPack export (see csrc/python/torch_abi.cpp)")


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_fast_path_reads_what_dlpack_reads(dtype):
    for name, t in _layouts(dtype):
        fast, slow = lib._torch_tensor_read(t, True), lib._torch_tensor_read(t, False)
        assert fast is not None, f"{dtype} {name}: the fast path declined it"
        got = {k: fast[k] for k in FIELDS}
        want = {k: slow[k] for k in FIELDS}
        if want["nelems"] == 0:  # no element is read: DLPack may export another address
            got.pop("ptr"), want.pop("ptr")
        assert got == want, f"{dtype} {name}"
        assert fast["ptr"] == t.data_ptr() or t.numel() == 0, f"{dtype} {name}"
        assert fast["lazy"] == 0


def test_parameters_grad_and_inference_tensors_take_the_fast_path():
    p = torch.nn.Parameter(torch.ones(3))
    with torch.inference_mode():
        inf = torch.ones(3)
    for t in (p, torch.ones(3, requires_grad=True), inf, torch.ones(4)[1:]):
        fast = lib._torch_tensor_read(t, True)
        assert fast is not None and fast["ptr"] == t.data_ptr() and fast["nelems"] == t.numel()


def test_lazy_bits_are_read_as_torch_reads_them():
    z = torch.zeros(3, dtype=torch.complex64)
    cases = [(torch._neg_view(torch.zeros(3)), 1), (z.conj(), 2), (z.conj().imag, 1), (z.conj().real, 0),
             (torch._neg_view(z.conj()), 1)]
    for t, want in cases:
        assert lib._torch_tensor_read(t, True)["lazy"] == want, (t.is_neg(), t.is_conj())


def test_fast_path_declines_what_it_does_not_read():
    class Sub(torch.Tensor):
        pass

    declined = {
        "a subclass": torch.zeros(3).as_subclass(Sub),
        "sparse": torch.zeros(3).to_sparse(),
        "meta": torch.empty(3, device="meta"),
        "nested": torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)]),
        "nested (jagged)": torch.nested.nested_tensor([torch.zeros(2), torch.zeros(3)], layout=torch.jagged),
        "float8": torch.zeros(3).to(torch.float8_e4m3fn),
        "quantized": torch.quantize_per_tensor(torch.zeros(3), 0.1, 0, torch.qint8),
    }
    for name, t in declined.items():
        assert lib._torch_tensor_read(t, True) is None, name


def test_a_tensor_is_read_afresh_each_call():
    # set_, resize_ and .data = swap the memory under the same Python object: nothing
    # about a tensor may be remembered between calls.
    t = torch.zeros(4)
    first = lib._torch_tensor_read(t, True)["ptr"]
    other = torch.ones(8)
    t.set_(other)
    assert lib._torch_tensor_read(t, True)["ptr"] == other.data_ptr() != first
    t.resize_(1 << 16)
    assert lib._torch_tensor_read(t, True)["nelems"] == 1 << 16
    t.data = torch.zeros(2, dtype=torch.float64)
    got = lib._torch_tensor_read(t, True)
    assert (got["itemsize"], got["nelems"], got["ptr"]) == (8, 2, t.data_ptr())
    t2 = torch.zeros(3)
    assert lib._torch_tensor_read(t2, True)["lazy"] == 0
    torch._C._set_neg(t2, True)  # the bit set in place, on the same object
    assert lib._torch_tensor_read(t2, True)["lazy"] == 1


def test_the_fast_path_can_be_turned_off():
    # PYSHMEM_TORCH_FAST_PATH=0: every tensor through DLPack, with the same values and errors.
    code = ("import numpy as np, torch, pyshmem as s\nfrom pyshmem._lib import lib\n"
            "x = s.zeros(3)\ns.put(x, torch.arange(3, dtype=torch.float64) + 1, 0)\ns.quiet()\n"
            "assert list(x) == [1, 2, 3], x\n"
            "try:\n    s.put(x, torch._neg_view(torch.ones(3, dtype=torch.float64)), 0)\n"
            "except s.ShmemTypeError as e:\n    assert 'negative bit set' in str(e)\nelse:\n    raise SystemExit('no error')\n"
            "print(lib._torch_fast_path()['status'], lib._torch_tensor_read(torch.ones(1), True))\n")
    env = dict(os.environ, PYSHMEM_TORCH_FAST_PATH="0")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "PYSHMEM_TORCH_FAST_PATH=0 None", proc.stdout
    info = subprocess.run([sys.executable, "-m", "pyshmem", "info"], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=120).stdout
    assert "torch tensors in calls: torch's DLPack exporter (fast path off: PYSHMEM_TORCH_FAST_PATH=0)" in info, info


def test_info_says_which_path_reads_tensors():
    info = subprocess.run([sys.executable, "-m", "pyshmem", "info"], capture_output=True, text=True, cwd=REPO,
                          timeout=120).stdout
    assert "torch tensors in calls: libtorch's stable C ABI\n" in info, info


def _run(code, **env):
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120,
                          env=dict(os.environ, **env))
    assert proc.returncode == 0, f"rc={proc.returncode}\n{proc.stdout}{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize("fast", ["1", "0"])
def test_tensors_without_memory_are_a_clear_error(fast):
    # torch's zero tensors and functionalized tensors report a null data pointer with
    # elements: reading them would be a segfault (in a subprocess, so that it shows as one).
    code = ("import torch, pyshmem as s\nfrom pyshmem._lib import lib\nx = s.zeros(4)\n"
            "def refused(t):\n"
            "    assert lib._torch_tensor_read(t, True) is None\n"
            "    for call in (lambda: s.put(x, t, 0), lambda: s.get(t, x, 0)):\n"
            "        try:\n            call()\n"
            "        except s.ShmemTypeError as e:\n            assert 'no memory' in str(e), e\n"
            "        else:\n            raise SystemExit('accepted')\n"
            "    return t + 1\n"
            "refused(torch._efficientzerotensor(4, dtype=torch.float64))\n"
            "torch.func.functionalize(refused)(torch.ones(4, dtype=torch.float64))\n"
            "print('refused')\n")
    assert _run(code, PYSHMEM_TORCH_FAST_PATH=fast).strip() == "refused"


SETTINGS = {
    "a default device": "torch.set_default_device('meta')",
    "a dispatch mode": ("from torch.utils._python_dispatch import TorchDispatchMode\n"
                        "class Passthrough(TorchDispatchMode):\n"
                        "    def __torch_dispatch__(self, func, types, args=(), kwargs=None):\n"
                        "        return func(*args, **(kwargs or {}))\n"
                        "Passthrough().__enter__()"),
    "a function mode": ("from torch.overrides import TorchFunctionMode\n"
                        "class Passthrough(TorchFunctionMode):\n"
                        "    def __torch_function__(self, func, types, args=(), kwargs=None):\n"
                        "        return func(*args, **(kwargs or {}))\n"
                        "Passthrough().__enter__()"),
}


@pytest.mark.parametrize("setting", SETTINGS, ids=list(SETTINGS))
def test_torch_first_seen_under_a_setting_still_gets_the_fast_path(setting):
    # The probes run where pyshmem first meets a tensor: whatever mode or default device
    # the program set there must not turn the fast path off for the whole process.
    code = (f"import torch, pyshmem as s\nfrom pyshmem._lib import lib\nx = s.zeros(2)\n{SETTINGS[setting]}\n"
            "s.put(x, torch.ones(2, dtype=torch.float64, device='cpu'), 0)\ns.quiet()\n"
            "print(lib._torch_fast_path()['status'], float(x[1]))\n")
    assert _run(code).strip() == "on 1.0"
