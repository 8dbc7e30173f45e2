"""pyshmem.model: the cost functions against hand-computed α-β-γ values, topology
parsing and its errors, the presets' shape, predict's records and the command line."""

import json
import math
import subprocess
import sys

import pytest

import pyshmem
from pyshmem import model
from pyshmem.model import algorithms as alg

# A small machine with round numbers: α 1 µs / 10 µs, 100 GB/s in the node, 4 NICs of
# 25 GB/s per node (node: 100 GB/s), γ 1/500 GB/s.
T = model.from_dict({"name": "t", "nodes": 4, "devices_per_node": 4, "intra": {"bandwidth_GBps": 100, "latency_us": 1},
                     "intra_multicast": True, "nic": {"bandwidth_GBps": 25, "latency_us": 10}, "nics_per_node": 4,
                     "reduce_GBps": 500})
A_IN, B_IN = 1e-6, 1 / 100e9
A_NET, G = 10e-6, 1 / 500e9
N = 1 << 30


def cost(collective, name, p, n=N):
    return model.ALGORITHMS[(collective, name)].cost(T, p, n)


def test_ring_allreduce_in_a_node_is_the_textbook_formula():
    p = 4
    want = 2 * (p - 1) * A_IN + 2 * (p - 1) / p * N * B_IN + (p - 1) / p * N * G
    assert cost("allreduce", "ring", p) == pytest.approx(want, rel=1e-12)


def test_ring_across_nodes_is_paced_by_the_nodes_nics_and_rec_doubling_by_a_devices_share():
    p = 16  # 4 nodes: the network is the slowest hop; a node has 100 GB/s of NICs
    b_ring = max(B_IN, 1 / 100e9)
    assert cost("allreduce", "ring", p) == pytest.approx(
        2 * (p - 1) * A_NET + 2 * (p - 1) / p * N * b_ring + (p - 1) / p * N * G, rel=1e-12)
    b_all = 4 / 100e9  # every rank's data leaves the node at once: 25 GB/s each
    assert cost("allreduce", "rec_doubling", p) == pytest.approx(4 * (A_NET + N * b_all + N * G), rel=1e-12)
    assert cost("allreduce", "rabenseifner", p) == pytest.approx(
        2 * 4 * A_NET + 2 * (p - 1) / p * N * b_all + (p - 1) / p * N * G, rel=1e-12)


def test_oversubscription_scales_the_network_term():
    over = model.Topology(**{**T.__dict__, "oversubscription": 2.0})
    p = 16
    assert alg.flat_link(over, p) == (pytest.approx(A_NET), pytest.approx(2 / 100e9))
    assert alg.flat_link(over, p, "all") == (pytest.approx(A_NET), pytest.approx(2 * 4 / 100e9))
    assert alg.flat_link(over, 4) == (pytest.approx(A_IN), pytest.approx(B_IN))  # inside a node: unchanged


def test_the_other_collectives_formulas():
    p = 4
    assert cost("allgather", "ring", p) == pytest.approx((p - 1) * A_IN + (p - 1) / p * N * B_IN)
    assert cost("reducescatter", "ring", p) == pytest.approx((p - 1) * A_IN + (p - 1) / p * N * (B_IN + G))
    assert cost("broadcast", "tree", p) == pytest.approx(2 * (A_IN + N * B_IN))
    assert cost("broadcast", "ring", p) == pytest.approx(3 * A_IN + N * B_IN)
    assert cost("alltoall", "pairwise", p) == pytest.approx(3 * A_IN + 3 / 4 * N * B_IN)
    assert cost("alltoall", "bruck", p) == pytest.approx(2 * (A_IN + N / 2 * B_IN))
    assert cost("barrier", "dissemination", 16) == pytest.approx(4 * A_NET)
    assert cost("allreduce", "one_shot", p) == pytest.approx(A_IN + 3 * N * (B_IN + G))
    assert cost("allreduce", "two_shot", p) == pytest.approx(2 * A_IN + 1.5 * N * B_IN + 0.75 * N * G)
    assert cost("allreduce", "nvls", p) == pytest.approx(2 * A_IN + N * B_IN)
    assert cost("allreduce", "tree", p) == pytest.approx(4 * A_IN + 2 * N * B_IN + N * G)


def test_hierarchical_allreduce_adds_the_levels():
    p, d, nodes = 16, 4, 4
    inside = 2 * ((d - 1) * A_IN + (d - 1) / d * N * B_IN) + (d - 1) / d * N * G
    m, b2 = N / d, d / 100e9  # 4 rings over the nodes, each on one NIC (25 GB/s), n/4 each
    across = 2 * (nodes - 1) * A_NET + 2 * (nodes - 1) / nodes * m * b2 + (nodes - 1) / nodes * m * G
    assert cost("allreduce", "hierarchical", p) == pytest.approx(inside + across, rel=1e-12)
    assert cost("allreduce", "hierarchical", 4) == pytest.approx(inside, rel=1e-12)  # one node: no second level


