"""The table of algorithms pyshmem.model can price: each is one function of
(topology, npes, nbytes) returning seconds, registered with :func:`algorithm`.

Costs are α-β-γ models (Hockney; Thakur, Rabenseifner and Gropp 2005): α is a
message's latency, β the time per byte on the link a rank's traffic takes, γ the time
per byte of reducing. Sizes follow nccl-tests: all-reduce, broadcast, reduce-scatter
and all-gather take the buffer size (all-gather and reduce-scatter: the whole output
or input of P blocks), all-to-all the bytes each rank sends in all. A flat algorithm
over ranks on several nodes is paced by its slowest hop, the network, at what its
traffic pattern leaves of it (:func:`flat_link`); `hierarchical` splits the work by
level.
"""

import bisect
import dataclasses
import inspect
import math

ALGORITHMS = {}  # (collective, name) -> Algorithm
PARAM_HELP = {}  # workload parameter -> what it means (the CLI's --param help and docs)


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """One entry of the table: which collective, its name, the cost function, and the
    formula in words (shown by ``python -m pyshmem.model list``).

    `params` are the cost function's keyword-only parameters with their defaults (a
    workload's shape: top-k, pages...); ``dtype`` is passed to every cost function."""

    collective: str
    name: str
    cost: object
    formula: str
    intra_only: bool = False  # load/store algorithms: one node only
    params: tuple = ()  # ((name, default), ...)


def algorithm(collective, name, formula, intra_only=False):
    """Registers `fn(topology, npes, nbytes, dtype, *, param=default...) -> seconds` as
    `name` for `collective`; its keyword-only parameters become the entry's params."""
    def register(fn):
        sig = inspect.signature(fn).parameters.values()
        params = tuple((q.name, q.default) for q in sig if q.kind is inspect.Parameter.KEYWORD_ONLY)
        ALGORITHMS[(collective, name)] = Algorithm(collective, name, fn, formula, intra_only, params)
        return fn
    return register


def flat_link(t, npes, pattern="neighbour"):
    """(α in s, β in s/byte) of the slowest hop for `npes` ranks laid out node by node.

    Within one node: the device's fabric link. Across nodes, by traffic pattern:
    ``neighbour`` (rings, chains, pipelined trees: ranks talk to their neighbours, so a
    node's traffic leaves it at one boundary, spread over its NICs as NCCL's channels
    spread it, one ring per NIC): β = 1 / (nics_per_node * nic bandwidth); ``all``
    (recursive doubling/halving, Bruck, pairwise exchange: at an off-node step every
    rank's data leaves the node at once): a device's share of the NICs, β =
    devices_per_node / (nics_per_node * nic bandwidth). Either times the network's
    oversubscription, or the fabric's β if that is slower; α is the NIC's latency.
    """
    intra_b = 1.0 / (t.intra.bandwidth_GBps * 1e9)
    if npes <= t.devices_per_node:
        return t.intra.latency_us * 1e-6, intra_b
    node_bw = t.nic.bandwidth_GBps * 1e9 * t.nics_per_node
    per_byte = math.inf if node_bw == 0 else (1.0 if pattern == "neighbour" else t.devices_per_node) / node_bw
    return max(t.intra.latency_us, t.nic.latency_us) * 1e-6, max(intra_b, t.oversubscription * per_byte)


