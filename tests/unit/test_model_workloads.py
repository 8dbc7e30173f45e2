"""pyshmem.model's workloads (MoE dispatch/combine, pipeline send/recv, KV-cache
transfer, hierarchical all-to-all), per-dtype γ, the barrier's calibrated round and
the overlap model, against hand-computed values."""

import json
import math
import subprocess
import sys

import pytest

import pyshmem
from pyshmem import model
from pyshmem.model.workloads import distinct_groups, moe_fanout

# 4 nodes of 4 devices: 100 GB/s fabric (α 1 µs), 4 NICs of 25 GB/s per node (α 10 µs):
# a device's NIC share is 25 GB/s. γ 1/500 GB/s (float64: 1/250), 100 TFLOP/s.
T = model.from_dict({"name": "t", "nodes": 4, "devices_per_node": 4, "intra": {"bandwidth_GBps": 100, "latency_us": 1},
                     "intra_multicast": True, "nic": {"bandwidth_GBps": 25, "latency_us": 10}, "nics_per_node": 4,
                     "reduce_GBps": {"default": 500, "float64": 250}, "tflops": 100})
A_IN, B_IN, A_NET, B_SHARE = 1e-6, 1 / 100e9, 10e-6, 1 / 25e9
N = 1 << 26


def cost(collective, name, p, n=N, dtype="float32", **kw):
    return model.ALGORITHMS[(collective, name)].cost(T, p, n, dtype, **kw)


