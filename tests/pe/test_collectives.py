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


def test_collective_benchmark_runs(tmp_path):
    """benchmarks/bench_coll.py --quick on 2 PEs: the pyshmem rows (Python and compiled)
    are produced, and a peer that is not installed is reported as skipped, not faked."""
    import json
    import subprocess
    import sys

    from conftest import REPO, cpu_kernel_toolchain_missing

    out = tmp_path / "coll.json"
    cmd = [sys.executable, str(REPO / "benchmarks" / "bench_coll.py"), "--quick", "--pes", "2", "--sizes", "8,4096",
           "--barrier-pes", "2", "--json", str(out)]
    if cpu_kernel_toolchain_missing():
        cmd.append("--no-compiled")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=str(REPO))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    data = json.loads(out.read_text())
    systems = {r["system"] for r in data["rows"]}
    assert "pyshmem-python" in systems
    ops = {(r["op"], r["bytes"]) for r in data["rows"] if r["system"] == "pyshmem-python"}
    assert ops == {("barrier_all", 0)} | {(op, b) for op in ("broadcast", "fcollect", "alltoall", "sum_reduce")
                                          for b in (8, 4096)}
    assert all(r["us"] > 0 for r in data["rows"])
    assert ("oshmem" in systems) != ("OpenSHMEM (Open MPI)" in data["skipped"])
    assert "| sum_reduce | 2 | 4096 |" in proc.stdout
