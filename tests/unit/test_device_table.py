"""The device-API table is the single source of truth: the simulator implements exactly
its functions and parameters, and without the simulator the functions say why they
cannot run."""

import inspect
import os
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")

from pyshmem.device import _table  # noqa: E402


def test_simulator_implements_exactly_the_table():
    from pyshmem.device import sim

    for op in _table.OPS:
        fn = getattr(sim, op.name)
        assert tuple(inspect.signature(fn).parameters) == op.args, op.name
        assert fn.__doc__, op.name
        for suffix in ("_warp", "_block"):
            assert hasattr(sim, op.name + suffix) == op.coop, op.name + suffix
    public = {n for n in dir(sim) if not n.startswith("_") and callable(getattr(sim, n))}
    extra = public - set(_table.all_names()) - {"array", "namedtuple", "OPS"}
    assert not {n for n in extra if getattr(getattr(sim, n), "__module__", "") == sim.__name__}, extra


def _run(code, sim):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if sim:
        env["NUMBA_ENABLE_CUDASIM"] = "1"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)


def test_gpu_path_implements_exactly_the_table():
    code = ("import pyshmem.device as d\nfrom pyshmem.device import gpu, _table\n"
            "assert not d.SIMULATOR\n"
            "assert set(gpu.FUNCTIONS) == set(_table.all_names()), set(gpu.FUNCTIONS) ^ set(_table.all_names())\n"
            "assert d.put is gpu.put and d.atomic_fetch_add is gpu.atomic_fetch_add\n"
            "import numpy as np\n"
            "try:\n    d.array(np.zeros(4))\nexcept ValueError as e:\n    print('HOST', e)\n"
            "lto = d.linkable('sm_90')\n"
            "print('LTO', type(lto).__name__, lto.name, lto.setup_callback is gpu._setup_module, len(lto.data) > 1000)\n")
    proc = _run(code, False)
    assert proc.returncode == 0, proc.stderr
    assert "HOST pyshmem.device.array: this is host memory; GPU kernels need symmetric GPU arrays" in proc.stdout
    assert "LTO LTOIR pyshmem_device_sm_90.ltoir True True" in proc.stdout, proc.stdout


def test_device_calls_outside_a_kernel_act_as_one_thread():
    code = (
        "import numpy as np, pyshmem\nfrom pyshmem import device\n"
        "x = pyshmem.zeros(4, np.int32)\n"
        "device.put_block(x, np.arange(4, dtype=np.int32), 0)\n"
        "device.p(x[2:], 9, 0)\n"
        "print(x.tolist(), device.g(x[1:], 0), device.atomic_fetch_add(x[3:], 5, 0), x[3], device.array(x)._ary is x)\n"
    )
    proc = _run(code, True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[0, 1, 9, 3] 1 3 8 True", proc.stdout


def test_reduction_operators_have_one_definition():
    # PYSHMEM_REDUCE_OPS (pyshmem/types.h) -> _C.REDUCE_OPS -> pyshmem.OP, and the device
    # table reads the same macro: same names, same order, same kinds.
    import pyshmem
    from pyshmem._lib import lib
    from pyshmem.collective import REDUCE_KINDS

    names = [name for name, _kind in lib.REDUCE_OPS]
    assert names == ["and", "or", "xor", "max", "min", "sum", "prod"]  # the C enum's order (ABI values 0..6)
    assert [op.value for op in pyshmem.OP] == names and pyshmem.OP_SUM == "sum"
    assert list(_table.REDUCE_OPS) == list(lib.REDUCE_OPS) and REDUCE_KINDS["xor"] == "bitwise"
    assert [op.name for op in _table.OPS if op.name.endswith("_reduce")] == [f"{n}_reduce" for n in names]


def test_every_row_has_a_lowering_both_gpu_generators_know():
    # Adding an operation of an existing kind is adding a row: the intrinsic factories
    # (gpu.py) and the shim writers (_shims.py) are keyed by exactly the table's kinds.
    code = ("from pyshmem.device import gpu, _shims, _table\n"
            "kinds = set(_table.LOWERINGS)\n"
            "assert {op.lowering for op in _table.OPS} == kinds, {op.name: op.lowering for op in _table.OPS}\n"
            "assert set(gpu._FACTORIES) == kinds, set(gpu._FACTORIES) ^ kinds\n"
            "assert set(_shims._WRITERS) == kinds, set(_shims._WRITERS) ^ kinds\n"
            "print('OK')\n")
    proc = _run(code, False)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stderr
