"""Bad input on the host API: never a crash, a hang, a truncated value or a job out of step."""

import pytest

from conftest import assert_ok, run_pes, ucx_unavailable


@pytest.mark.parametrize("npes", [2, 4])
def test_collective_rejected_on_one_pe_fails_everywhere_and_keeps_the_job_in_step(npes):
    proc = run_pes("coll_desync.py", npes, timeout=180)
    assert_ok(proc, npes)


def test_rejection_reaches_pes_that_share_no_memory():
    """Every peer through UCX (PYSHMEM_REMOTE_ONLY=1, no PYSHMEM_DEBUG): the rejecting PE's
    mark travels as a remote atomic, so PEs on other nodes fail too."""
    why = ucx_unavailable()
    if why:
        pytest.skip(why)
    proc = run_pes("coll_desync.py", 3, timeout=180, env={"PYSHMEM_REMOTE_ONLY": "1"})
    assert_ok(proc, 3)


def test_bad_input_raises_shmem_errors_and_moves_nothing():
    proc = run_pes("bad_input_ops.py", 2, timeout=120)
    assert_ok(proc, 2)


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzz_every_public_function_with_bad_values(seed):
    """Seeded: every PE makes the same 3000 calls (collectives included), each with one bad
    value in one argument position; each must succeed or raise a ShmemError subclass."""
    proc = run_pes("fuzz_api.py", 2, seed, 3000, timeout=300)
    out = proc.stdout + proc.stderr
    assert "DEFECT" not in proc.stdout, out
    assert_ok(proc, 2)
    for pe in range(2):
        assert f"FUZZ pe={pe} calls=3000 sweep=" in proc.stdout, out