def test_one_rank_costs_nothing_and_one_node_algorithms_do_not_leave_the_node():
    for (collective, name), a in model.ALGORITHMS.items():
        assert a.cost(T, 1, N) == 0.0, (collective, name)
    rows = model.predict("allreduce", T, 16, [N], ["one_shot", "two_shot", "nvls", "ring"])
    assert [math.isinf(r.time_us) for r in rows] == [True, True, True, False]
    no_switch = model.Topology(**{**T.__dict__, "intra_multicast": False})
    assert math.isinf(model.predict("allreduce", no_switch, 4, [N], ["nvls"])[0].time_us)


def test_predict_records_follow_nccl_tests_definitions():
    rows = model.predict("allreduce", T, 4, [1 << 20, N], ["ring"])
    assert [r.bytes for r in rows] == [1 << 20, N]
    r = rows[1]
    assert r.time_us == pytest.approx(cost("allreduce", "ring", 4) * 1e6)
    assert r.algbw_GBps == pytest.approx(N / (r.time_us * 1e-6) / 1e9)
    assert r.busbw_GBps == pytest.approx(r.algbw_GBps * 2 * 3 / 4)  # busbw = algbw * 2(P-1)/P
    ag = model.predict("allgather", T, 4, [N], ["ring"])[0]
    assert ag.busbw_GBps == pytest.approx(ag.algbw_GBps * 3 / 4)
    assert set(r.as_dict()) >= {"collective", "algo", "bytes", "npes", "time_us", "algbw_GBps", "busbw_GBps"}


@pytest.mark.parametrize("call,match", [
    (lambda: model.predict("allreduce", T, 17), "npes must be 1 to 16"),
    (lambda: model.predict("allreduce", T, 0), "npes must be 1 to 16"),
    (lambda: model.predict("gather", T), "unknown collective 'gather'"),
    (lambda: model.predict("allreduce", T, 4, [8], ["magic"]), "has no algorithm 'magic'"),
    (lambda: model.predict("allreduce", T, 4, [-1]), "sizes must be whole numbers of bytes"),
])
def test_bad_predict_input_is_a_clear_error(call, match):
    with pytest.raises(pyshmem.InvalidArgumentError, match=match):
        call()


GOOD = {"name": "x", "nodes": 2, "devices_per_node": 8, "intra": {"bandwidth_GBps": 450, "latency_us": 1},
        "intra_multicast": False, "nic": {"bandwidth_GBps": 50, "latency_us": 3}, "nics_per_node": 8}


@pytest.mark.parametrize("change,match", [
    ({"nodes": None}, "missing field 'nodes'"),
    ({"nodes": 0}, "field 'nodes' must be positive"),
    ({"nodes": 1.5}, "field 'nodes' must be a number \\(a whole one\\)"),
    ({"intra": 450}, "field 'intra' must be an object with bandwidth_GBps and latency_us"),
    ({"nic": {"bandwidth_GBps": -1, "latency_us": 3}}, "'x'.nic: field 'bandwidth_GBps' must be positive"),
    ({"intra_multicast": "yes"}, "field 'intra_multicast' must be true or false"),
    ({"rails": 8}, "unknown field\\(s\\) rails"),
])
def test_bad_topology_input_names_the_field(change, match):
    d = {**GOOD, **change}
    d = {k: v for k, v in d.items() if v is not None}
    with pytest.raises(pyshmem.InvalidArgumentError, match=match):
        model.from_dict(d)


def test_topology_files_and_presets(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(GOOD))
    t = model.load(str(path))
    assert (t.name, t.npes, t.intra.bandwidth_GBps, t.oversubscription) == ("x", 16, 450.0, 1.0)
    assert model.load("dgx-h200x16").npes == 128 and model.load("dgx-h100").npes == 8
    assert model.load("gb200-nvl72").devices_per_node == 72
    assert not model.load("pcie-8gpu").intra_multicast
    with pytest.raises(pyshmem.InvalidArgumentError, match="unknown topology 'dgx-a100'"):
        model.load("dgx-a100")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(pyshmem.InvalidArgumentError, match="cannot read topology file"):
        model.load(str(bad))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "pyshmem.model", *args], capture_output=True, text=True, timeout=60)


