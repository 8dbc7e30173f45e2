"""Work handles of the ``pyshmem`` torch.distributed backend (pyshmem/torch_backend.py):
its collectives and receives complete before they return (a completed handle); a send
whose receiver has not freed its mailbox yet completes when the outbox thread has
posted it (pyshmem/torch_p2p.py)."""

import time

import torch
from torch.futures import Future

_C10D = torch._C._distributed_c10d


class Done(_C10D.Work):
    """A work handle of an operation that completed before it returned (its future is
    made when asked for: most callers only wait)."""

    def __init__(self, result, source=-1):
        super().__init__()
        self._result = result
        self._source = source
        self._future = None

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True

    def result(self):
        return self._result

    def source_rank(self):
        return self._source

    def get_future(self):
        if self._future is None:
            self._future = Future()
            self._future.set_result(self._result)
        return self._future


class Posting(Done):
    """A send in the outbox: complete when every message's last piece is in its
    receiver's slot (threading.Events set by the outbox thread)."""

    def __init__(self, result, events, what, timeout_s):
        super().__init__(result)
        self._events = events
        self._what = what
        self._timeout_s = timeout_s

    def wait(self, timeout=None):
        """Waits for the send (up to `timeout`, else the group's timeout; 0: no bound).

        Raises:
            RuntimeError: the receiver did not take the message within the timeout, or
                the outbox failed (its pyshmem error).
        """
        limit = timeout.total_seconds() if timeout else self._timeout_s
        deadline = time.monotonic() + limit if limit > 0 else None
        for e in self._events:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not e.wait(left):
                raise RuntimeError(f"{self._what}: the receiver did not take the message within {limit:g} s (a recv "
                                   "missing on that rank, or one with another size or tag)")
            if e.error is not None:
                raise RuntimeError(f"{self._what}: {e.error}") from e.error
        return True

    def is_completed(self):
        return all(e.is_set() for e in self._events)

    def is_success(self):
        return self.is_completed() and all(e.error is None for e in self._events)

    def get_future(self):
        raise RuntimeError("pyshmem backend: a send's get_future() is not supported (as with gloo); call wait()")


__all__ = ["Done", "Posting"]
