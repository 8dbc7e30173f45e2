"""The cuda backend's host side where CUDA is asynchronous: against the fake CUDA driver
in its asynchronous mode (tests/cpp/fake_cuda_driver.cpp), under the real launcher.

Each case of programs/gpu_async.py failed on the runtime before the fixes of issue 16
(copies and fills on the legacy stream that returned before the data landed, a state
upload a kernel on another stream could outrun, host calls queued behind user kernels,
launches waiting for the whole context, the caller's context replaced)."""

import pytest

from conftest import assert_ok, run_pes


def _env(driver, **extra):
    env = {"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_DRIVER": driver, "PYSHMEM_CUDA_SYMMETRIC_SIZE": "8M",
           "PYSHMEM_DEBUG": "0", "FAKE_CUDA_DELAY_US": "3000"}
    env.update(extra)
    return env


@pytest.fixture(autouse=True)
def _cuda_backend_built():
    from pyshmem._lib import lib

    if "built without the CUDA headers" in lib.gpu_probe():
        pytest.skip("pyshmem was built without the CUDA backend")


@pytest.mark.parametrize("case,npes", [("copies", 2), ("copies", 3), ("signal", 2), ("state", 1), ("legacy", 1)])
def test_host_side_completes_on_return(fake_driver, case, npes):
    proc = run_pes("gpu_async.py", npes, case, timeout=150, env=_env(fake_driver))
    assert_ok(proc, npes)


def test_cooperative_launch_goes_through_cuLaunchCooperativeKernel(fake_driver, tmp_path):
    log = tmp_path / "cuda.log"
    proc = run_pes("gpu_async.py", 1, "legacy", timeout=150, env=_env(fake_driver, FAKE_CUDA_LOG=str(log)))
    assert_ok(proc, 1)
    lines = log.read_text().splitlines()
    coop = [line for line in lines if " cuLaunchCooperativeKernel " in line]
    assert len(coop) == 1 and "function=store" in coop[0] and "rc=0" in coop[0], coop
    assert sum(" cuLaunchKernel " in line for line in lines) >= 3  # the ordinary launches stay ordinary


def test_remote_copies_complete_and_flush(fake_driver, tmp_path):
    """Every peer on "another node" (UCX): the same completion guarantees, and a get
    into GPU memory flushes GPUDirect RDMA writes before it returns."""
    from conftest import ucx_unavailable

    if ucx_unavailable():
        pytest.skip(ucx_unavailable())
    log = tmp_path / "cuda.log"
    proc = run_pes("gpu_async.py", 2, "copies", timeout=150,
                   env=_env(fake_driver, PYSHMEM_REMOTE_ONLY="1", FAKE_CUDA_LOG=str(log)))
    assert_ok(proc, 2)
    lines = log.read_text().splitlines()
    assert any(" cuFlushGPUDirectRDMAWrites" in line for line in lines), "no flush after remote gets into GPU memory"
    creates = [line for line in lines if " cuMemCreate " in line]
    assert creates and all("rdma=1" in line for line in creates), creates


@pytest.mark.parametrize("framework,requested,want", [
    ("", "", "0,1"),       # no framework context: rank on the node
    ("1", "", "1,1"),      # the framework's current device wins
    ("1", "0", "0,0"),     # PYSHMEM_CUDA_DEVICE wins; the framework's context stays current
])
def test_device_choice_and_context(fake_driver, tmp_path, framework, requested, want):
    log = tmp_path / "cuda.log"
    env = _env(fake_driver, FAKE_CUDA_DEVICES="2", WANT_DEVICE=want, FAKE_CUDA_LOG=str(log))
    if framework:
        env["FRAMEWORK_DEVICE"] = framework
    if requested:
        env["PYSHMEM_CUDA_DEVICE"] = requested
    proc = run_pes("gpu_async.py", 2, "devices", timeout=120, env=env)
    assert_ok(proc, 2)
    # Every slot of the heap is open to both GPUs of the node (peer-capable), not only
    # to the GPU of the PE that mapped it.
    access = [line for line in log.read_text().splitlines() if " cuMemSetAccess " in line]
    assert access and all("devices=0,1" in line for line in access), access