def curve_at(curve, x, log=True):
    """The y of a measured ((x, y), ...) curve (x ascending) at `x`: interpolated between
    points (log-log, or linear with log=False), the end points' y beyond them."""
    xs = [c for c, _ in curve]
    i = bisect.bisect_left(xs, x)
    if i == 0:
        return curve[0][1]
    if i == len(curve):
        return curve[-1][1]
    (x0, y0), (x1, y1) = curve[i - 1], curve[i]
    if not log:
        return y0 + (x - x0) / (x1 - x0) * (y1 - y0)
    w = (math.log(x) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return math.exp(math.log(y0) + w * (math.log(y1) - math.log(y0)))


def link_at(t, p, nbytes, pattern="all"):
    """(α, β) of one transfer of `nbytes` among `p` ranks: flat_link's α, and β from
    flat_link or, when the topology has a measured curve for the hop (``bandwidth_curve``
    in the node, ``nic_curve`` between nodes), the curve's at that size (log-log
    interpolation, the end values beyond it)."""
    a, b = flat_link(t, p, pattern)
    curve = t.bandwidth_curve if p <= t.devices_per_node else t.nic_curve
    if not curve or nbytes <= 0:
        return a, b
    return a, 1.0 / (curve_at(curve, nbytes) * 1e9)


def incast_time(t, k, nbytes, beta):
    """Seconds for one device to take in `nbytes` in all from `k` peers writing to it at
    once: at its link's `beta` (s/byte) when the topology has no ``incast_curve``, else
    at the curve's aggregate bandwidth for k senders (measured contention at the
    receiver; linear in k between points, the end points' figures beyond them)."""
    if not t.incast_curve or k <= 0 or nbytes <= 0:
        return nbytes * beta
    return nbytes / (curve_at(t.incast_curve, k, log=False) * 1e9)


def node_shape(t, p):
    """(d, nodes): ranks per node and nodes used by `p` ranks laid out node by node."""
    d = min(p, t.devices_per_node)
    return d, math.ceil(p / d)


def gamma(t, dtype="float32"):
    """Seconds per byte of reduction input of `dtype` on one device (the topology's
    figure for that type, else its ``default``)."""
    return 1.0 / (t.reduce_throughput(dtype) * 1e9)


def log2ceil(p):
    """⌈log2 p⌉ rounds of a doubling algorithm over p ranks (0 for one rank)."""
    return max(0, math.ceil(math.log2(p))) if p > 1 else 0


# ---- all-reduce -------------------------------------------------------------------

@algorithm("allreduce", "ring", "2(P-1)α + 2(P-1)/P·nβ + (P-1)/P·nγ")
def _allreduce_ring(t, p, n, dtype="float32"):
    a, b = flat_link(t, p)
    return 2 * (p - 1) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * gamma(t, dtype)


@algorithm("allreduce", "tree", "2⌈log2 P⌉α + 2nβ + nγ (double binary tree, pipelined: each tree carries n/2; "
           "a rank, inner in one tree and a leaf in the other, receives and sends 2n in all)")
def _allreduce_tree(t, p, n, dtype="float32"):
    a, b = flat_link(t, p)
    return 2 * log2ceil(p) * a + 2 * n * b + n * gamma(t, dtype) if p > 1 else 0.0


@algorithm("allreduce", "rec_doubling", "⌈log2 P⌉(α + nβ + nγ)")
def _allreduce_rec_doubling(t, p, n, dtype="float32"):
    a, b = flat_link(t, p, "all")
    return log2ceil(p) * (a + n * b + n * gamma(t, dtype))


@algorithm("allreduce", "rabenseifner", "2⌈log2 P⌉α + 2(P-1)/P·nβ + (P-1)/P·nγ (halving-doubling)")
def _allreduce_rabenseifner(t, p, n, dtype="float32"):
    a, b = flat_link(t, p, "all")
    return 2 * log2ceil(p) * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * gamma(t, dtype)


@algorithm("allreduce", "one_shot", "α + (P-1)·nβ + (P-1)·nγ (each rank loads every peer's whole buffer)", intra_only=True)
def _allreduce_one_shot(t, p, n, dtype="float32"):
    a, b = flat_link(t, p)
    return (a + (p - 1) * n * b + (p - 1) * n * gamma(t, dtype)) if p > 1 else 0.0


@algorithm("allreduce", "two_shot", "2α + 2(P-1)/P·nβ + (P-1)/P·nγ (load/store reduce-scatter, then all-gather)",
           intra_only=True)
def _allreduce_two_shot(t, p, n, dtype="float32"):
    a, b = flat_link(t, p)
    return (2 * a + 2 * (p - 1) / p * n * b + (p - 1) / p * n * gamma(t, dtype)) if p > 1 else 0.0


@algorithm("allreduce", "nvls", "2α + nβ (the switch reduces and multicasts: each rank moves about n each way)",
           intra_only=True)
def _allreduce_nvls(t, p, n, dtype="float32"):
    if not t.intra_multicast:
        return math.inf
    a, b = flat_link(t, p)
    return (2 * a + n * b) if p > 1 else 0.0


@algorithm("allreduce", "hierarchical", "ring reduce-scatter in the node, ring all-reduce of n/d across the nodes, "
           "ring all-gather in the node (d devices per node)")
def _allreduce_hierarchical(t, p, n, dtype="float32"):
    d, nodes = node_shape(t, p)
    a, b = flat_link(t, d)
    inside = 2 * ((d - 1) * a + (d - 1) / d * n * b) + (d - 1) / d * n * gamma(t, dtype) if d > 1 else 0.0
    if nodes == 1:
        return inside
    # Second level: d concurrent rings over the nodes (one per local rank, each on its
    # share of the NICs) all-reduce n/d each.
    node_bw = t.nic.bandwidth_GBps * 1e9 * t.nics_per_node
    b2 = math.inf if node_bw == 0 else t.oversubscription * d / node_bw
    a2 = t.nic.latency_us * 1e-6
    m = n / d
    across = 2 * (nodes - 1) * a2 + 2 * (nodes - 1) / nodes * m * b2 + (nodes - 1) / nodes * m * gamma(t, dtype)
    return inside + across


# ---- other collectives ----------------------------------------------------------

@algorithm("allgather", "ring", "(P-1)α + (P-1)/P·nβ (n: the whole output)")
def _allgather_ring(t, p, n, dtype="float32"):
    a, b = flat_link(t, p)
    return (p - 1) * a + (p - 1) / p * n * b


@algorithm("allgather", "rec_doubling", "⌈log2 P⌉α + (P-1)/P·nβ")
def _allgather_rec_doubling(t, p, n, dtype="float32"):
    a, b = flat_link(t, p, "all")
    return log2ceil(p) * a + (p - 1) / p * n * b


@algorithm("reducescatter", "ring", "(P-1)α + (P-1)/P·nβ + (P-1)/P·nγ (n: the whole input)")
def _reducescatter_ring(t, p, n, dtype="float32"):
    a, b = flat_link(t, p)
    return (p - 1) * a + (p - 1) / p * n * b + (p - 1) / p * n * gamma(t, dtype)


@algorithm("broadcast", "tree", "⌈log2 P⌉(α + nβ) (binomial tree)")
def _broadcast_tree(t, p, n, dtype="float32"):
    a, b = flat_link(t, p)
    return log2ceil(p) * (a + n * b)


@algorithm("broadcast", "ring", "(P-1)α + nβ (pipelined ring, chunks small against n)")
def _broadcast_ring(t, p, n, dtype="float32"):
    a, b = flat_link(t, p)
    return (p - 1) * a + n * b if p > 1 else 0.0


@algorithm("alltoall", "pairwise", "(P-1)α + (P-1)/P·nβ (n: what a rank sends in all)")
def _alltoall_pairwise(t, p, n, dtype="float32"):
    a, b = flat_link(t, p, "all")
    return (p - 1) * a + (p - 1) / p * n * b


@algorithm("alltoall", "bruck", "⌈log2 P⌉α + ⌈log2 P⌉·n/2·β")
def _alltoall_bruck(t, p, n, dtype="float32"):
    a, b = flat_link(t, p, "all")
    return log2ceil(p) * (a + n / 2 * b)


@algorithm("barrier", "dissemination", "o + ⌈log2 P⌉·s (o: the topology's overhead_us; s: a round, its "
           "sync_latency_us or else α)")
def _barrier_dissemination(t, p, n, dtype="float32"):
    return t.overhead_us * 1e-6 + log2ceil(p) * sync_round(t, p) if p > 1 else 0.0


def sync_round(t, p):
    """Seconds of one barrier round among `p` ranks: the calibrated round
    (sync_latency_us, measured on the path the PEs take) if known, else the link's α."""
    if t.sync_latency_us:
        return t.sync_latency_us * 1e-6
    return flat_link(t, p, "all")[0]


BUS_FACTOR = {  # nccl-tests' busbw = algbw * factor (docs/PERFORMANCE.md of nccl-tests)
    "allreduce": lambda p: 2 * (p - 1) / p,
    "allgather": lambda p: (p - 1) / p,
    "reducescatter": lambda p: (p - 1) / p,
    "alltoall": lambda p: (p - 1) / p,
    "broadcast": lambda p: 1.0,
    "barrier": lambda p: 0.0,
}


def collectives():
    """The collectives with at least one algorithm, sorted."""
    return sorted({c for c, _ in ALGORITHMS})


def names(collective):
    """The algorithm names for `collective`, in table order."""
    return [n for c, n in ALGORITHMS if c == collective]
