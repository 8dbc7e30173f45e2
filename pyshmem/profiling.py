"""Profiling control: OpenSHMEM's ``shmem_pcontrol`` (shmem4py's ``pcontrol``).

OpenSHMEM defines the levels and leaves their effect to a profiling library: 0
disables profiling, 1 enables it at the default level of detail, 2 flushes profile
buffers, and any other level has profiler-defined effects and may take more
arguments. pyshmem has no profiling library behind this hook (its own timeline is
``PYSHMEM_TRACE``, set before start), so :func:`pcontrol` checks its arguments and
otherwise does nothing, which the specification allows.
"""

import operator

from pyshmem.errors import InvalidArgumentError, ShmemTypeError
from pyshmem.runtime import where

_LEVELS_WITHOUT_VALUE = (0, 1, 2)


def pcontrol(level=1, value=None):
    """Set the profiling level (a no-op in pyshmem beyond checking the arguments).

    Args:
        level: 0 (disable), 1 (enable, the default), 2 (flush), or a larger integer for
            a profiler-defined control.
        value: an optional argument for a profiler-defined level (> 2); levels 0, 1 and
            2 take none.

    Returns:
        None.

    Raises:
        ShmemTypeError: ``level`` is not an integer.
        InvalidArgumentError: ``level`` is negative, or a ``value`` is passed with level
            0, 1 or 2.
    """
    try:
        level = operator.index(level)
    except TypeError:
        raise ShmemTypeError(f"{where('pcontrol')}: level must be an integer, not {type(level).__name__}; pass 0 "
                             "(off), 1 (on), 2 (flush) or a larger profiler-defined level") from None
    if level < 0:
        raise InvalidArgumentError(f"{where('pcontrol')}: level {level} is negative; use 0 (off), 1 (on), 2 (flush) "
                                   "or a larger profiler-defined level")
    if value is not None and level in _LEVELS_WITHOUT_VALUE:
        raise InvalidArgumentError(f"{where('pcontrol')}: level {level} takes no value; pass a value only with a "
                                   "profiler-defined level (> 2)")


__all__ = ["pcontrol"]
