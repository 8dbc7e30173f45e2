"""pyshmem.device kernels under the Numba CUDA simulator, on the real launcher."""

import pytest

from conftest import assert_ok, run_pes

pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")


@pytest.mark.parametrize("npes", [1, 2, 4])
def test_simulated_kernels(npes):
    proc = run_pes("sim_ops.py", npes, timeout=180, launcher_args=("--sim",))
    assert_ok(proc, npes)
    assert "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("npes", [1, 3])
def test_simulated_team_collectives(npes):
    """Device-API collectives (reductions, broadcast, collect, fcollect, alltoall, team sync and
    queries, thread/warp/block variants) over the world and a 2-D split."""
    proc = run_pes("sim_coll.py", npes, timeout=180, launcher_args=("--sim",))
    assert_ok(proc, npes)
