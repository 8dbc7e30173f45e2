"""Collectives over teams, with shmem4py's names and arguments.

``sync(team=None)``, ``broadcast``, ``collect``, ``fcollect``, ``alltoall``,
``alltoalls``, ``reduce(target, source, op=OP_SUM, size=None, team=None)`` and the
``and/or/xor/max/min/sum/prod_reduce`` forms, plus NVSHMEM's ``barrier(team)``
(quiet + sync). ``team=None`` means TEAM_WORLD; sizes count elements. Arrays are
contiguous symmetric arrays of one element type on every PE of the team; every PE of
the team calls the same collectives in the same order with the same sizes (checked:
a mismatch raises CollectiveMismatchError on every PE instead of hanging).

On return the call is complete on this PE: ``target`` holds the result and ``source``
may be reused. With symmetric GPU arrays (``pyshmem.cuda``) every collective also
takes ``stream=``: it is then enqueued on that CUDA stream as a kernel running the
device collective (pyshmem/_gpu_coll.py) and may be captured in a CUDA graph. Reductions combine the PEs' values in team order, so every PE gets the
same bits; integer arithmetic wraps around as in NumPy. See coll/coll.h for the
algorithms and docs/design.md for how they are chosen.
"""

from pyshmem._lib import lib
from pyshmem.constants import _StrEnum


# The reduction operators and their kinds ("bitwise": integer types; "ordered": integer
# and floating; "arithmetic": every type), from the one list (PYSHMEM_REDUCE_OPS,
# pyshmem/types.h), in its order.
REDUCE_KINDS = dict(lib.REDUCE_OPS)
OP = _StrEnum("OP", [(name.upper(), name) for name in REDUCE_KINDS], module=__name__, qualname="OP")
OP.__doc__ = "Reduction operators (a str enum, as in shmem4py): AND, OR, XOR, MAX, MIN, SUM, PROD."

OP_AND, OP_OR, OP_XOR, OP_MAX, OP_MIN, OP_SUM, OP_PROD = OP.AND, OP.OR, OP.XOR, OP.MAX, OP.MIN, OP.SUM, OP.PROD


def reduce_defined(op, dtype):
    """Whether reduction ``op`` (a name in REDUCE_KINDS) is defined for NumPy ``dtype``: the
    rule of the kinds above (the compiled side applies the same one to host arrays)."""
    kind = REDUCE_KINDS[op]
    return not ((kind == "bitwise" and dtype.kind not in "iu") or (kind == "ordered" and dtype.kind == "c"))

sync = lib.sync
barrier = lib.barrier
broadcast = lib.broadcast
collect = lib.collect
fcollect = lib.fcollect
alltoall = lib.alltoall
alltoalls = lib.alltoalls
_reduce = lib.reduce


def reduce(target, source, op=OP_SUM, size=None, team=None, stream=None):
    """Combine ``source`` over the team's PEs element-wise into ``target`` on every PE.

    Args:
        target: symmetric array receiving the result (may be ``source`` itself).
        source: symmetric array of at least ``size`` elements.
        op: an OP member or its name ('sum', 'max', ...). and/or/xor take integer
            arrays, max/min integer and float arrays, sum/prod also complex ones.
        size: elements to reduce (default: the shorter of target and source).
        team: the team (default TEAM_WORLD).
        stream: with symmetric GPU arrays (pyshmem.cuda), the CUDA stream to run the
            reduction on (a kernel; the call returns at once). None: run it now.

    Raises:
        ShmemTypeError: op is not defined for the element type, or types differ.
        InvalidArgumentError: arrays not symmetric, overlapping, or too short.
        CollectiveMismatchError: PEs passed different sizes or ops.
    """
    _reduce(target, source, op, size, team, stream)


def _make(op):
    def f(target, source, size=None, team=None, stream=None):
        _reduce(target, source, op, size, team, stream)

    f.__name__ = f.__qualname__ = f"{op.value}_reduce"
    f.__doc__ = (f"reduce(target, source, OP_{op.name}, size, team, stream): the {op.value} of source over the "
                 "team's PEs.\n\n"
                 "Args/Raises: see reduce.")
    return f


and_reduce = _make(OP.AND)
or_reduce = _make(OP.OR)
xor_reduce = _make(OP.XOR)
max_reduce = _make(OP.MAX)
min_reduce = _make(OP.MIN)
sum_reduce = _make(OP.SUM)
prod_reduce = _make(OP.PROD)

__all__ = [
    "OP", "OP_AND", "OP_OR", "OP_XOR", "OP_MAX", "OP_MIN", "OP_SUM", "OP_PROD",
    "sync", "barrier", "broadcast", "collect", "fcollect", "alltoall", "alltoalls",
    "reduce", "and_reduce", "or_reduce", "xor_reduce", "max_reduce", "min_reduce", "sum_reduce", "prod_reduce",
]
