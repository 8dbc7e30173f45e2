"""benchmarks/bench_cpu_kernels.py (issue 17) in a tiny configuration, so the script cannot
rot: both sides run, the reductions are checked against NumPy, the tables and the JSON
have every row. Timings are not asserted."""

import json
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO, cpu_kernel_toolchain_missing

SCRIPT = REPO / "benchmarks" / "bench_cpu_kernels.py"
TINY = ["--elements", "65536", "--grid", "2", "--sim-elements", "2048,4096", "--sim-per-thread", "8", "--reps", "1",
        "--warmup", "0", "--sync-k", "10,20", "--sim-sync-k", "1,2"]


@pytest.fixture(autouse=True)
def toolchain():
    pytest.importorskip("numba")
    reason = cpu_kernel_toolchain_missing()
    if reason is not None:
        pytest.skip(str(reason))


def run(tmp_path, prelude=None):
    out = tmp_path / "bench.json"
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    args = [*TINY, "--json", str(out)]
    if prelude is None:
        cmd = [sys.executable, str(SCRIPT), *args]
    else:  # numba imported before the script: it must run the simulator in a subprocess
        code = (f"{prelude}; import runpy, sys; sys.argv = {[str(SCRIPT), *args]!r}; "
                f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')")
        cmd = [sys.executable, "-c", code]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=str(REPO), env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout, json.loads(out.read_text())


def check_output(text, data):
    assert "results checked against NumPy (exact) before timing and after every launch: correct" in text
    assert re.search(r"load average [\d.]+ [\d.]+ [\d.]+", text)
    for title in ("(a) shared-memory tree block reduction", "(b) warp-shuffle block reduction",
                  "(s) __syncthreads, one block of 256 threads"):
        assert title in text
    # the simulator has no shuffles here: the output says what its kernel (b) does instead
    assert data["simulator_shfl"] or "no shfl_down_sync in numba.cuda.simulator" in text
    row = re.compile(r"^\| (CPU build|Numba simulator), (full|slice) \| ([\d,]+) \| (\d+) \| (\d+) \| [\d.,]+ \| "
                     r"[\d.e+-]+ \| ([\d.e+-]+|n/a) \| ([\d,]+x|n/a) \|$", re.M)
    rows = row.findall(text)
    assert len(rows) == 2 * (1 + 2 * 2), text  # per kernel: the full run, then both sides per slice
    assert ("CPU build", "full", "65,536", "2", "128") == rows[0][:5]
    assert ("Numba simulator", "slice", "4,096", "2", "8") == rows[4][:5]
    assert all((side == "Numba simulator") == (sw == "n/a") for side, *_, sw, _ in rows)
    assert re.search(r"^\| CPU build \| 10, 20 \| [\d.,]+, [\d.,]+ \| -?[\d.,]+ \| [\d.e+-]+ \|$", text, re.M)
    assert re.search(r"^\| Numba simulator \| 1, 2 \| ", text, re.M)
    for kernel in ("tree_sum", "warp_sum"):
        assert re.search(rf"^target >= 100x the simulator on {kernel}: [\d,]+x, (met|NOT met)$", text, re.M)
    assert re.search(r"^target __syncthreads <= 50 ns per thread: -?[\d.]+ ns, (met|NOT met)$", text, re.M)
    assert "test_measure_block_threads" in text and "bench_moe_threads.py" in text

    assert {(r["kernel"], r["run"], r["side"]) for r in data["rows"]} == {
        (k, run, side) for k in ("tree_sum", "warp_sum")
        for run, side in [("full", "cpu")] + [(f"slice {n}", s) for n in (2048, 4096) for s in ("cpu", "sim")]}
    for r in data["rows"]:
        assert r["median_s"] > 0 and r["elements_per_s"] > 0 and r["ratio"] > 0
        assert (r["switches_per_s"] is None) == (r["side"] == "sim")
        if r["side"] == "cpu":
            # every launch switches between its fibers: at least once per thread per barrier
            assert r["switches"] >= r["grid"] * 256
    assert set(data["sync_ns_per_thread"]) == {"cpu", "sim"}
    assert set(data["ratios"]) == {"tree_sum", "warp_sum"}


def test_bench_cpu_kernels_tiny(tmp_path):
    text, data = run(tmp_path)
    assert "simulator ran in a subprocess" not in text
    check_output(text, data)


def test_bench_cpu_kernels_simulator_in_subprocess(tmp_path):
    text, data = run(tmp_path, prelude="import numba")
    assert "(the simulator ran in a subprocess: numba was already imported without NUMBA_ENABLE_CUDASIM)" in text
    check_output(text, data)
