"""CUDA's atomic functions and integer intrinsics in CUDA C++ kernels on the CPU build
(pyshmem/cpu_intrinsics.h), under the launcher: values under contention from every
thread of many blocks, and a __nanosleep spin on a flag of the same block."""

import pytest

from conftest import assert_ok, cpu_kernel_toolchain_missing, run_pes

MISSING = cpu_kernel_toolchain_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


@pytest.mark.parametrize("npes", [1, 2])
def test_atomics_and_integer_intrinsics(npes):
    proc = run_pes("cpu_intrinsics.py", npes, timeout=180)
    assert_ok(proc, npes)
