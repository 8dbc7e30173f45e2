"""Workloads of the algorithm table beyond the classic collectives: MoE dispatch and
combine, pipeline-parallel send/recv, KV-cache transfer from prefill to decode, and the
hierarchical (node-leader) all-to-all. Each is one cost function registered with
:func:`pyshmem.model.algorithms.algorithm`; its keyword-only parameters are the
workload's shape (``--param topk=8`` on the command line).

Sizes: ``moe_dispatch``/``moe_combine`` take the bytes of one rank's tokens (tokens ×
token bytes, the activations a rank holds before dispatch or after combine);
``sendrecv`` the bytes crossing one pipeline stage boundary; ``kv_transfer`` the KV
bytes one device sends; ``alltoall`` as in nccl-tests (what a rank sends in all).
"""

import math

from pyshmem.model.algorithms import (BUS_FACTOR, PARAM_HELP, algorithm, flat_link, gamma, incast_time, link_at,
                                      node_shape)

PARAM_HELP.update({
    "topk": "experts each token is routed to",
    "experts_per_pe": "experts each rank hosts (E = experts_per_pe × P)",
    "skew": "routing skew: the busiest receiver's load over the mean (1: uniform)",
    "node_limit": "node-limited routing: a token's experts lie in at most this many nodes (DeepSeek-V3: 4); 0: none",
    "microbatches": "messages the stage boundary's bytes are split into (one α each)",
    "page_bytes": "bytes of one KV-cache page (one message per page unless batched)",
})
for _c in ("moe_dispatch", "moe_combine", "sendrecv", "kv_transfer"):
    BUS_FACTOR[_c] = lambda p: 1.0  # busbw = algbw: bytes of the rank's own data per second


def distinct_groups(experts, groups, k):
    """Expected number of distinct groups hit when k of `experts` experts, split evenly
    into `groups` groups, are chosen uniformly without replacement:
    groups · (1 − C(E − E/groups, k) / C(E, k))."""
    k = min(k, experts)
    per = experts / groups
    miss = 1.0
    for i in range(k):  # C(E - per, k) / C(E, k) as a product, exact for whole numbers
        miss *= max(0.0, (experts - per - i)) / (experts - i)
    return groups * (1.0 - miss)


def moe_fanout(t, p, topk, experts_per_pe, node_limit):
    """(ranks, nodes) a token goes to, on average: distinct destination ranks r and
    distinct destination nodes q, with node-limited routing when node_limit > 0."""
    d, nodes = node_shape(t, p)
    m = nodes if node_limit <= 0 else min(node_limit, nodes)
    experts = experts_per_pe * d * m  # the experts of the nodes a token may use
    return distinct_groups(experts, d * m, topk), distinct_groups(experts, m, topk)


def _nic_share(t):
    """β (s/byte) of one device's share of its node's NICs, all devices sending at once."""
    bw = t.nic.bandwidth_GBps * 1e9 * t.nics_per_node
    return math.inf if bw == 0 else t.oversubscription * t.devices_per_node / bw


def _receive(t, senders, nbytes, t_fabric, t_net, skew):
    """Seconds the busiest receiver (skew × the mean load) takes in its share: its links'
    time (skew · max(fabric, network)) or, when the topology has a measured
    ``incast_curve``, the fabric part at what `senders` writers at once get into it."""
    if not t.incast_curve:
        return skew * max(t_fabric, t_net)
    return max(skew * t_net, incast_time(t, senders, skew * nbytes, 0.0))


def _moe(t, p, n, topk, experts_per_pe, skew, node_limit, hierarchical):
    if p <= 1 or n == 0:
        return 0.0
    d, nodes = node_shape(t, p)
    r, q = moe_fanout(t, p, topk, experts_per_pe, node_limit)
    b_in = 1.0 / (t.intra.bandwidth_GBps * 1e9)
    g = t.gap_us * 1e-6
    # A rank sends its token copies at its links' pace and the busiest rank takes in
    # skew times the mean, at its links' pace or the measured incast's (_receive).
    if nodes == 1:  # every copy but the rank's own crosses the fabric
        a, _ = flat_link(t, p)
        out = n * r * (d - 1) / d
        return 2 * a + max(out * b_in, _receive(t, p - 1, out, out * b_in, 0.0, skew)) + (p - 1) * g
    a = max(t.intra.latency_us, t.nic.latency_us) * 1e-6
    if not hierarchical:  # each token-rank copy goes straight to its rank
        t_in = n * r * (d - 1) / p * b_in
        t_net = n * r * (p - d) / p * _nic_share(t)
        recv = _receive(t, p - 1, n * r * (p - 1) / p, t_in, t_net, skew)
        return 2 * a + max(t_in, t_net, recv) + (p - 1) * g
    # Once per destination node over the rail (to the same local rank there), then
    # forwarded in that node: the two links work at once (pipelined chunks).
    t_net = n * q * (nodes - 1) / nodes * _nic_share(t)
    t_in = n * r * (d - 1) / d * b_in
    recv = _receive(t, nodes - 1 + d - 1, n * q * (nodes - 1) / nodes + n * r * (d - 1) / d, t_in, t_net, skew)
    return 3 * a + max(t_in, t_net, recv) + (nodes - 1 + d - 1) * g


