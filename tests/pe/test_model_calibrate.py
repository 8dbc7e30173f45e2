"""pyshmem.model calibrate under the real launcher: it writes a topology file whose fit
comes from checked put + quiet transfers, and predict reads it back."""

import json
import subprocess
import sys

import pytest

from conftest import REPO, run_pes, ucx_unavailable


@pytest.mark.parametrize("transport", ["shm", "ucx"])
def test_calibrate_writes_a_topology_predict_can_use(tmp_path, transport):
    if transport == "ucx" and ucx_unavailable():
        pytest.skip(ucx_unavailable())
    out = tmp_path / "machine.json"
    proc = run_pes("-m pyshmem.model", 2, "calibrate", "--quick", "--transport", transport, "-o", out, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"pyshmem.model calibrate: {transport}, host API, 2 PEs: alpha " in proc.stdout, proc.stdout
    topo = json.loads(out.read_text())
    cal = topo["calibration"]
    assert topo["nodes"] * topo["devices_per_node"] == 2 and cal["transport"] == transport
    assert topo["nodes"] == (2 if transport == "ucx" else 1)  # over UCX every peer is remote
    assert [p["bytes"] for p in cal["points"]] == [8, 512, 32768]
    assert all(p["p50_us"] > 0 for p in cal["points"])
    assert topo["intra"]["bandwidth_GBps"] > 0 and topo["intra"]["latency_us"] >= 0 and topo["sync_latency_us"] > 0
    assert set(topo["reduce_GBps"]) == {"float64", "float32", "int64", "int32", "default"}
    assert all(v > 0 for v in topo["reduce_GBps"].values())
    curve = topo["nic_curve" if transport == "ucx" else "bandwidth_curve"]  # over UCX every peer is remote
    assert [n for n, _ in curve] == [8, 512, 32768] and all(g > 0 for _, g in curve)
    assert topo["gap_us"] > 0
    assert [k for k, _ in topo["incast_curve"]] == [1] and topo["incast_curve"][0][1] > 0  # one writer into PE 0
    assert 0 <= cal["residual"] < 10
    pred = subprocess.run([sys.executable, "-m", "pyshmem.model", "predict", "allreduce", "--topology", str(out),
                           "--sizes", "8,1M", "--json"], capture_output=True, text=True, cwd=REPO, timeout=60)
    recs = [json.loads(line) for line in pred.stdout.splitlines()]
    assert recs and all(r["npes"] == 2 for r in recs), pred.stderr


def test_calibrate_the_device_api_path(tmp_path):
    out = tmp_path / "device.json"
    proc = run_pes("-m pyshmem.model", 2, "calibrate", "--quick", "--api", "device", "-o", out, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "pyshmem.model calibrate: shm, device API, 2 PEs: alpha " in proc.stdout, proc.stdout
    topo = json.loads(out.read_text())
    cal = topo["calibration"]
    assert cal["api"] == "device" and cal["test"].startswith("put_latency --api device")
    assert [p["bytes"] for p in cal["points"]] == [8, 512, 32768] and all(p["p50_us"] > 0 for p in cal["points"])
    assert topo["overhead_us"] == 0 and topo["gap_us"] > 0  # issued from a kernel thread: no host call


def test_calibrate_needs_two_pes(tmp_path):
    proc = run_pes("-m pyshmem.model", 1, "calibrate", "--quick", "-o", tmp_path / "m.json", timeout=60)
    assert proc.returncode == 2 and "needs at least 2 PEs" in proc.stderr, proc.stdout + proc.stderr


def test_calibrate_measures_contention_at_one_receiver_for_each_writer_count(tmp_path):
    out = tmp_path / "four.json"
    proc = run_pes("-m pyshmem.model", 4, "calibrate", "--quick", "-o", out, timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    topo = json.loads(out.read_text())
    assert [k for k, _ in topo["incast_curve"]] == [1, 2, 3] and all(g > 0 for _, g in topo["incast_curve"])
    assert "PEs 1..k put 32768 bytes each into PE 0" in topo["calibration"]["incast_curve"]
    # predict reads the curve back (it prices the MoE receiver with it).
    pred = subprocess.run([sys.executable, "-m", "pyshmem.model", "predict", "moe_dispatch", "--topology", str(out),
                           "--sizes", "1M", "--json"], capture_output=True, text=True, cwd=REPO, timeout=60)
    recs = [json.loads(line) for line in pred.stdout.splitlines()]
    assert recs and all(r["npes"] == 4 and r["time_us"] > 0 for r in recs), pred.stderr
