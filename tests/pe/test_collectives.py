"""Teams, contexts and host collectives under the real launcher.

coll_ops.py checks every collective over the world, TEAM_SHARED, a strided team and
both halves of a 2-D split, for every supported dtype and op, against NumPy on all
PEs' inputs; coll_errors.py checks that bad input fails with a clear exception on
every PE instead of hanging; team_ops.py creates and destroys hundreds of teams and
uses contexts on teams.
"""

import pytest

from conftest import assert_ok, run_pes, ucx_unavailable

REMOTE = {"PYSHMEM_REMOTE_ONLY": "1"}


@pytest.mark.parametrize("npes", [1, 2, 3, 4])
def test_every_collective_on_every_team(npes):
    proc = run_pes("coll_ops.py", npes, timeout=300)
    assert_ok(proc, npes)


@pytest.mark.parametrize("algo", ["direct", "rsag"])
def test_reduction_algorithms_agree(algo):
    """Each reduction algorithm forced for every size gives NumPy's results."""
    proc = run_pes("coll_ops.py", 3, "quick", timeout=300, env={"PYSHMEM_REDUCE_ALGO": algo})
    assert_ok(proc, 3)


@pytest.mark.skipif(ucx_unavailable() is not None, reason=str(ucx_unavailable()))
@pytest.mark.parametrize("npes", [2, 3])
def test_collectives_over_ucx(npes):
    """Every PE "remote": the collectives' reads of peers go through UCX gets."""
    proc = run_pes("coll_ops.py", npes, "quick", timeout=300, env=REMOTE)
    assert_ok(proc, npes)


@pytest.mark.parametrize("npes", [1, 2, 3, 4])
def test_bad_input_fails_on_every_pe(npes):
    proc = run_pes("coll_errors.py", npes, timeout=120)
    assert_ok(proc, npes)


def test_bad_input_over_ucx_with_debug_checks():
    """Across nodes the argument comparison runs with PYSHMEM_DEBUG=1."""
    proc = run_pes("coll_errors.py", 3, timeout=120, env={**REMOTE, "PYSHMEM_DEBUG": "1"})
    assert_ok(proc, 3)


@pytest.mark.parametrize("npes", [1, 2, 4])
def test_hundreds_of_teams_and_team_contexts(npes):
    proc = run_pes("team_ops.py", npes, timeout=120)
    assert_ok(proc, npes)


def test_team_limit_names_the_variable():
    proc = run_pes("team_limit.py", 2, timeout=60, env={"PYSHMEM_MAX_TEAMS": "4"})
    assert_ok(proc, 2)
