"""Pricing a collective's algorithms over sizes: :func:`predict` and its records."""

import dataclasses
import math

from pyshmem.errors import InvalidArgumentError
from pyshmem.model.algorithms import ALGORITHMS, BUS_FACTOR, collectives, names


@dataclasses.dataclass(frozen=True)
class Prediction:
    """One (algorithm, size) point. time_us is inf where the algorithm does not apply
    (one_shot/two_shot/nvls across nodes, nvls without a multicast switch). With an
    overlap, compute_us is the compute the communication hides behind and exposed_us
    what is left of time_us after it (max(0, time - compute)); None otherwise."""

    collective: str
    algo: str
    bytes: int
    npes: int
    time_us: float
    algbw_GBps: float
    busbw_GBps: float
    compute_us: float = None
    exposed_us: float = None

    def as_dict(self):
        """The record as a dict (the CLI's --json line; the overlap fields only when set)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


def compute_time_us(topology, flops):
    """Microseconds `flops` floating-point operations take on one device of `topology`.

    Raises:
        InvalidArgumentError: negative flops, or a topology whose ``tflops`` is unknown (0).
    """
    if isinstance(flops, bool) or not isinstance(flops, (int, float)) or flops < 0:
        raise InvalidArgumentError(f"pyshmem.model.predict: overlap_flops must be a number ≥ 0, not {flops!r}")
    if not topology.tflops:
        raise InvalidArgumentError(f"pyshmem.model.predict: topology {topology.name!r} has no 'tflops' (a device's "
                                   "dense TFLOP/s), which the overlap model needs; add it to the topology")
    return flops / (topology.tflops * 1e12) * 1e6


def check_params(collective, algos, params):
    """Raises InvalidArgumentError for a parameter none of `algos` of `collective` takes."""
    known = {k for a in algos for k, _ in ALGORITHMS[(collective, a)].params}
    for k, v in params.items():
        if k not in known:
            raise InvalidArgumentError(f"pyshmem.model.predict: {collective} takes no parameter {k!r}; "
                                       f"its parameters: {', '.join(sorted(known)) or 'none'}")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            raise InvalidArgumentError(f"pyshmem.model.predict: parameter {k} must be a number ≥ 0, not {v!r}")


def predict(collective, topology, npes=None, sizes=(1 << 20,), algos=None, dtype="float32", params=None,
            overlap_flops=None):
    """Prices `collective` with each algorithm at each size.

    Args:
        collective: one of :func:`pyshmem.model.collectives` (``allreduce``, ``moe_dispatch``...).
        topology: a :class:`pyshmem.model.Topology`.
        npes: ranks (default: every device of the topology); at most topology.npes.
        sizes: message sizes in bytes (nccl-tests' convention per collective; the
            workloads' in :mod:`pyshmem.model.workloads`).
        algos: algorithm names (default: all of the collective's).
        dtype: element type, for the reduction cost γ (the topology's figure for it).
        params: the workload's parameters ({"topk": 8, ...}; see ``list``); each
            algorithm takes those it has, defaults for the rest.
        overlap_flops: compute (FLOPs per device) the communication overlaps with: the
            records then carry compute_us and exposed_us.

    Returns:
        list of :class:`Prediction`, size-major, in table order within a size.

    Raises:
        InvalidArgumentError: an unknown collective, algorithm or parameter, npes out of
            range, a negative size, overlap without the topology's tflops.
    """
    if collective not in collectives():
        raise InvalidArgumentError(f"pyshmem.model.predict: unknown collective {collective!r}; "
                                   f"one of {', '.join(collectives())}")
    npes = topology.npes if npes is None else npes
    if isinstance(npes, bool) or not isinstance(npes, int) or not 1 <= npes <= topology.npes:
        raise InvalidArgumentError(f"pyshmem.model.predict: npes must be 1 to {topology.npes} (the devices of "
                                   f"{topology.name}), not {npes!r}")
    known = names(collective)
    algos = known if algos is None else list(algos)
    for a in algos:
        if a not in known:
            raise InvalidArgumentError(f"pyshmem.model.predict: {collective} has no algorithm {a!r}; "
                                       f"known: {', '.join(known)}")
    params = dict(params or {})
    check_params(collective, algos, params)
    compute = None if overlap_flops is None else compute_time_us(topology, overlap_flops)
    out = []
    factor = BUS_FACTOR[collective](npes) if npes > 1 else 0.0
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InvalidArgumentError(f"pyshmem.model.predict: sizes must be whole numbers of bytes, not {n!r}")
        for a in algos:
            alg = ALGORITHMS[(collective, a)]
            off_node = alg.intra_only and npes > topology.devices_per_node
            mine = {k: params[k] for k, _ in alg.params if k in params}
            t = math.inf if off_node else alg.cost(topology, npes, n, dtype, **mine)
            algbw = n / t / 1e9 if 0 < t < math.inf else 0.0
            exposed = None if compute is None else max(0.0, t * 1e6 - compute)
            out.append(Prediction(collective, a, n, npes, t * 1e6, algbw, algbw * factor, compute, exposed))
    return out


def best(predictions, exposed=False):
    """{bytes: the Prediction with the least time} over `predictions` (the least exposed
    time with `exposed`, ties to the shorter total)."""
    def key(p):
        return (p.exposed_us, p.time_us) if exposed else (p.time_us,)

    chosen = {}
    for p in predictions:
        if p.bytes not in chosen or key(p) < key(chosen[p.bytes]):
            chosen[p.bytes] = p
    return chosen
