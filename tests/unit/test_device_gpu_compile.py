"""A Numba kernel calling every pyshmem.device function compiles to LTO-IR and links
with the device library (extern "C" shims generated from the op table) into a cubin,
with no GPU: the GPU path as far as compiling and linking go."""

import os
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")
pytest.importorskip("cuda.core", reason="cuda-core is not installed")

KERNEL = r'''
import numpy as np
from numba import types
import pyshmem
from pyshmem import device

assert not device.SIMULATOR

def kernel(x, y, f, u, sig, out, st):
    me, n = device.my_pe(), device.n_pes()
    right = (me + 1) % n
    device.put(x[4:], y, right); device.put_warp(x, y, right); device.put_block(x, y, right)
    device.get(y, x, right); device.get_warp(y, x, right); device.get_block(y, x, right)
    device.put_nbi(x, y, right); device.put_nbi_warp(x, y, right); device.put_nbi_block(x, y, right)
    device.get_nbi(y, x, right); device.get_nbi_warp(y, x, right); device.get_nbi_block(y, x, right)
    device.p(x, 7, right)
    out[0] = device.g(x[1:], right)
    device.iput(x, y, 2, 1, 4, right)
    device.iget(y, x, 1, 2, 4, right)
    device.put_signal(x, y, sig, 1, pyshmem.SIGNAL_SET, right)
    device.put_signal_warp(x, y, sig, 1, pyshmem.SIGNAL_ADD, right)
    device.put_signal_block(x, y, sig, 1, pyshmem.SIGNAL_ADD, right)
    device.put_signal_nbi(f, f, sig, 1, pyshmem.SIGNAL_ADD, right)
    device.put_signal_nbi_warp(x, y, sig, 1, pyshmem.SIGNAL_ADD, right)
    device.put_signal_nbi_block(x, y, sig, 1, pyshmem.SIGNAL_ADD, right)
    device.signal_op(sig, 3, pyshmem.SIGNAL_ADD, right)
    out[1] = device.signal_fetch(sig)
    out[2] = device.signal_wait_until(sig, pyshmem.CMP_GE, 1)
    device.wait_until(u, pyshmem.CMP_NE, 0)
    out[3] = device.test(x, pyshmem.CMP_EQ, 5)
    out[4] = device.atomic_fetch_add(x, 2, right) + device.atomic_fetch_inc(x, 0) + device.atomic_compare_swap(x, 1, 2, 0)
    out[5] = device.atomic_swap(x, 4, 0) + device.atomic_fetch(x, 0)
    device.atomic_add(x, 1, 0); device.atomic_inc(x, 0); device.atomic_set(x, 9, 0)
    device.atomic_and(u, 3, 0); device.atomic_or(u, 3, 0); device.atomic_xor(u, 3, 0)
    out[6] = device.atomic_fetch_and(u, 1, 0) + device.atomic_fetch_or(u, 1, 0) + device.atomic_fetch_xor(u, 1, 0)
    device.atomic_set(f, device.atomic_fetch(f, 0) + device.atomic_swap(f, 1.5, 0), 0)
    device.fence(); device.quiet()
    device.barrier_all(); device.barrier_all_warp(); device.barrier_all_block()
    device.sync_all(); device.sync_all_warp(); device.sync_all_block()
    team = device.TEAM_SHARED
    out[7] = device.team_my_pe(team) + device.team_n_pes(0) + device.team_translate_pe(team, 0, 0)
    device.sync(team); device.sync_warp(team); device.sync_block(0)
    device.barrier(team); device.barrier_warp(0); device.barrier_block(team)
    device.broadcast(team, x, y, 0); device.broadcast_warp(0, f, f, 1); device.broadcast_block(team, u, u, 0)
    device.collect(team, x, y[:1]); device.collect_warp(0, x, y); device.collect_block(team, f, f[:1])
    device.fcollect(0, x, y[:2]); device.fcollect_warp(team, x, y[:2]); device.fcollect_block(0, f, f[:1])
    device.alltoall(0, x, y); device.alltoall_warp(team, u, u); device.alltoall_block(0, x, y)
    device.sum_reduce(team, x, y); device.prod_reduce_warp(0, f, f); device.max_reduce_block(team, u, u)
    device.min_reduce(0, f, f); device.and_reduce(team, x, y); device.or_reduce_warp(0, u, u)
    device.xor_reduce_block(team, x, x)
    device.wait_until_all(u, pyshmem.CMP_EQ, 1); device.wait_until_all(x, pyshmem.CMP_NE, 0, st)
    device.wait_until_all_vector(u, pyshmem.CMP_LE, u, status=st)
    out[8] = device.wait_until_any(u, pyshmem.CMP_GE, 1, st) + device.wait_until_any_vector(x, pyshmem.CMP_EQ, y)
    out[9] = device.wait_until_some(x, out, pyshmem.CMP_EQ, 1) + device.wait_until_some_vector(sig, out, 5, sig, st)
    out[10] = (device.test_all(x, 0, 1) + device.test_any(u, 0, 1, st) + device.test_some(x, out, 0, 1)
               + device.test_all_vector(x, 0, y) + device.test_any_vector(u, 0, u)
               + device.test_some_vector(x, out, 0, y, st))

sig = (types.int64[::1], types.int64[::1], types.float64[::1], types.uint32[::1], types.uint64[::1], types.int64[::1],
       types.int32[::1])
# Linking is the slow part (about 75 s per link on 2 cores: LTO over every device
# function), so only sm_90 is linked; sm_80 compiles the kernel and the library.
from numba import cuda
ltoir, _ = cuda.compile(kernel, sig, output="ltoir", cc=(8, 0), device=False, abi="numba")
print("sm_80", len(ltoir) + len(device.library("sm_80").code))
cubin = device.link(kernel, sig, "sm_90")
print("sm_90", len(cubin.code))
ptx = device.link(kernel, sig, "sm_90", output="ptx").code
ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
# A real kernel entry, with the shims inlined into it: system-scope fences (quiet,
# put_signal), atomics, relaxed system-scope stores (p) and block barriers.
for needle in (".entry", "fence.sc.sys", "atom.", "st.relaxed.sys", "bar.sync"):
    print("PTX", needle, needle in ptx)
'''


