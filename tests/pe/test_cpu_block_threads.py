"""CUDA C++ kernels on the CPU build run real thread blocks (issue 17, first part):
every CUDA thread of a block is a fiber, with __syncthreads, __syncwarp, shared memory
(static and dynamic), device-API waits that let the block's other threads run, and the
device API's _block variants cooperating across the threads. Programs in
tests/pe/programs/cpu_block_threads.py, under the launcher."""

import re

import pytest

from conftest import assert_ok, cpu_kernel_toolchain_missing, run_pes

MISSING = cpu_kernel_toolchain_missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def test_block_threads():
    """Reductions at 32/128/256/1024 threads (static and dynamic shared memory), 2-D and
    3-D blocks, __syncthreads_count/_and/_or, __syncwarp, an intra-block flag wait,
    fresh shared memory per block."""
    proc = run_pes("cpu_block_threads.py", 1, "blocks", timeout=180)
    assert_ok(proc, 1)


@pytest.mark.parametrize("npes", [2, 4])
@pytest.mark.parametrize("path", ["direct", "proxy"])
def test_put_signal_block_from_128_threads(npes, path):
    """put_signal_nbi_block called by all 128 threads of a block: the data arrives and
    the signal is added once per block, not once per thread."""
    proc = run_pes("cpu_block_threads.py", npes, "signal", timeout=180,
                   env={"PYSHMEM_PROXY_ALL": "1" if path == "proxy" else "0"})
    assert_ok(proc, npes)


def test_missed_syncthreads_is_reported():
    proc = run_pes("cpu_block_threads.py", 1, "missed", timeout=120)
    assert_ok(proc, 1)
    assert "KernelError: pyshmem.cuda.launch" in proc.stdout


def test_stack_overflow_is_reported():
    proc = run_pes("cpu_block_threads.py", 1, "overflow", timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert re.search(r"stack overflow in CPU kernel overflow, block \(\d,0,0\), thread \(5,0,0\)", out), out
    assert "PYSHMEM_CPU_KERNEL_STACK" in out and "stack_size=" in out, out
    assert "overflow not detected" not in out, out


def test_measure_block_threads(capsys):
    """A 96 x 1024 grid on each of 4 PEs at once (issue 17: it must fit this machine);
    prints the cost of __syncthreads per thread and the memory per idle thread (figures,
    not asserted)."""
    proc = run_pes("cpu_block_threads.py", 4, "measure", timeout=400)
    assert_ok(proc, 4)
    with capsys.disabled():
        for line in proc.stdout.splitlines():
            if "MEASURE" in line:
                print("\n" + line)


def test_device_api_check_fails_the_launch_not_the_process():
    proc = run_pes("cpu_kernel_trap.py", 2, timeout=120, env={"PYSHMEM_DEBUG": "1"})
    assert_ok(proc, 2)
