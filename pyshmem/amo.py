"""Atomic memory operations (shmem4py names and signatures).

The typed entry points (``atomic_fetch_add`` ...) are compiled; ``atomic_op``,
``atomic_fetch_op`` and ``atomic_fetch_op_nbi`` dispatch on an :class:`AMO` value.
Targets are 1-element symmetric arrays (``a[i:i+1]`` or a 0-d array).
"""

from pyshmem._lib import lib
from pyshmem.constants import AMO
from pyshmem.errors import InvalidArgumentError, ShmemError
from pyshmem.runtime import where

atomic_fetch = lib.atomic_fetch
atomic_set = lib.atomic_set
atomic_swap = lib.atomic_swap
atomic_compare_swap = lib.atomic_compare_swap
atomic_fetch_inc = lib.atomic_fetch_inc
atomic_inc = lib.atomic_inc
atomic_fetch_add = lib.atomic_fetch_add
atomic_add = lib.atomic_add
atomic_fetch_and = lib.atomic_fetch_and
atomic_and = lib.atomic_and
atomic_fetch_or = lib.atomic_fetch_or
atomic_or = lib.atomic_or
atomic_fetch_xor = lib.atomic_fetch_xor
atomic_xor = lib.atomic_xor
atomic_fetch_nbi = lib.atomic_fetch_nbi
atomic_swap_nbi = lib.atomic_swap_nbi
atomic_compare_swap_nbi = lib.atomic_compare_swap_nbi
atomic_fetch_inc_nbi = lib.atomic_fetch_inc_nbi
atomic_fetch_add_nbi = lib.atomic_fetch_add_nbi
atomic_fetch_and_nbi = lib.atomic_fetch_and_nbi
atomic_fetch_or_nbi = lib.atomic_fetch_or_nbi
atomic_fetch_xor_nbi = lib.atomic_fetch_xor_nbi


def _amo(op, call):
    try:
        return AMO(str(op).lower())
    except ValueError:
        raise InvalidArgumentError(
            f"{where(call)}: unknown op {op!r}; use one of " + ", ".join(f"AMO.{m.name}" for m in AMO)
        ) from None


def _dispatch(call, op, fn, *args):
    """fn(*args), the typed call ``op`` maps to; its errors are re-raised (same class) naming
    the generic ``call`` the user made, e.g. "pyshmem.atomic_op (AMO.SET) on PE 0: ...",
    not the typed call ("pyshmem.atomic_set") the user never wrote."""
    try:
        return fn(*args)
    except ShmemError as exc:
        msg, typed = str(exc), f"pyshmem.{fn.__name__} on PE "
        if not msg.startswith(typed):
            raise
        renamed = type(exc)(f"pyshmem.{call} (AMO.{op.name}) on PE " + msg[len(typed):])
        raise renamed.with_traceback(exc.__traceback__) from None


def atomic_op(target, value, op, pe, ctx=None):
    """Apply ``op`` (an :class:`AMO`) with ``value`` to ``target`` on PE ``pe``.

    Args:
        target: 1-element symmetric array.
        value: operand (ignored for ``AMO.INC``).
        op: AMO.SET, INC, ADD, AND, OR or XOR (or its lower-case name).
        pe: target PE.
        ctx: None or CTX_DEFAULT.

    Raises:
        InvalidArgumentError: unknown op, bad PE or target.
    """
    op = _amo(op, "atomic_op")
    if op is AMO.INC:
        return _dispatch("atomic_op", op, lib.atomic_inc, target, pe, ctx)
    fn = {AMO.SET: lib.atomic_set, AMO.ADD: lib.atomic_add, AMO.AND: lib.atomic_and,
          AMO.OR: lib.atomic_or, AMO.XOR: lib.atomic_xor}[op]
    return _dispatch("atomic_op", op, fn, target, value, pe, ctx)


def atomic_fetch_op(target, value, op, pe, ctx=None):
    """Like :func:`atomic_op` but returns the previous value (``AMO.SET`` is a swap).

    Returns:
        int or float: the value ``target`` held on ``pe`` before the operation.
    """
    op = _amo(op, "atomic_fetch_op")
    if op is AMO.INC:
        return _dispatch("atomic_fetch_op", op, lib.atomic_fetch_inc, target, pe, ctx)
    fn = {AMO.SET: lib.atomic_swap, AMO.ADD: lib.atomic_fetch_add, AMO.AND: lib.atomic_fetch_and,
          AMO.OR: lib.atomic_fetch_or, AMO.XOR: lib.atomic_fetch_xor}[op]
    return _dispatch("atomic_fetch_op", op, fn, target, value, pe, ctx)


def atomic_fetch_op_nbi(fetch, target, value, op, pe, ctx=None):
    """Non-blocking :func:`atomic_fetch_op`: the previous value lands in ``fetch[0]``
    (a local 1-element array of the same dtype) by the next quiet()."""
    op = _amo(op, "atomic_fetch_op_nbi")
    if op is AMO.INC:
        return _dispatch("atomic_fetch_op_nbi", op, lib.atomic_fetch_inc_nbi, fetch, target, pe, ctx)
    fn = {AMO.SET: lib.atomic_swap_nbi, AMO.ADD: lib.atomic_fetch_add_nbi, AMO.AND: lib.atomic_fetch_and_nbi,
          AMO.OR: lib.atomic_fetch_or_nbi, AMO.XOR: lib.atomic_fetch_xor_nbi}[op]
    return _dispatch("atomic_fetch_op_nbi", op, fn, fetch, target, value, pe, ctx)


__all__ = [
    "atomic_fetch", "atomic_set", "atomic_swap", "atomic_compare_swap", "atomic_fetch_inc", "atomic_inc",
    "atomic_fetch_add", "atomic_add", "atomic_fetch_and", "atomic_and", "atomic_fetch_or", "atomic_or",
    "atomic_fetch_xor", "atomic_xor", "atomic_fetch_nbi", "atomic_swap_nbi", "atomic_compare_swap_nbi",
    "atomic_fetch_inc_nbi", "atomic_fetch_add_nbi", "atomic_fetch_and_nbi", "atomic_fetch_or_nbi",
    "atomic_fetch_xor_nbi", "atomic_op", "atomic_fetch_op", "atomic_fetch_op_nbi",
]