def _run(code):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=600)


def test_every_device_function_compiles_and_links_to_a_cubin():
    proc = _run(KERNEL)
    assert proc.returncode == 0, proc.stderr[-4000:]
    sizes = dict(line.split() for line in proc.stdout.split("\n") if line.startswith("sm_"))
    assert set(sizes) == {"sm_80", "sm_90"} and all(int(v) > 10000 for v in sizes.values()), proc.stdout
    found = [line for line in proc.stdout.splitlines() if line.startswith("PTX")]
    assert len(found) == 5 and all(line.endswith("True") for line in found), proc.stdout


def test_non_contiguous_arrays_are_rejected_at_compile_time():
    code = ("from numba import types\nfrom pyshmem import device\n"
            "def k(x):\n    device.put(x[::2], x[:4], 0)\n"
            "try:\n    device.link(k, (types.int64[::1],))\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "pyshmem.device.put" in proc.stdout and "is not contiguous" in proc.stdout, proc.stdout


def test_unsupported_element_type_is_a_clear_typing_error():
    code = ("import numpy as np\nfrom numba import types\nfrom pyshmem import device\n"
            "def k(x):\n    device.atomic_fetch_add(x, 1, 0)\n"
            "try:\n    device.link(k, (types.int8[::1],))\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "pyshmem.device.atomic_fetch_add: element type int8 is not supported" in proc.stdout, proc.stdout


@pytest.mark.parametrize("call, types_, message", [
    ("device.wait_until_all(x, 0, 1, f)", "types.int64[::1], types.float64[::1]",
     "pyshmem.device.wait_until_all: status must be None or an int32 array, not array(float64"),
    ("device.wait_until_any_vector(x, 0, f)", "types.int64[::1], types.float64[::1]",
     "pyshmem.device.wait_until_any_vector: values must be an array of int64 (ivars' type), not array(float64"),
    ("device.test_some(x, f, 0, 1)", "types.int64[::1], types.float64[::1]",
     "pyshmem.device.test_some: indices must be an int64 or uint64 array, not array(float64"),
    ("device.test_all(f, 0, 1)", "types.float64[::1], types.float64[::1]",
     "pyshmem.device.test_all: element type float64 is not supported"),
])
def test_wait_set_arguments_are_typed_at_compile_time(call, types_, message):
    code = ("from numba import types\nfrom pyshmem import device\n"
            f"def k(x, f):\n    {call}\n"
            f"try:\n    device.link(k, ({types_}))\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert message in proc.stdout, proc.stdout


_CMP_VALUE_KERNELS = r'''
#include <pyshmem/device.cuh>
#include <cuda/std/limits>
%s
#define CONV(T, name) \
  extern "C" __global__ void name(int64_t bits, int32_t is_signed, T* out) { \
    out[0] = pyshmem_nb_cmp_value<T>("wait_until", bits, is_signed); }
CONV(int32_t, conv_i32) CONV(uint32_t, conv_u32) CONV(int64_t, conv_i64) CONV(uint64_t, conv_u64)
'''


@pytest.mark.parametrize("kernel, dtype, value, signed, expect", [
    ("conv_u32", "uint32", 1, 1, 1), ("conv_u32", "uint32", 2**32 - 1, 0, 2**32 - 1),
    ("conv_u32", "uint32", 2**32 + 1, 1, None), ("conv_u32", "uint32", -1, 1, None),
    ("conv_i32", "int32", -5, 1, -5), ("conv_i32", "int32", 2**31, 1, None), ("conv_i32", "int32", 2**31, 0, None),
    ("conv_u64", "uint64", 2**64 - 1, 0, 2**64 - 1), ("conv_u64", "uint64", -1, 1, None),
    ("conv_i64", "int64", -2**63, 1, -2**63), ("conv_i64", "int64", 2**63, 0, None),
])
def test_a_wait_value_that_ivars_cannot_hold_traps(kernel, dtype, value, signed, expect):
    # The shims take a wait's comparison value as 64 bits + signedness and check it
    # against the ivars' type (a cast would compare with another number).
    import numpy as np

    import pyshmem
    import pyshmem.cuda as pcuda
    from conftest import cpu_kernel_toolchain_missing
    from pyshmem.device import _shims

    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    module = pcuda.Module(_CMP_VALUE_KERNELS % _shims.CMP_VALUE, name="cmp_value", target="cpu")
    out = np.zeros(1, dtype)
    bits = np.array([value % 2**64], np.uint64).view(np.int64)[0]
    if expect is None:
        with pytest.raises(pyshmem.KernelError, match="pyshmem::wait_until on PE .*: value does not fit the element "
                                                      "type of ivars"):
            pcuda.launch(module.get_kernel(kernel), 1, 1, bits, np.int32(signed), out)
    else:
        pcuda.launch(module.get_kernel(kernel), 1, 1, bits, np.int32(signed), out)
        assert int(out[0]) == expect
