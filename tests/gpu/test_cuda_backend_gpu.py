"""The cuda backend on a real GPU, several PEs under the launcher (tests/gpu: skipped
without a GPU; scripts/gpu_check.sh runs it)."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from harness import gpu_available  # noqa: E402
from conftest import assert_ok, run_pes  # noqa: E402

AVAILABLE, WHY = gpu_available()
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=f"needs a GPU: {WHY}")


@pytest.mark.parametrize("npes", [1, 2, 4])
def test_gpu_ring_and_all_to_all(npes):
    proc = run_pes(HERE / "programs" / "gpu_ring.py", npes, timeout=180,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M"})
    assert_ok(proc, npes)


@pytest.mark.parametrize("npes", [2, 3])
def test_gpu_kernels_reach_other_nodes_through_the_proxy(npes):
    """The same kernels with every peer "on another node" (PYSHMEM_REMOTE_ONLY=1): GPU
    kernels push requests to the pinned proxy ring, the proxy thread executes them with
    UCX on the registered GPU heaps; fetched values come back through result cells."""
    from conftest import ucx_unavailable

    why = ucx_unavailable()
    if why:
        pytest.skip(why)
    proc = run_pes(HERE / "programs" / "gpu_ring.py", npes, timeout=240,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M", "PYSHMEM_REMOTE_ONLY": "1"})
    assert_ok(proc, npes)


@pytest.mark.parametrize("npes", [1, 2])
def test_numba_ring_example_on_the_gpu(npes):
    """examples/numba_ring.py as real Numba kernels: device.linkable() links the device
    library and its setup callback uploads each PE's state."""
    proc = run_pes(HERE.parent.parent / "examples" / "numba_ring.py", npes, timeout=240,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M", "NUMBA_ENABLE_CUDASIM": "0"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"around {npes} PEs from Numba kernels (GPU): OK" in proc.stdout, proc.stdout


@pytest.mark.parametrize("npes", [1, 2, 4])
def test_stream_collectives_on_the_gpu(npes):
    """broadcast/fcollect/alltoall/reductions/sync on GPU arrays, on a stream and not,
    over the world and split teams (pyshmem/kernels/coll.cu)."""
    proc = run_pes(HERE / "programs" / "gpu_coll.py", npes, timeout=240,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M"})
    assert_ok(proc, npes)


@pytest.mark.parametrize("npes", [2, 4])
def test_tp_allreduce_example_on_the_gpu(npes):
    proc = run_pes(HERE.parent.parent / "examples" / "tp_allreduce.py", npes, "--rows", "64", "--hidden", "256",
                   "--out", "128", timeout=240, env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "device API (GPU): sum_reduce_block in a kernel" in proc.stdout, proc.stdout


def test_timeout_stops_a_gpu_kernel_that_waits_forever():
    """PYSHMEM_TIMEOUT bounds device-API waits on the GPU too: the waiting thread prints
    its call, PE and condition, then traps, and the launch raises instead of hanging."""
    proc = run_pes(HERE / "programs" / "gpu_hang.py", 1, timeout=120,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M", "PYSHMEM_TIMEOUT": "2"})
    out = proc.stdout + proc.stderr
    assert "TRAPPED" in out and "NOT TRAPPED" not in out, out
    assert "pyshmem::signal_wait_until on PE 0 (block 0, thread 0): waited" in out, out
    assert "longer than PYSHMEM_TIMEOUT" in out and "condition cmp" in out, out


@pytest.mark.parametrize("npes", [1, 2])
def test_host_calls_do_not_queue_behind_user_kernels(npes):
    """A kernel on the legacy stream spins until a host atomic arrives: pyshmem's host
    calls on GPU arrays run on its private stream, so they complete (item 5 of issue 16)."""
    proc = run_pes(HERE / "programs" / "gpu_streams.py", npes, timeout=120,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M"})
    assert_ok(proc, npes)


def test_the_cpu_kernel_suite_gives_the_gpu_results():
    """tests/kernels/warp_suite.cu on the GPU and on the CPU build: equal outputs."""
    proc = run_pes(HERE / "programs" / "kernel_suite_compare.py", 1, timeout=240,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M"})
    assert_ok(proc, 1)


@pytest.mark.parametrize("npes", [2, 4])
def test_nvshmem_style_kernels_on_the_gpu(npes):
    """The NVSHMEM-style kernels of tests/kernels/nvshmem_style.cu (nvshmem_* names, the
    generated <nvshmem.h>) on GPU arrays, checked like on the CPU build."""
    proc = run_pes(HERE.parent / "pe" / "programs" / "nvshmem_kernels.py", npes, "gpu", timeout=240,
                   env={"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "64M"})
    assert_ok(proc, npes)