def test_predict_cli_table_json_and_crossover():
    out = _cli("predict", "allreduce", "--topology", "dgx-h100", "--sizes", "1K:1G")
    assert out.returncode == 0, out.stderr
    assert "# best: 1K " in out.stdout and "# crossover: " in out.stdout
    assert " one_shot " in out.stdout and " nvls " in out.stdout
    js = _cli("predict", "allreduce", "--topology", "dgx-h200x2", "--sizes", "8,1M", "--algo", "ring,tree", "--json")
    recs = [json.loads(line) for line in js.stdout.splitlines()]
    assert [(r["bytes"], r["algo"]) for r in recs] == [(8, "ring"), (8, "tree"), (1 << 20, "ring"), (1 << 20, "tree")]
    assert all(r["npes"] == 16 for r in recs)


def test_scale_cli_reaches_32768_gpus_and_a_bad_topology_is_an_error():
    out = _cli("scale", "allreduce", "--topology", "dgx-h200", "--size", "1G", "--nodes", "1:4096", "--json")
    assert out.returncode == 0, out.stderr
    recs = [json.loads(line) for line in out.stdout.splitlines()]
    assert max(r["npes"] for r in recs) == 32768
    bad = _cli("predict", "allreduce", "--topology", "nope")
    assert bad.returncode == 2 and "unknown topology 'nope'" in bad.stderr


def test_list_shows_every_algorithm_with_its_formula():
    out = _cli("list")
    assert out.returncode == 0
    for (collective, name), a in model.ALGORITHMS.items():
        assert f"  {name:<14} {a.formula}" in out.stdout, name
    for required in ("ring", "tree", "nvls", "one_shot", "two_shot", "rec_doubling", "rabenseifner", "hierarchical"):
        assert ("allreduce", required) in model.ALGORITHMS


def test_plots_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    a, b = tmp_path / "bw.png", tmp_path / "scale.png"
    out = _cli("predict", "allreduce", "--topology", "dgx-h100", "--sizes", "1K:1G", "--plot", str(a))
    assert out.returncode == 0, out.stderr
    out = _cli("scale", "allreduce", "--size", "1G", "--nodes", "1:64", "--plot", str(b), "--json")
    assert out.returncode == 0, out.stderr
    for png in (a, b):
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000, png


def test_fit_recovers_known_alpha_beta_and_reports_outliers():
    from pyshmem.model.fit import fit_alpha_beta

    alpha, beta = 2e-6, 1 / 10e9
    sizes = [8 << (2 * k) for k in range(10)]
    pts = [(n, alpha + n * beta) for n in sizes]
    f = fit_alpha_beta(pts)
    assert f.alpha_s == pytest.approx(alpha, rel=1e-9) and f.beta_s_per_byte == pytest.approx(beta, rel=1e-9)
    assert f.residual == pytest.approx(0, abs=1e-12) and f.outliers == () and f.points == 10
    disturbed = [(n, t * (5 if n == 8192 else 1)) for n, t in pts]  # one descheduled size
    g = fit_alpha_beta(disturbed)
    assert g.alpha_s == pytest.approx(alpha, rel=0.05) and g.beta_s_per_byte == pytest.approx(beta, rel=0.05)
    assert g.outliers == (8192,)
    assert g.predict(1 << 20) == pytest.approx(alpha + (1 << 20) * beta, rel=0.05)
    with pytest.raises(ValueError, match="two or more message sizes"):
        fit_alpha_beta([(8, 1e-6), (8, 2e-6)])
    with pytest.raises(ValueError, match="positive times"):
        fit_alpha_beta([(8, 1e-6), (64, 0.0)])


def test_a_calibration_file_is_a_topology(tmp_path, monkeypatch):
    d = {**GOOD, "name": "this", "calibration": {"alpha_us": 0.4, "points": []}}
    (tmp_path / "machine.json").write_text(json.dumps(d))
    monkeypatch.chdir(tmp_path)
    assert model.load("this").name == "this"
    (tmp_path / "machine.json").unlink()
    with pytest.raises(pyshmem.InvalidArgumentError, match="'this' is the machine.json"):
        model.load("this")


@pytest.mark.parametrize("args", [("predict", "allreduce", "--topology", "dgx-h100", "--sizes", "abc"),
                                  ("predict", "allreduce", "--topology", "dgx-h100", "--sizes", "1K:zz"),
                                  ("scale", "allreduce", "--size", "big"),
                                  ("validate", "--sizes", "8,abc")])
def test_a_bad_size_is_a_clear_error_not_a_traceback(args):
    out = _cli(*args)
    assert out.returncode == 2 and "is not a size (e.g. 8, 4K, 1M)" in out.stderr, out.stderr
    assert "Traceback" not in out.stderr
