"""NVSHMEM-style kernels (nvshmem_* names only, tests/kernels/nvshmem_style.cu) run from
Python through pyshmem.cuda.Module on the CPU build, on 2 and 4 PEs and under the
ordering check; the program checks every result (tests/pe/programs/nvshmem_kernels.py)."""

import pytest

from conftest import assert_ok, cpu_kernel_toolchain_missing, run_pes


@pytest.mark.parametrize("npes,env", [(2, {}), (4, {}), (3, {"PYSHMEM_ORDER_CHECK": "1", "PYSHMEM_ORDER_CHECK_SEED": "19"})],
                         ids=["2pe", "4pe", "3pe-ordering-check"])
def test_nvshmem_style_kernels(npes, env):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    assert_ok(run_pes("nvshmem_kernels.py", npes, timeout=300, env=env), npes)
