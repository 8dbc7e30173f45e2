"""Torch tensors in the host API (csrc/python/dlpack.cpp) and symmetric torch tensors
(pyshmem.torch) under the real launcher; and that `import pyshmem` does not import torch."""

import subprocess
import sys

import pytest

from conftest import REPO, run_pes

pytest.importorskip("torch")


@pytest.mark.parametrize("npes", [1, 2, 4])
def test_torch_tensors_through_every_host_verb(npes):
    proc = run_pes("torch_tensors.py", npes, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for pe in range(npes):
        assert f"OK pe={pe}" in proc.stdout, proc.stdout


def test_import_pyshmem_does_not_import_torch():
    code = "import sys, pyshmem; pyshmem.init(); assert 'torch' not in sys.modules, 'torch imported'; print('ok')"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stdout + proc.stderr
    # With torch made unimportable, the host API still runs (and only pyshmem.torch needs it).
    code = ("import sys; sys.modules['torch'] = None\nimport numpy as np, pyshmem as s\nx = s.zeros(2)\n"
            "s.put(x, np.ones(2), 0); s.quiet(); assert x.sum() == 2\n"
            "try:\n    import pyshmem.torch\nexcept ImportError as e:\n    print('no torch:', type(e).__name__)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0 and "no torch: ModuleNotFoundError" in proc.stdout, proc.stdout + proc.stderr


def test_symmetric_tensors_go_straight_into_numba_kernels():
    pytest.importorskip("numba")
    proc = run_pes("torch_numba_sim.py", 2, env={"NUMBA_ENABLE_CUDASIM": "1"}, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "OK pe=0" in proc.stdout and "OK pe=1" in proc.stdout, proc.stdout
