"""pyshmem.model validate under the real launcher: it calibrates, measures pyshmem's
collectives and get latency, and prints measured beside predicted and the
geometric-mean error; both under shmemrun -n 4 and starting the PEs itself."""

import json
import math
import re
import subprocess
import sys

from conftest import REPO, run_pes

TESTS = {"barrier", "bcast", "fcollect", "alltoall", "reduction", "get_latency"}


def _check_report(text, npes, sizes):
    rows = [line.split() for line in text.splitlines() if line.split() and line.split()[0] in TESTS]
    assert {r[0] for r in rows} == TESTS, text
    assert {int(r[1]) for r in rows} == set(npes), text
    for r in rows:
        measured, predicted = float(r[4]), float(r[5])
        assert measured > 0 and predicted > 0 and math.isfinite(predicted), r
        if r[0] != "barrier":
            assert int(r[2]) in sizes, r
    last = text.strip().splitlines()[-1]
    assert re.fullmatch(r"geometric-mean error: [0-9.]+ % over \d+ cases on this machine.*", last), last


def test_validate_under_shmemrun_4_at_tiny_sizes():
    proc = run_pes("-m pyshmem.model", 4, "validate", "--sizes", "8,64", "--iters", "5", "--no-published",
                   timeout=150)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = re.sub(r"(?m)^\[pe \d+\] ", "", proc.stdout)
    _check_report(out, {4}, {8, 64})
    assert "# 4 PEs, shm: calibrated α " in out


def test_validate_starts_its_own_pes_and_writes_json_cases(tmp_path):
    cases = tmp_path / "cases.jsonl"
    proc = subprocess.run([sys.executable, "-m", "pyshmem.model", "validate", "--npes", "2", "--sizes", "8,4K",
                           "--iters", "5", "--json", str(cases)], capture_output=True, text=True, cwd=REPO,
                          timeout=150)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    _check_report(proc.stdout, {2}, {8, 4096})
    assert "published: geometric-mean error " in proc.stdout and "DeepEP V1 EP8 dispatch" in proc.stdout
    recs = [json.loads(line) for line in cases.read_text().splitlines()]
    assert {r["test"] for r in recs} == TESTS and all(r["npes"] == 2 for r in recs)
    assert all(set(r) >= {"collective", "algo", "bytes", "measured_us", "predicted_us", "error_pct"} for r in recs)


def test_validate_bad_input_is_a_clear_error():
    def run(*args):
        return subprocess.run([sys.executable, "-m", "pyshmem.model", "validate", *args], capture_output=True,
                              text=True, cwd=REPO, timeout=60)

    r = run("--npes", "1")
    assert r.returncode == 2 and "--npes must be PE counts of 2 or more" in r.stderr, r.stderr
    r = run("--npes", "two")
    assert r.returncode == 2 and "--npes must be like 2,4, not 'two'" in r.stderr, r.stderr
    r = run("--iters", "0")
    assert r.returncode == 2 and "--iters must be at least 1" in r.stderr, r.stderr