_MOE_FORMULA = ("r = distinct ranks per token, q = distinct nodes (expected, top-k of E uniform); "
                "2α + skew·max(n·r·(d-1)/P·β_fabric, n·r·(P-d)/P·β_nic_share) (with an incast_curve: the busiest "
                "receiver's fabric share at the curve's rate for P-1 writers)")
_MOE_HIER = ("3α + skew·max(n·q·(N-1)/N·β_nic_share, n·r·(d-1)/d·β_fabric): once per node over the rail, "
             "then forwarded in the node (DeepEP's normal kernels)")


@algorithm("moe_dispatch", "direct", _MOE_FORMULA)
def _moe_dispatch_direct(t, p, n, dtype="float32", *, topk=8, experts_per_pe=8, skew=1.0, node_limit=0):
    return _moe(t, p, n, topk, experts_per_pe, skew, node_limit, False)


@algorithm("moe_dispatch", "hierarchical", _MOE_HIER)
def _moe_dispatch_hierarchical(t, p, n, dtype="float32", *, topk=8, experts_per_pe=8, skew=1.0, node_limit=0):
    return _moe(t, p, n, topk, experts_per_pe, skew, node_limit, True)


@algorithm("moe_combine", "direct", "dispatch's traffic reversed, + r·n·γ (weighting the r copies of a token)")
def _moe_combine_direct(t, p, n, dtype="float32", *, topk=8, experts_per_pe=8, skew=1.0, node_limit=0):
    r, _ = moe_fanout(t, p, topk, experts_per_pe, node_limit)
    return _moe(t, p, n, topk, experts_per_pe, skew, node_limit, False) + (r * n * gamma(t, dtype) if p > 1 else 0.0)


@algorithm("moe_combine", "hierarchical", "hierarchical dispatch reversed (reduced in the node first), + r·n·γ")
def _moe_combine_hierarchical(t, p, n, dtype="float32", *, topk=8, experts_per_pe=8, skew=1.0, node_limit=0):
    r, _ = moe_fanout(t, p, topk, experts_per_pe, node_limit)
    return _moe(t, p, n, topk, experts_per_pe, skew, node_limit, True) + (r * n * gamma(t, dtype) if p > 1 else 0.0)


@algorithm("sendrecv", "direct", "m·α + nβ on one stage boundary (across nodes: a device's NIC share, every "
           "device of the node sending at once; with a measured curve, β at n/m)")
def _sendrecv_direct(t, p, n, dtype="float32", *, microbatches=1):
    if p <= 1:
        return 0.0
    a, b = link_at(t, p, n / max(1, microbatches))
    return microbatches * a + n * b


def _kv_link(t, p):
    return flat_link(t, p, "all")  # prefill and decode devices on different nodes when the topology has them


@algorithm("kv_transfer", "per_page", "α + pages·g + nβ (one non-blocking put per page, one quiet)")
def _kv_per_page(t, p, n, dtype="float32", *, page_bytes=65536):
    if p <= 1:
        return 0.0
    a, b = _kv_link(t, p)
    return a + math.ceil(n / page_bytes) * t.gap_us * 1e-6 + n * b


@algorithm("kv_transfer", "blocking_per_page", "pages·(α + page·β) (each page's put completed before the next)")
def _kv_blocking(t, p, n, dtype="float32", *, page_bytes=65536):
    if p <= 1:
        return 0.0
    a, b = _kv_link(t, p)
    return math.ceil(n / page_bytes) * a + n * b


@algorithm("kv_transfer", "batched", "n·γ_copy + α + nβ (pages gathered into one buffer, one put; the copy at "
           "the device's reduction throughput)")
def _kv_batched(t, p, n, dtype="float32", *, page_bytes=65536):
    if p <= 1:
        return 0.0
    a, b = _kv_link(t, p)
    return n * gamma(t, dtype) + a + n * b


@algorithm("alltoall", "hierarchical", "through a node leader: gather the node's off-node blocks "
           "(d-1)(α + (P-d)/P·nβ_fabric), leaders exchange d·n(P-d)/P over the node's NICs (N-1)α, scatter back")
def _alltoall_hierarchical(t, p, n, dtype="float32"):
    d, nodes = node_shape(t, p)
    a_in, b_in = flat_link(t, d)
    if nodes == 1:
        return (p - 1) * a_in + (p - 1) / p * n * b_in if p > 1 else 0.0
    off = (p - d) / p * n  # what a rank sends off its node
    # The leader takes in every local rank's share at once (its link's pace, or the
    # measured incast of d-1 writers); each sender's own link carries one share.
    gather = (d - 1) * a_in + max(off * b_in, incast_time(t, d - 1, (d - 1) * off, b_in))
    bw = t.nic.bandwidth_GBps * 1e9 * t.nics_per_node
    exchange = (nodes - 1) * t.nic.latency_us * 1e-6 + (math.inf if bw == 0 else t.oversubscription * d * off / bw)
    local = (d - 1) * a_in + (d - 1) / p * n * b_in  # the in-node blocks, direct
    return 2 * gather + exchange + local

