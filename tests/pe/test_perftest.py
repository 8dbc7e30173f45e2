"""python -m pyshmem.perftest under the launcher, with tiny sizes and iteration counts:
every test runs, reports rows in every output format, and fails (exit status 1, a
message naming the test and the PE) when a transfer is wrong. Timings are never
asserted."""

import csv
import io
import json

import numpy as np
import pytest

from conftest import cpu_kernel_toolchain_missing, run_pes, ucx_unavailable

P2P = ["put_latency", "get_latency", "p_latency", "g_latency", "put_bw", "get_bw", "atomic_latency", "atomic_bw",
       "put_ping_pong", "signal_ping_pong", "put_signal_ping_pong"]
COLL = ["barrier", "sync", "bcast", "fcollect", "alltoall", "reduction"]
TINY = ("-b", "8", "-e", "4K", "-f", "8", "-n", "4", "-w", "1")


def _perftest(npes, *args, env=None):
    return run_pes("-m pyshmem.perftest", npes, *args, timeout=90, env=env)


def _rows(proc):
    return [json.loads(line.split("] ", 1)[-1]) for line in proc.stdout.splitlines()
            if line.split("] ", 1)[-1].startswith("{")]


@pytest.mark.parametrize("test", P2P + COLL)
def test_every_perftest_runs_and_checks_its_data(test):
    npes = 2 if test in P2P else 3
    proc = _perftest(npes, test, *TINY, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(proc)
    assert rows and all(r["test"] == test and r["npes"] == npes for r in rows), proc.stdout
    for r in rows:
        assert ("lat_avg_us" in r and r["lat_min_us"] <= r["lat_avg_us"] <= r["lat_max_us"]
                and r["lat_min_us"] <= r["lat_p50_us"] <= r["lat_p99_us"] <= r["lat_max_us"]) or r.get("bw_gbps", 0) > 0
    if test in ("put_latency", "put_bw", "bcast", "fcollect", "alltoall", "reduction"):
        assert [r["bytes"] for r in rows] == [8, 64, 512, 4096], rows
    bad = _perftest(npes, test, *TINY, "--inject-error")
    if test in ("barrier", "sync"):  # nothing moves, nothing to check
        assert bad.returncode == 0, bad.stdout + bad.stderr
    else:
        assert bad.returncode == 1, bad.stdout + bad.stderr
        assert f"perftest {test} on PE " in bad.stdout + bad.stderr


def test_table_and_csv_output():
    proc = _perftest(2, "put_bw", "--bidir", "-b", "1K", "-e", "16K", "-f", "4", "-n", "5", "--csv")
    assert proc.returncode == 0, proc.stderr
    text = "\n".join(line.split("] ", 1)[-1] for line in proc.stdout.splitlines() if "] " in line)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [int(r["bytes"]) for r in rows] == [1024, 4096, 16384] and all(r["bidir"] == "True" for r in rows)
    table = _perftest(3, "reduction", "-o", "max", "-d", "float32", "-b", "4", "-e", "64", "-n", "3")
    assert table.returncode == 0, table.stderr
    assert "# reduction (host API, 3 PEs, 3 iterations, max float32)" in table.stdout
    assert "algbw (GB/s)" in table.stdout and "busbw (GB/s)" in table.stdout


@pytest.mark.skipif(ucx_unavailable() is not None, reason=str(ucx_unavailable()))
def test_transport_ucx_forces_the_remote_path():
    proc = _perftest(2, "put_latency", *TINY, "--transport", "ucx", "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(_rows(proc)) == 4


def test_bad_usage_is_reported():
    one = _perftest(1, "put_latency", *TINY)
    assert one.returncode == 2 and "needs at least 2 PEs" in one.stderr
    dev = _perftest(2, "atomic_latency", "--api", "device", "-a", "nand", "-n", "2")
    assert dev.returncode != 0 and "-a 'nand' is not one of" in dev.stdout + dev.stderr, dev.stderr
    scope = _perftest(2, "put_latency", "--scope", "warp")
    assert scope.returncode == 2 and "--scope applies to --api device only" in scope.stderr
    atom = _perftest(2, "atomic_latency", "-a", "nand", "-n", "2")
    assert atom.returncode != 0 and "-a 'nand' is not one of" in atom.stdout + atom.stderr


DEVICE_P2P = ["put_latency", "get_latency", "p_latency", "g_latency", "put_bw", "get_bw", "put_ping_pong",
              "atomic_latency", "atomic_bw", "signal_ping_pong", "put_signal_ping_pong"]


@pytest.mark.skipif(cpu_kernel_toolchain_missing() is not None, reason=str(cpu_kernel_toolchain_missing()))
@pytest.mark.parametrize("test", DEVICE_P2P + COLL)
def test_device_api_perftests(test):
    """--api device: the device API timed inside CPU-build kernels (no GPU here), at
    each scope for the transfers; the data checks and --inject-error hold as for the host."""
    npes = 2 if test in DEVICE_P2P else 3
    scope = {"put_latency": "warp", "get_bw": "block", "put_ping_pong": "block",
             "put_signal_ping_pong": "warp"}.get(test, "thread")
    args = (test, "--api", "device", "--scope", scope, "-b", "8", "-e", "512", "-f", "8", "-n", "4", "-w", "1")
    proc = _perftest(npes, *args, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(proc)
    assert rows and all(r["api"] == "device" and r["target"] == "cpu" and r["scope"] == scope for r in rows), rows
    if test not in ("barrier", "sync"):
        bad = _perftest(npes, *args, "--inject-error")
        assert bad.returncode == 1 and f"perftest {test} (--api device) on PE " in bad.stderr, bad.stderr


@pytest.mark.skipif(cpu_kernel_toolchain_missing() is not None, reason=str(cpu_kernel_toolchain_missing()))
def test_gpu_section_runs_on_the_cpu_build(tmp_path):
    """`perftest gpu` (what scripts/gpu_check.sh runs on a GPU) runs the same kernels as
    the CPU build without a GPU, says so, and fails when a transfer is wrong."""
    out = tmp_path / "gpu.jsonl"
    proc = _perftest(2, "gpu", "--sizes", "8,4K", "-n", "5", "-w", "1", "--json", out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "perftest gpu (no GPU: the CPU build of the same kernels, 2 PEs)" in proc.stdout
    assert "stream collectives: skipped (they need GPU arrays, i.e. a GPU)" in proc.stdout
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    got = {(r["figure"], r["scope"], r["bytes"]) for r in rows}
    want = {("put_latency", "thread", 8), ("put_latency", "thread", 4096), ("p_latency", "thread", 8),
            ("g_latency", "thread", 8), ("copy_bw", "memcpy", 8), ("copy_bw", "memcpy", 4096)}
    want |= {("put_bw", s, n) for s in ("thread", "warp", "block") for n in (8, 4096)}
    assert got == want and all(r["value"] > 0 for r in rows), rows
    bad = _perftest(2, "gpu", "--sizes", "8", "-n", "2", "-w", "0", "--inject-error")
    assert bad.returncode == 1 and "perftest gpu on PE 1: wrong data after put_latency 8 B" in bad.stdout + bad.stderr
    assert _perftest(3, "--gpu").returncode == 2  # the section also answers to --gpu


@pytest.mark.skipif(cpu_kernel_toolchain_missing() is not None, reason=str(cpu_kernel_toolchain_missing()))
@pytest.mark.parametrize("op, dtype", [("xor", "int8"), ("max", "float32"), ("prod", "complex64"), ("min", "uint16")])
def test_device_reduction_every_op_and_type(op, dtype):
    """reduction --api device builds the one (op, type) kernel it needs and checks the
    result against NumPy's fold over the PEs in order."""
    args = ("reduction", "--api", "device", "-o", op, "-d", dtype, "-b", "4", "-e", "4K", "-f", "32", "-n", "3",
            "-w", "1")
    proc = _perftest(3, *args, "--json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = _rows(proc)
    item = np.dtype(dtype).itemsize
    assert [r["bytes"] for r in rows] == [max(4, item) // item * item, 128, 4096] and all(r["busbw_gbps"] > 0
                                                                                           for r in rows), rows
    bad = _perftest(3, *args, "--inject-error")
    assert bad.returncode == 1 and f"{op}_reduce of {4 // item or 1} {dtype} differs from NumPy's" in bad.stderr, \
        bad.stderr


def test_device_reduction_rejects_undefined_ops():
    for op, dtype, msg in (("and", "float32", "-o and is not defined for float32"),
                           ("sum", "bool", "-d bool is not a reduction type")):
        proc = _perftest(2, "reduction", "--api", "device", "-o", op, "-d", dtype, "-n", "1")
        assert proc.returncode == 2 and msg in proc.stderr, proc.stderr
