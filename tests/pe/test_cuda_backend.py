"""The cuda backend's host side (GPU heap over cuMem VMM, fd exchange between PEs,
copies, module loading, backend selection) under the real launcher, against a fake CUDA
driver built from tests/cpp/fake_cuda_driver.cpp ("device memory" is memfd-backed host
memory; it cannot run kernels). tests/gpu covers a real GPU."""

import subprocess
import sys

import pytest

from conftest import REPO, assert_ok, run_pes, shm_entries


def _env(driver, **extra):
    env = {"PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_DRIVER": driver, "PYSHMEM_CUDA_SYMMETRIC_SIZE": "8M",
           "PYSHMEM_DEBUG": "0"}
    env.update(extra)
    return env


def _lib_has_cuda_backend():
    from pyshmem._lib import lib

    return "built without the CUDA headers" not in lib.gpu_probe()


@pytest.mark.parametrize("npes", [1, 2, 3])
def test_gpu_heap_under_the_launcher(fake_driver, npes):
    if not _lib_has_cuda_backend():
        pytest.skip("pyshmem was built without the CUDA backend")
    before = shm_entries()
    proc = run_pes("gpu_heap_ops.py", npes, timeout=120, env=_env(fake_driver))
    assert_ok(proc, npes)
    assert shm_entries() == before


@pytest.mark.parametrize("npes", [2, 3])
def test_gpu_heap_across_nodes_through_ucx(fake_driver, npes):
    """The same program with every peer on "another node": GPU put/get (also with a
    stream, and the host API's put/get/put_nbi/get_nbi on GPU arrays) go through UCX,
    which registered each PE's GPU heap at init."""
    if not _lib_has_cuda_backend():
        pytest.skip("pyshmem was built without the CUDA backend")
    from conftest import ucx_unavailable

    why = ucx_unavailable()
    if why:
        pytest.skip(why)
    proc = run_pes("gpu_heap_ops.py", npes, timeout=120, env=_env(fake_driver, PYSHMEM_REMOTE_ONLY="1"))
    assert_ok(proc, npes)


@pytest.mark.parametrize("remote", [False, True])
def test_host_waits_on_gpu_memory(fake_driver, remote):
    """wait_until/test/signal_fetch/signal_wait_until take symmetric GPU arrays."""
    if not _lib_has_cuda_backend():
        pytest.skip("pyshmem was built without the CUDA backend")
    if remote:
        from conftest import ucx_unavailable

        if ucx_unavailable():
            pytest.skip(ucx_unavailable())
    proc = run_pes("gpu_waits.py", 2, timeout=120, env=_env(fake_driver, PYSHMEM_REMOTE_ONLY="1" if remote else "0"))
    assert_ok(proc, 2)


def _proxy_cpu(stdout):
    import re

    return {k: float(v) for k, v in re.findall(r"CPU pe=0 (\w+)=([0-9.]+)", stdout)}


def _remote_gpu_env(fake_driver, **extra):
    if not _lib_has_cuda_backend():
        pytest.skip("pyshmem was built without the CUDA backend")
    from conftest import ucx_unavailable

    if ucx_unavailable():
        pytest.skip(ucx_unavailable())
    return _env(fake_driver, PYSHMEM_REMOTE_ONLY="1", FAKE_CUDA_DELAY_US="0", **extra)


def test_the_proxy_polls_for_gpu_requests_while_watched_kernels_run(fake_driver):
    """GPU kernels cannot wake a dozing proxy: it polls (a core's worth of CPU) while a
    kernel pyshmem launched runs, or one on a stream given to pyshmem.cuda.watch_stream,
    and dozes (next to no CPU) otherwise; requests pushed on the GPU ring as a GPU kernel
    pushes them (the fake driver's proxy_p) land on the target."""
    env = _remote_gpu_env(fake_driver, PYSHMEM_PROXY_GPU_LINGER_US="0")
    proc = run_pes("gpu_proxy_watch.py", 2, "watch", timeout=120, env=env)
    assert_ok(proc, 2)
    cpu = _proxy_cpu(proc.stdout)
    assert set(cpu) == {"idle_before", "pyshmem_kernel_running", "after_it_ended", "framework_kernel_unwatched",
                        "framework_kernel_watched", "after_watched_ended"}, proc.stdout
    for polling in ("pyshmem_kernel_running", "framework_kernel_watched"):
        assert cpu[polling] > 0.2, (polling, proc.stdout)
    for dozing in ("idle_before", "after_it_ended", "framework_kernel_unwatched", "after_watched_ended"):
        assert cpu[dozing] < 0.1, (dozing, proc.stdout)
    assert proc.stdout.count("SERVED pe=0") == 2, proc.stdout


