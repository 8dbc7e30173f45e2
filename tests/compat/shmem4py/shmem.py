"""``shmem4py.shmem`` for shmem4py's test suite: every name is pyshmem's.

Attribute lookups go to the :mod:`pyshmem` module itself (PEP 562 module
``__getattr__``), so ``shmem.X`` here is exactly ``pyshmem.X``, as in a program that
does ``import pyshmem as shmem``. One name is added: ``ffi``, because
``test_ptr.py`` does ``from shmem4py.shmem import ffi`` at import time (and never uses
it). pyshmem has no cffi layer, so ``ffi`` is a placeholder whose every use raises; the
tests that do use shmem4py's ``ffi`` are excluded by the runner, each by id.
"""

import pyshmem as _pyshmem


class _NoFFI:
    """Placeholder for shmem4py's cffi ``ffi`` object: any attribute raises."""

    def __getattr__(self, name):
        raise AttributeError(
            f"shmem4py.shmem.ffi.{name}: pyshmem has no cffi layer; a shmem4py test that uses ffi must be "
            "listed in EXCLUDED in tests/compat/run_shmem4py_suite.py"
        )

    def __repr__(self):
        return "<no ffi: pyshmem has no cffi layer>"


ffi = _NoFFI()


def __getattr__(name):
    return getattr(_pyshmem, name)


def __dir__():
    return sorted(set(dir(_pyshmem)) | {"ffi"})
