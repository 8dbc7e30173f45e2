"""pyshmem's CUDA runtime API subset on the CPU (pyshmem/cpu_cuda_runtime.h): the host
code of tests/cpp/cpu_cuda_runtime_test.cu, compiled with g++ as `pyshmem-nvcc --cpu`
compiles a CUDA program, checks error codes, memory, stream order and asynchrony, the
legacy default stream's synchronisation, events, the device count and sticky errors."""

import os
import shutil
import subprocess

import pytest

import pyshmem.cuda as pcuda
from conftest import REPO

SOURCE = REPO / "tests" / "cpp" / "cpu_cuda_runtime_test.cu"


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ is not on PATH")
    try:
        include, cccl = pcuda.include_paths()
    except FileNotFoundError as exc:
        pytest.skip(str(exc))
    exe = tmp_path_factory.mktemp("cpu-cuda-runtime") / "cpu_cuda_runtime_test"
    cmd = [gxx, "-std=c++17", "-x", "c++", "-include", "pyshmem/cpu_kernel.h",
           f"-I{include}/pyshmem/cpu_program_include", f"-I{include}/pyshmem/cpu_include", f"-I{include}", f"-I{cccl}", str(SOURCE), "-pthread", "-o", str(exe)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-6000:]
    return exe


def run(exe, expected_devices, npes=None):
    env = {k: v for k, v in os.environ.items() if k != "PYSHMEM_NPES"}
    if npes is not None:
        env["PYSHMEM_NPES"] = str(npes)
    return subprocess.run([str(exe), str(expected_devices)], capture_output=True, text=True, timeout=60, env=env)


def test_runtime_behaviour(program):
    proc = run(program, 1)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "cpu_cuda_runtime_test: OK" in proc.stdout
    assert "FAIL" not in proc.stderr
    # Messages name the call and the error, prefixed "pyshmem: ".
    assert "pyshmem: cudaFree: " in proc.stderr and "(cudaErrorInvalidValue)" in proc.stderr
    assert "pyshmem: cudaDeviceGetAttribute: device attribute 12345" in proc.stderr
    assert "pyshmem: test_call: a message for the test (cudaErrorNotPermitted)" in proc.stderr


def test_sticky_error_message_printed_once(program):
    """A failed stream item and rt::set_sticky_error print their message once, however
    many later calls return the error; a second sticky error does not replace the first."""
    proc = run(program, 1)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stderr.count("pyshmem: fake_kernel_launch: cudaErrorLaunchFailure") == 1
    assert proc.stderr.count("pyshmem: test: an illegal address in a kernel") == 1
    assert "a second fault" not in proc.stderr


@pytest.mark.parametrize("npes", [3, 1])
def test_device_count_is_node_pes(program, npes):
    """One device per PE: cudaGetDeviceCount follows PYSHMEM_NPES (set by the launcher)
    and cudaSetDevice(count) is cudaErrorInvalidDevice."""
    proc = run(program, npes, npes=npes)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"device {npes} does not exist ({npes} device(s)" in proc.stderr


def test_wrong_expectation_fails(program):
    """The program's device-count check is real: told to expect 2 devices where
    PYSHMEM_NPES gives 3, it fails."""
    proc = run(program, 2, npes=3)
    assert proc.returncode == 1
    assert "FAIL" in proc.stderr