@pytest.mark.parametrize("linger,expect", [("3000000", "busy"), ("0", "idle")])
def test_the_proxy_keeps_polling_after_a_gpu_request_for_the_linger_time(fake_driver, linger, expect):
    """A GPU kernel pyshmem does not know of pushed a request: the proxy polls on for
    PYSHMEM_PROXY_GPU_LINGER_US (the program asserts the CPU of the second after)."""
    env = _remote_gpu_env(fake_driver, PYSHMEM_PROXY_GPU_LINGER_US=linger)
    proc = run_pes("gpu_proxy_watch.py", 2, "linger", expect, timeout=120, env=env)
    assert_ok(proc, 2)


def test_watch_stream_needs_a_stream_and_a_gpu_heap():
    """pyshmem.cuda.watch_stream: None is not a stream; on the cpu backend it raises."""
    import pyshmem
    import pyshmem.cuda as pc

    with pytest.raises(pyshmem.ShmemTypeError, match=r"watch_stream( on PE \d+)?: stream must be a CUDA stream"):
        pc.watch_stream(None)
    with pytest.raises(pyshmem.ShmemNotImplementedError, match=r"watch_stream( on PE \d+)?: no GPU heap"):
        pc.watch_stream(0)


def test_auto_backend_uses_the_gpu_when_every_pe_has_one(fake_driver):
    if not _lib_has_cuda_backend():
        pytest.skip("pyshmem was built without the CUDA backend")
    code = "import pyshmem; pyshmem.init(); from pyshmem._lib import lib; print('DESC', lib.gpu_describe())"
    prog = REPO / "tests" / "pe" / "programs"
    for devices, want in (("1", "DESC cuda: GPU 0"), ("0", "DESC cpu (GPU heap not used: PE 0: the CUDA driver "
                                                          "sees no GPU)")):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                              env={**_base_env(), **_env(fake_driver, PYSHMEM_BACKEND="auto",
                                                         FAKE_CUDA_DEVICES=devices)}, cwd=str(prog))
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert want in proc.stdout, proc.stdout


def test_cuda_backend_failing_driver_is_a_clear_error(fake_driver):
    if not _lib_has_cuda_backend():
        pytest.skip("pyshmem was built without the CUDA backend")
    code = "import pyshmem\ntry:\n    pyshmem.init()\nexcept OSError as e:\n    print('ERR', e)\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**_base_env(), **_env(fake_driver, FAKE_CUDA_INIT_ERROR="100")})
    assert "ERR pyshmem.init on PE 0: PYSHMEM_BACKEND=cuda but PE 0: cuInit failed" in proc.stdout, proc.stdout + proc.stderr
    assert "(CUDA error 100); use PYSHMEM_BACKEND=cpu" in proc.stdout, proc.stdout


def test_info_reports_the_driver(fake_driver):
    proc = subprocess.run([sys.executable, "-m", "pyshmem", "info"], capture_output=True, text=True, timeout=60,
                          env={**_base_env(), "PYSHMEM_CUDA_DRIVER": fake_driver, "FAKE_CUDA_DEVICES": "2"},
                          cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr
    if _lib_has_cuda_backend():
        assert ("cuda: CUDA driver 13.0, 2 GPU(s): Fake CUDA device (pyshmem tests), Fake CUDA device (pyshmem "
                "tests)") in proc.stdout, proc.stdout


def _base_env():
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSHMEM_") and not k.startswith("FAKE_CUDA")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def test_gpu_copies_release_the_gil(fake_driver):
    """put/get/nbi/iput/iget/put_signal/test/signal_fetch on GPU arrays let other Python
    threads run while the driver copies (each fake driver op sleeps up to 300 ms here)."""
    if not _lib_has_cuda_backend():
        pytest.skip("pyshmem was built without the CUDA backend")
    proc = run_pes("gpu_copies_release_gil.py", 1, timeout=300, env=_env(fake_driver, FAKE_CUDA_DELAY_US="300000"))
    assert_ok(proc, 1)
