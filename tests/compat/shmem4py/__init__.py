"""A stand-in ``shmem4py`` package that runs shmem4py's own test suite against pyshmem.

shmem4py's tests start with ``from shmem4py import shmem``; with this folder on
``sys.path`` that name is pyshmem (see :mod:`shmem4py.shmem`). Only the test runner in
``tests/compat/run_shmem4py_suite.py`` puts it there; it is not part of pyshmem and is
never installed. shmem4py's ``rc`` (its cffi runtime configuration) has no stand-in: the
tests of it are excluded by the runner.
"""

from . import shmem  # noqa: F401  (``from shmem4py import shmem`` finds the submodule)
