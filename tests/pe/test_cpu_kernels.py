"""CUDA C++ kernels run on the CPU build of the device API (pyshmem.cuda.Module/launch)
under the real launcher, by direct loads/stores and through the proxy."""

import pytest

from conftest import assert_ok, cpu_kernel_toolchain_missing, run_pes

MISSING = cpu_kernel_toolchain_missing()


@pytest.mark.parametrize("npes", [1, 2, 4])
@pytest.mark.parametrize("path", ["direct", "proxy"])
@pytest.mark.skipif(MISSING is not None, reason=str(MISSING))
def test_cpu_kernels(npes, path):
    proc = run_pes("cpu_kernels.py", npes, timeout=120, env={"PYSHMEM_PROXY_ALL": "1" if path == "proxy" else "0"})
    assert_ok(proc, npes)
