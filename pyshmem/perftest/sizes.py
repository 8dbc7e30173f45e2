"""Message sizes on the perftest command lines (a leaf module: cli, compare and gpu use it)."""

import argparse

_SUFFIX = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    """'8', '4K', '1M' -> bytes.

    Raises:
        argparse.ArgumentTypeError: not a size.
    """
    t = str(text).strip().upper().removesuffix("B")
    unit = t[-1] if t and t[-1] in _SUFFIX else ""
    try:
        value = int(t[:-1] if unit else t) * _SUFFIX[unit]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size (e.g. 8, 4K, 1M)") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: sizes are >= 0")
    return value


def sizes_of(lo, hi, factor):
    """lo, lo*factor, ... up to hi (inclusive)."""
    if factor < 2:
        raise ValueError("-f/--step-factor must be >= 2")
    out, s = [], max(1, lo)
    while s <= hi:
        out.append(s)
        s *= factor
    return out


def size_list(text, factor=2, what="pyshmem"):
    """'1K:8G' (multiplying by `factor`) or '8,64,1M' -> sizes, ascending.

    Raises:
        InvalidArgumentError: a part that is not a size (the message names `what` and
            says what a size looks like).
    """
    from pyshmem.errors import InvalidArgumentError

    try:
        if ":" in text:
            lo, hi = (parse_size(x) for x in text.split(":", 1))
            return sizes_of(lo, hi, factor)
        return sorted(parse_size(x) for x in text.split(",") if x)
    except argparse.ArgumentTypeError as e:
        raise InvalidArgumentError(f"{what}: {e}") from None


__all__ = ["parse_size", "size_list", "sizes_of"]
