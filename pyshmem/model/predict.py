"""Pricing a collective's algorithms over sizes: :func:`predict` and its records."""

import dataclasses
import math

from pyshmem.errors import InvalidArgumentError
from pyshmem.model.algorithms import ALGORITHMS, BUS_FACTOR, collectives, names


@dataclasses.dataclass(frozen=True)
class Prediction:
    """One (algorithm, size) point. time_us is inf where the algorithm does not apply
    (one_shot/two_shot/nvls across nodes, nvls without a multicast switch)."""

    collective: str
    algo: str
    bytes: int
    npes: int
    time_us: float
    algbw_GBps: float
    busbw_GBps: float

    def as_dict(self):
        """The record as a dict (the CLI's --json line)."""
        return dataclasses.asdict(self)


def predict(collective, topology, npes=None, sizes=(1 << 20,), algos=None):
    """Prices `collective` with each algorithm at each size.

    Args:
        collective: one of :func:`pyshmem.model.collectives` (``allreduce``...).
        topology: a :class:`pyshmem.model.Topology`.
        npes: ranks (default: every device of the topology); at most topology.npes.
        sizes: message sizes in bytes (nccl-tests' convention per collective).
        algos: algorithm names (default: all of the collective's).

    Returns:
        list of :class:`Prediction`, size-major, in table order within a size.

    Raises:
        InvalidArgumentError: an unknown collective or algorithm, npes out of range, a
            negative size.
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
    out = []
    factor = BUS_FACTOR[collective](npes) if npes > 1 else 0.0
    for n in sizes:
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise InvalidArgumentError(f"pyshmem.model.predict: sizes must be whole numbers of bytes, not {n!r}")
        for a in algos:
            alg = ALGORITHMS[(collective, a)]
            off_node = alg.intra_only and npes > topology.devices_per_node
            t = math.inf if off_node else alg.cost(topology, npes, n)
            algbw = n / t / 1e9 if 0 < t < math.inf else 0.0
            out.append(Prediction(collective, a, n, npes, t * 1e6, algbw, algbw * factor))
    return out


def best(predictions):
    """{bytes: the Prediction with the least time} over `predictions`."""
    chosen = {}
    for p in predictions:
        if p.bytes not in chosen or p.time_us < chosen[p.bytes].time_us:
            chosen[p.bytes] = p
    return chosen
