"""Signals: 64-bit symmetric flags updated together with a put (``put_signal``).

A signal object is a 1-element ``uint64`` symmetric array (shmem4py hands out a C
pointer; anything that only passes it back to these functions works the same).
``put_signal`` guarantees the data is visible before the signal update, so a PE that
sees the signal with :func:`signal_wait_until` can read the data.
"""

import numpy as np

from pyshmem._lib import lib
from pyshmem.memory import free, new_array

put_signal = lib.put_signal
put_signal_nbi = lib.put_signal_nbi
signal_fetch = lib.signal_fetch
signal_wait_until = lib.signal_wait_until


def new_signal():
    """Allocate one signal, zeroed (collective).

    Returns:
        numpy.ndarray: a 1-element uint64 symmetric array.
    """
    return new_array(1, np.uint64, clear=True)


def del_signal(signal):
    """Release a signal from :func:`new_signal` (collective)."""
    free(signal)


__all__ = ["new_signal", "del_signal", "signal_fetch", "put_signal", "put_signal_nbi", "signal_wait_until"]
