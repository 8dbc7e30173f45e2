"""pyshmem.model replay: a program recorded with PYSHMEM_TRACE under shmemrun -n 4,
priced on topologies with round numbers, per phase and per PE."""

import json
import subprocess
import sys

import pytest

from conftest import REPO, run_pes
from pyshmem import model
from pyshmem.model.algorithms import ALGORITHMS, names

# 1 µs / 100 GB/s in a node; 10 µs, 4 NICs of 25 GB/s per node (a device's share: 25 GB/s).
BASE = {"intra": {"bandwidth_GBps": 100, "latency_us": 1}, "intra_multicast": False,
        "nic": {"bandwidth_GBps": 25, "latency_us": 10}, "reduce_GBps": 500}


@pytest.fixture(scope="module")
def trace_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace")
    proc = run_pes("model_replay.py", 4, env={"PYSHMEM_TRACE": str(d)}, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return d


def _replay(trace_dir, topo, tmp_path, *extra):
    path = tmp_path / "t.json"
    path.write_text(json.dumps(topo))
    proc = subprocess.run([sys.executable, "-m", "pyshmem.model", "replay", str(trace_dir), "--topology", str(path),
                           "--json", *extra], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), model.from_dict(topo)


def _best(t, collective, p, n):
    return min(ALGORITHMS[(collective, a)].cost(t, p, n) for a in names(collective)
               if not (ALGORITHMS[(collective, a)].intra_only and p > t.devices_per_node))


def test_replay_splits_at_collectives_and_prices_each_phase(trace_dir, tmp_path):
    res, t = _replay(trace_dir, {**BASE, "name": "one", "nodes": 1, "devices_per_node": 4, "nics_per_node": 4},
                     tmp_path)
    # pyshmem.ones synchronises (a sync_all after filling): phases of no transfers first.
    *setup, a, b, c = res["phases"]
    bar = _best(t, "barrier", 4, 0)
    assert setup and all(ph["collective"] == "barrier" and ph["predicted_us"] == pytest.approx(bar * 1e6)
                         for ph in setup), setup
    assert [(ph["collective"], ph["bytes"]) for ph in (a, b, c)] == [("barrier", 0), ("allreduce", 4096), ("barrier", 0)]
    put, get = 1e-6 + 4096 / 100e9, 1e-6 + 256 / 100e9
    want = [put + bar, _best(t, "allreduce", 4, 4096), get + bar]
    assert [ph["predicted_us"] for ph in (a, b, c)] == pytest.approx([w * 1e6 for w in want], rel=1e-9)
    assert res["per_pe_us"] == pytest.approx([(sum(want) + len(setup) * bar) * 1e6] * 4, rel=1e-9)
    assert all(ph["recorded_us"] > 0 for ph in res["phases"])


def test_replay_maps_pes_onto_nodes(trace_dir, tmp_path):
    two = {**BASE, "name": "two", "nodes": 2, "devices_per_node": 2, "nics_per_node": 4}
    res, t = _replay(trace_dir, two, tmp_path)  # block: PEs 0,1 | 2,3; PE 1 -> 2 and 3 -> 0 cross nodes
    inside, across = 1e-6 + 4096 / 100e9, 10e-6 + 4096 / 50e9  # a device's share: 4 x 25 / 2 GB/s
    bar = _best(t, "barrier", 4, 0)
    assert res["phases"][-3]["per_pe_us"] == pytest.approx([(x + bar) * 1e6 for x in (inside, across, inside, across)],
                                                           rel=1e-9)
    cyc, _ = _replay(trace_dir, two, tmp_path, "--map", "cyclic")  # nodes 0,1,0,1: every neighbour is off-node
    assert cyc["phases"][-3]["per_pe_us"] == pytest.approx([(across + bar) * 1e6] * 4, rel=1e-9)


def test_replay_errors_are_clear(trace_dir, tmp_path):
    small = {**BASE, "name": "small", "nodes": 1, "devices_per_node": 2, "nics_per_node": 1}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(small))
    r = subprocess.run([sys.executable, "-m", "pyshmem.model", "replay", str(trace_dir), "--topology", str(path)],
                       capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "the trace has 4 PEs and small has 2 devices" in r.stderr, r.stderr
    r = subprocess.run([sys.executable, "-m", "pyshmem.model", "replay", str(tmp_path / "none"), "--topology",
                        "dgx-h200"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert r.returncode == 2 and "no trace-pe<k>.bin files" in r.stderr, r.stderr
    table = subprocess.run([sys.executable, "-m", "pyshmem.model", "replay", str(trace_dir), "--topology",
                            "dgx-h200"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert table.returncode == 0 and "total predicted communication time: " in table.stdout, table.stderr