def test_distinct_groups_is_the_expected_count_of_hit_groups():
    assert distinct_groups(8, 8, 1) == pytest.approx(1.0)
    assert distinct_groups(8, 8, 8) == pytest.approx(8.0)  # every expert: every group
    assert distinct_groups(4, 2, 2) == pytest.approx(2 * (1 - (2 * 1) / (4 * 3)))  # C(2,2)/C(4,2) = 1/6
    assert distinct_groups(16, 1, 3) == pytest.approx(1.0)
    # Against a brute-force enumeration over every 3-subset of 12 experts in 4 groups.
    import itertools

    subsets = list(itertools.combinations(range(12), 3))
    want = sum(len({e // 3 for e in s}) for s in subsets) / len(subsets)
    assert distinct_groups(12, 4, 3) == pytest.approx(want, rel=1e-12)


def test_moe_dispatch_in_one_node_moves_every_copy_but_its_own_over_the_fabric():
    r, q = moe_fanout(T, 4, 2, 2, 0)
    assert q == pytest.approx(1.0) and r == pytest.approx(distinct_groups(8, 4, 2))
    want = 2 * A_IN + N * r * 3 / 4 * B_IN
    assert cost("moe_dispatch", "direct", 4, topk=2, experts_per_pe=2) == pytest.approx(want, rel=1e-12)
    assert cost("moe_dispatch", "hierarchical", 4, topk=2, experts_per_pe=2) == pytest.approx(want, rel=1e-12)
    assert cost("moe_dispatch", "direct", 4, topk=2, experts_per_pe=2, skew=2.0) == pytest.approx(
        2 * A_IN + 2 * N * r * 3 / 4 * B_IN, rel=1e-12)


def test_moe_dispatch_across_nodes_direct_and_hierarchical():
    p, d, nodes = 16, 4, 4
    r, q = moe_fanout(T, p, 4, 2, 0)
    assert r == pytest.approx(distinct_groups(32, 16, 4)) and q == pytest.approx(distinct_groups(32, 4, 4))
    direct = 2 * A_NET + max(N * r * (d - 1) / p * B_IN, N * r * (p - d) / p * B_SHARE)
    assert cost("moe_dispatch", "direct", p, topk=4, experts_per_pe=2) == pytest.approx(direct, rel=1e-12)
    hier = 3 * A_NET + max(N * q * (nodes - 1) / nodes * B_SHARE, N * r * (d - 1) / d * B_IN)
    assert cost("moe_dispatch", "hierarchical", p, topk=4, experts_per_pe=2) == pytest.approx(hier, rel=1e-12)
    # Node-limited routing (a token's experts in 2 of the 4 nodes) sends fewer copies off the node.
    r2, q2 = moe_fanout(T, p, 4, 2, 2)
    assert q2 == pytest.approx(distinct_groups(16, 2, 4)) and q2 < q
    assert cost("moe_dispatch", "hierarchical", p, topk=4, experts_per_pe=2, node_limit=2) < hier


def test_moe_combine_adds_the_weighting_at_the_dtypes_gamma():
    r, _ = moe_fanout(T, 16, 4, 2, 0)
    d32 = cost("moe_dispatch", "hierarchical", 16, topk=4, experts_per_pe=2)
    assert cost("moe_combine", "hierarchical", 16, topk=4, experts_per_pe=2) == pytest.approx(
        d32 + r * N / 500e9, rel=1e-12)
    assert cost("moe_combine", "direct", 16, N, "float64", topk=4, experts_per_pe=2) == pytest.approx(
        cost("moe_dispatch", "direct", 16, topk=4, experts_per_pe=2) + r * N / 250e9, rel=1e-12)


def test_sendrecv_kv_transfer_and_hierarchical_alltoall():
    assert cost("sendrecv", "direct", 4) == pytest.approx(A_IN + N * B_IN)
    assert cost("sendrecv", "direct", 16, microbatches=4) == pytest.approx(4 * A_NET + N * B_SHARE)
    pages = N // 65536
    assert cost("kv_transfer", "per_page", 16) == pytest.approx(A_NET + N * B_SHARE)
    assert cost("kv_transfer", "blocking_per_page", 16) == pytest.approx(pages * A_NET + N * B_SHARE)
    assert cost("kv_transfer", "batched", 16) == pytest.approx(N / 500e9 + A_NET + N * B_SHARE)
    gap = model.Topology(**{**T.__dict__, "gap_us": 0.5})
    assert model.ALGORITHMS[("kv_transfer", "per_page")].cost(gap, 16, N, page_bytes=1 << 20) == pytest.approx(
        A_NET + 64 * 0.5e-6 + N * B_SHARE)
    p, d = 16, 4
    off = (p - d) / p * N
    want = 2 * (3 * A_IN + 3 * off * B_IN) + (3 * A_NET + d * off / 100e9) + (3 * A_IN + 3 / p * N * B_IN)
    assert cost("alltoall", "hierarchical", p) == pytest.approx(want, rel=1e-12)
    assert cost("alltoall", "hierarchical", 4) == pytest.approx(cost("alltoall", "pairwise", 4), rel=1e-12)


def test_barrier_uses_the_calibrated_round_and_gamma_its_dtype():
    assert cost("barrier", "dissemination", 4) == pytest.approx(2 * A_IN)
    synced = model.Topology(**{**T.__dict__, "sync_latency_us": 0.25})
    bar = model.ALGORITHMS[("barrier", "dissemination")].cost
    assert bar(synced, 4, 0) == pytest.approx(2 * 0.25e-6)
    assert bar(synced, 16, 0) == pytest.approx(4 * 0.25e-6)  # calibrated on the path taken: as measured
    assert bar(T, 16, 0) == pytest.approx(4 * A_NET)  # not calibrated: the NIC's α off the node
    assert T.reduce_throughput("float64") == 250 and T.reduce_throughput("int8") == 500
    ring = model.ALGORITHMS[("allreduce", "ring")].cost
    assert ring(T, 4, N, "float64") - ring(T, 4, N, "float32") == pytest.approx(0.75 * N * (1 / 250e9 - 1 / 500e9))


def test_overlap_reports_compute_and_exposed_time():
    flops = 1e9  # 10 µs at 100 TFLOP/s
    rows = model.predict("sendrecv", T, 4, [8, N], overlap_flops=flops)
    small, big = rows
    assert small.compute_us == pytest.approx(10.0) and small.exposed_us == 0.0
    assert big.exposed_us == pytest.approx(big.time_us - 10.0)
    assert "exposed_us" in big.as_dict() and "exposed_us" not in model.predict("sendrecv", T, 4, [8])[0].as_dict()
    bare = model.Topology(**{**T.__dict__, "tflops": 0.0})
    with pytest.raises(pyshmem.InvalidArgumentError, match="has no 'tflops'"):
        model.predict("sendrecv", bare, 4, [8], overlap_flops=flops)


@pytest.mark.parametrize("collective,kw,match", [
    ("allreduce", {"params": {"topk": 8}}, "allreduce takes no parameter 'topk'; its parameters: none"),
    ("moe_dispatch", {"params": {"pages": 3}}, "moe_dispatch takes no parameter 'pages'; its parameters: "
                                               "experts_per_pe, node_limit, skew, topk"),
    ("moe_dispatch", {"params": {"topk": -1}}, "parameter topk must be a number ≥ 0"),
    ("sendrecv", {"overlap_flops": -1}, "overlap_flops must be a number ≥ 0"),
])
def test_bad_workload_parameters_are_clear_errors(collective, kw, match):
    with pytest.raises(pyshmem.InvalidArgumentError, match=match):
        model.predict(collective, T, 16, [N], **kw)


def test_bad_topology_fields_of_the_new_kinds():
    base = {k: v for k, v in json.loads(json.dumps(T.__dict__, default=lambda o: o.__dict__)).items()}
    with pytest.raises(pyshmem.InvalidArgumentError, match="'t'.reduce_GBps: field 'float32' must be positive"):
        model.from_dict({**base, "reduce_GBps": {"float32": 0}})
    with pytest.raises(pyshmem.InvalidArgumentError, match="field 'reduce_GBps' is an empty object"):
        model.from_dict({**base, "reduce_GBps": {}})
    with pytest.raises(pyshmem.InvalidArgumentError, match="field 'gap_us' must be a number"):
        model.from_dict({**base, "gap_us": "fast"})


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "pyshmem.model", *args], capture_output=True, text=True, timeout=60)


def test_workload_cli_params_overlap_and_errors():
    out = _cli("predict", "moe_dispatch", "--topology", "hgx-h800x4", "--sizes", "28M", "--param", "topk=8",
               "--param", "experts_per_pe=8", "--param", "node_limit=4", "--overlap-flops", "1e12", "--json")
    assert out.returncode == 0, out.stderr
    recs = [json.loads(line) for line in out.stdout.splitlines()]
    assert [r["algo"] for r in recs] == ["direct", "hierarchical"] and all(r["npes"] == 32 for r in recs)
    assert recs[1]["time_us"] < recs[0]["time_us"] and all("exposed_us" in r for r in recs)
    bad = _cli("predict", "moe_dispatch", "--topology", "dgx-h100", "--param", "topk")
    assert bad.returncode == 2 and "--param takes NAME=NUMBER, not 'topk'" in bad.stderr, bad.stderr
    listing = _cli("list").stdout
    assert "--param node_limit=0: node-limited routing" in listing and "hgx-h800xN" in listing
    assert math.isfinite(recs[0]["time_us"])


CURVE = model.from_dict({"name": "c", "nodes": 1, "devices_per_node": 4,
                         "intra": {"bandwidth_GBps": 10, "latency_us": 0.5}, "intra_multicast": False,
                         "nic": {"bandwidth_GBps": 10, "latency_us": 0.5}, "nics_per_node": 1, "reduce_GBps": 20,
                         "sync_latency_us": 0.25, "overhead_us": 0.1, "bandwidth_curve": [[1024, 1], [1048576, 100]]})


def test_link_at_interpolates_the_measured_curve_log_log():
    from pyshmem.model.algorithms import link_at

    assert link_at(CURVE, 4, 1024) == (pytest.approx(0.5e-6), pytest.approx(1 / 1e9))
    assert link_at(CURVE, 4, 32768)[1] == pytest.approx(1 / 10e9)  # halfway in log size: 10 GB/s
    assert link_at(CURVE, 4, 8)[1] == pytest.approx(1 / 1e9) and link_at(CURVE, 4, 1 << 30)[1] == pytest.approx(1e-11)
    assert link_at(T, 4, 32768) == (pytest.approx(A_IN), pytest.approx(B_IN))  # no curve: the link


def test_pyshmem_pull_collectives_price_what_coll_does():
    o, s, g = 0.1e-6, 0.25e-6, 1 / 20e9
    bar = 2 * s  # 4 PEs: two dissemination rounds

    def c(collective, name, n):
        return model.ALGORITHMS[(collective, name)].cost(CURVE, 4, n)

    assert c("barrier", "dissemination", 0) == pytest.approx(o + bar)
    assert c("broadcast", "pull", 32768) == pytest.approx(o + 2 * bar + 32768 / 10e9)
    assert c("allgather", "pull", 4 * 32768) == pytest.approx(o + 2 * bar + 4 * 32768 / 10e9)
    assert c("alltoall", "pull", 4 * 32768) == pytest.approx(o + 2 * bar + 4 * 32768 / 10e9)
    assert c("allreduce", "pull_direct", 32768) == pytest.approx(o + 2 * bar + 32768 / 10e9 + 3 * 32768 * g)
    assert c("allreduce", "pull_rsag", 4 * 32768) == pytest.approx(o + 3 * bar + 5 * 32768 / 10e9 + 3 * 32768 * g)
    from pyshmem.model.pyshmem_algos import pyshmem_allreduce

    assert (pyshmem_allreduce(65535), pyshmem_allreduce(65536)) == ("pull_direct", "pull_rsag")
    with pytest.raises(pyshmem.InvalidArgumentError, match="'bandwidth_curve' must be a list of"):
        model.from_dict({**{k: v for k, v in json.loads(json.dumps(CURVE.__dict__, default=lambda x: x.__dict__))
                            .items()}, "bandwidth_curve": [[2, 1], [1, 1]]})


def test_geometric_mean_error_counts_too_high_and_too_low_alike():
    from pyshmem.model.validate import error_of, geomean_error_pct

    assert error_of(2.0, 1.0) == pytest.approx(error_of(1.0, 2.0)) == pytest.approx(math.log(2))
    assert geomean_error_pct([error_of(2, 1), error_of(1, 2)]) == pytest.approx(100.0)
    assert geomean_error_pct([error_of(1.1, 1), 0.0]) == pytest.approx((math.sqrt(1.1) - 1) * 100)
    assert geomean_error_pct([]) == 0.0


def test_published_comparison_covers_the_cited_figures():
    from pyshmem.model.published import FIGURES, compare

    rows = compare()
    assert len(rows) == len(FIGURES) >= 15
    assert {r["source"] for r in rows} == {"NCCL-H100", "NCCL-2N", "DeepEP-V1", "DeepEP-V2"}
    ring = next(r for r in rows if r["case"].startswith("8 x H100 all-reduce, ring"))
    t = model.load("dgx-h100")
    want = (1 << 30) / model.ALGORITHMS[("allreduce", "ring")].cost(t, 8, 1 << 30) / 1e9 * 2 * 7 / 8
    assert ring["model_GBps"] == pytest.approx(want) and ring["published_GBps"] == 370.0
    for r in rows:
        assert r["model_GBps"] > 0 and math.isfinite(r["model_GBps"]), r
        assert r["error_pct"] == pytest.approx((math.exp(abs(math.log(r["model_GBps"] / r["published_GBps"]))) - 1)
                                               * 100)


def test_a_measured_incast_curve_paces_the_busiest_receiver():
    from pyshmem.model.algorithms import incast_time

    fields = json.loads(json.dumps(T.__dict__, default=lambda x: x.__dict__))
    one_node = model.from_dict({**fields, "nodes": 1, "incast_curve": [[1, 100], [3, 50]]})
    assert incast_time(T, 3, 1e9, B_IN) == pytest.approx(1e9 * B_IN)  # no curve: the receiver's link
    assert incast_time(one_node, 3, 1e9, B_IN) == pytest.approx(1e9 / 50e9)  # 3 writers get 50 GB/s in
    assert incast_time(one_node, 2, 1e9, B_IN) == pytest.approx(1e9 / 75e9)  # linear in k between points
    assert incast_time(one_node, 7, 1e9, B_IN) == pytest.approx(1e9 / 50e9)  # the last point's beyond it
    # MoE dispatch in one node of 4: each rank sends r·n·3/4 at 100 GB/s, while the
    # receiver with 3 writers takes skew times that in at 50 GB/s.
    r, _ = moe_fanout(one_node, 4, 2, 2, 0)
    out = N * r * 3 / 4
    got = model.ALGORITHMS[("moe_dispatch", "direct")].cost(one_node, 4, N, "float32", topk=2, experts_per_pe=2)
    assert got == pytest.approx(2 * A_IN + out / 50e9, rel=1e-12)
    fast = model.from_dict({**fields, "nodes": 1, "incast_curve": [[1, 100], [3, 400]]})
    got = model.ALGORITHMS[("moe_dispatch", "direct")].cost(fast, 4, N, "float32", topk=2, experts_per_pe=2, skew=2.0)
    assert got == pytest.approx(2 * A_IN + max(out * B_IN, 2 * out / 400e9), rel=1e-12)  # the sender's link
    # The hierarchical all-to-all's leader takes in 3 local ranks' off-node shares at once.
    four = model.from_dict({**fields, "incast_curve": [[3, 10]]})
    off = 12 / 16 * N
    base = model.ALGORITHMS[("alltoall", "hierarchical")].cost(T, 16, N, "float32")
    slow = model.ALGORITHMS[("alltoall", "hierarchical")].cost(four, 16, N, "float32")
    assert slow - base == pytest.approx(2 * (3 * off / 10e9 - 3 * off * B_IN), rel=1e-9)
    with pytest.raises(pyshmem.InvalidArgumentError, match=r"'incast_curve' must be a list of \[senders, GB/s\]"):
        model.from_dict({**fields, "incast_curve": [[3, 10], [2, 10]]})
    with pytest.raises(pyshmem.InvalidArgumentError, match=r"incast_curve\[0\]: field 'senders' must be a number \(a whole"):
        model.from_dict({**fields, "incast_curve": [[1.5, 10]]})
