"""Work handles of the ``pyshmem`` torch.distributed backend (pyshmem/torch_backend.py):
its operations complete before they return, so every handle is a completed one."""

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


__all__ = ["Done"]
