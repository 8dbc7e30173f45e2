"""pyshmem.device kernels under the Numba CUDA simulator, on the real launcher."""

import pytest

from conftest import assert_ok, run_pes

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")


@pytest.mark.parametrize("npes", [1, 2, 4])
def test_simulated_kernels(npes):
    proc = run_pes("sim_ops.py", npes, timeout=180, launcher_args=("--sim",))
    assert_ok(proc, npes)
    assert "Traceback" not in proc.stderr, proc.stderr
