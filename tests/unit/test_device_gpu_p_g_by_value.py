"""device.p / device.g on the GPU path pass the element by value for every element type.

A GPU kernel's p to a PE behind the proxy sends the value in the request; a put from a
copy on the kernel's stack would hand the proxy thread a local address it cannot read.
So each element type Numba arrays hold has its own value shim (pyshmem_nb_p_<tag>,
pyshmem_nb_g_<tag>), and no p/g is lowered to put/get of a stack slot. Checked on the
PTX of small kernels (no GPU needed), and by linking one kernel over every type with the
device library (a shim missing from the library, or declared with other types, fails
the link).
"""

import os
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")
pytest.importorskip("cuda.core", reason="cuda-core is not installed")

# Every NumPy scalar type a Numba CUDA array holds, with the tag of its shims.
DTYPES = {"int8": "i8", "uint8": "u8", "int16": "i16", "uint16": "u16", "int32": "i32", "uint32": "u32",
          "int64": "i64", "uint64": "u64", "float16": "f16", "float32": "f32", "float64": "f64", "bool_": "b8",
          "complex64": "c64", "complex128": "c128"}

PTX_PER_TYPE = r'''
import re, sys
import numpy as np
from numba import cuda, types, from_dtype
from pyshmem import device

assert not device.SIMULATOR

def kernel(x, out, v):
    device.p(x, v, 1)
    out[0] = device.g(x[1:], 1)

for name in sys.argv[1:]:
    nb = from_dtype(np.dtype(getattr(np, name)))
    ptx, _ = cuda.compile_ptx(kernel, (nb[::1], nb[::1], nb), cc=(9, 0))
    calls = sorted(set(re.findall(r"call\.uni[^;]*?\b(pyshmem_nb_\w+)", ptx, re.S)))
    print("CALLS", name, " ".join(calls), "local" if "__local_depot" in ptx else "nolocal")
'''

LINK_ALL = r'''
import re, sys
import numpy as np
from numba import from_dtype
from pyshmem import device

names = sys.argv[1:]
args = ", ".join(f"a{k}" for k in range(len(names)))
body = "".join(f"    device.p(a{k}, device.g(a{k}[1:], 1), 1)\n" for k in range(len(names)))
scope = {"device": device}
exec(f"def kernel({args}):\n{body}", scope)
sig = tuple(from_dtype(np.dtype(getattr(np, n)))[::1] for n in names)
ptx = device.link(scope["kernel"], sig, "sm_90", output="ptx").code
ptx = ptx.decode() if isinstance(ptx, bytes) else ptx
print("ENTRY", ".entry" in ptx)
print("RELAXED", " ".join(sorted(set(re.findall(r"(?:st|ld)\.relaxed\.sys\.(\w+)", ptx)))))
'''


def _run(code, *args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=600)


def test_the_shim_table_covers_every_element_type():
    from pyshmem.device import _shims

    assert set(DTYPES.values()) == set(_shims.VALUE_TYPES), set(DTYPES.values()) ^ set(_shims.VALUE_TYPES)
    src = _shims.source()
    for tag in DTYPES.values():
        assert f" {_shims.symbol('p', tag)}(" in src and f" {_shims.symbol('g', tag)}(" in src, tag


def test_p_and_g_call_the_value_shim_of_their_element_type():
    proc = _run(PTX_PER_TYPE, *DTYPES)
    assert proc.returncode == 0, proc.stderr[-4000:]
    seen = {}
    for line in proc.stdout.splitlines():
        if line.startswith("CALLS "):
            _, name, *rest = line.split()
            seen[name] = rest
    assert set(seen) == set(DTYPES), proc.stdout
    for name, tag in DTYPES.items():
        *calls, local = seen[name]
        # Exactly the two value shims: no pyshmem_nb_put/get of a copy.
        assert calls == sorted([f"pyshmem_nb_g_{tag}", f"pyshmem_nb_p_{tag}"]), (name, calls)
        # No stack slot at all, but for complex128's g, whose shim writes the two parts
        # it read into one (the proxy never sees that address: 16-byte values behind
        # the proxy trap, as pyshmem::g does).
        assert local == ("local" if tag == "c128" else "nolocal"), (name, local)


def test_a_kernel_over_every_element_type_links_with_the_device_library():
    proc = _run(LINK_ALL, *DTYPES)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "ENTRY True" in proc.stdout, proc.stdout
    relaxed = next(line for line in proc.stdout.splitlines() if line.startswith("RELAXED")).split()[1:]
    # The shims' relaxed system-scope accesses of 2-, 4- and 8-byte elements are inlined.
    assert {"b16", "b32", "b64"} <= set(relaxed), proc.stdout


def test_an_element_type_without_a_shim_is_a_clear_typing_error():
    code = ("import numpy as np\nfrom numba import types\nfrom pyshmem import device\n"
            "def k(x):\n    device.p(x, 1, 0)\n"
            "rec = np.dtype([('a', np.int32), ('b', np.int8)])\n"
            "from numba import from_dtype\n"
            "try:\n    device.link(k, (from_dtype(rec)[::1],))\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    proc = _run(code)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "pyshmem.device.p: element type" in proc.stdout and "is not supported; use int32" in proc.stdout, proc.stdout
