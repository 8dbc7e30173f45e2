"""Distributed locks (OpenSHMEM ``set_lock``/``test_lock``/``clear_lock``).

A lock is a 1-element ``int64`` symmetric array, zero on every PE (:func:`new_lock`).
The lock is fair: PEs get it in the order they asked (a ticket lock on PE 0's copy).
``clear_lock`` completes the holder's puts (quiet) before the next PE gets the lock.
"""

import numpy as np

from pyshmem._lib import lib
from pyshmem.memory import free, new_array
from pyshmem.runtime import as_bool

set_lock = lib.set_lock
test_lock = lib.test_lock
clear_lock = lib.clear_lock


def new_lock():
    """Allocate a lock, released (collective).

    Returns:
        numpy.ndarray: a 1-element int64 symmetric array to pass to set_lock & co.
    """
    return new_array(1, np.int64, clear=True)


def del_lock(lock):
    """Release a lock from :func:`new_lock` (collective)."""
    free(lock)


class Lock:
    """A distributed lock object (collective constructor), as in shmem4py.

    ``with lock:`` acquires and releases it; :meth:`destroy` frees it (collective).
    """

    def __init__(self):
        """Allocate the lock (collective)."""
        self._lock = new_lock()

    def destroy(self):
        """Free the lock (collective); a second call does nothing."""
        if self._lock is not None:
            del_lock(self._lock)
            self._lock = None

    def acquire(self, blocking=True):
        """Acquire the lock.

        Args:
            blocking: wait for it (True) or try once (False).

        Returns:
            bool: True when acquired.
        """
        if as_bool("Lock.acquire", "blocking", blocking):
            set_lock(self._lock)
            return True
        return not test_lock(self._lock)

    def release(self):
        """Release the lock (after completing this PE's puts)."""
        clear_lock(self._lock)

    def __enter__(self):
        self.acquire()

    def __exit__(self, *exc):
        self.release()


__all__ = ["new_lock", "del_lock", "set_lock", "test_lock", "clear_lock", "Lock"]
