"""Builds the core without Python and runs its C/C++ tests (allocator unit test, and a
C program using only the public C API under the real launcher)."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, run_pes, assert_ok


@pytest.fixture(scope="module")
def cpp_build(tmp_path_factory):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not on PATH")
    build = tmp_path_factory.mktemp("cpp-build")
    cfg = subprocess.run(
        [cmake, str(REPO), "-DPYSHMEM_BUILD_PYTHON=OFF", "-DPYSHMEM_BUILD_TESTS=ON", "-DCMAKE_BUILD_TYPE=Release"],
        cwd=build, capture_output=True, text=True, timeout=300,
    )
    assert cfg.returncode == 0, cfg.stdout + cfg.stderr
    jobs = str(os.cpu_count() or 2)
    bld = subprocess.run([cmake, "--build", ".", "-j", jobs], cwd=build, capture_output=True, text=True, timeout=900)
    assert bld.returncode == 0, bld.stdout[-4000:] + bld.stderr[-4000:]
    return build


def test_allocator(cpp_build):
    proc = subprocess.run([str(cpp_build / "test_allocator")], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "test_allocator: OK" in proc.stdout


@pytest.mark.parametrize("npes", [1, 2, 4])
def test_c_api_program(cpp_build, npes):
    proc = run_pes(str(cpp_build / "c_api_ring"), npes, timeout=90)
    assert_ok(proc, npes)


@pytest.mark.parametrize("npes", [1, 2, 4])
def test_device_api_cpu_build(cpp_build, npes):
    """The device API compiled for the host, 4 threads per PE, under the launcher."""
    exe = cpp_build / "device_api_host"
    if not exe.exists():
        pytest.skip("libcu++ (CCCL) headers not found, so the CPU build of the device API was not built")
    proc = run_pes(str(exe), npes, timeout=90)
    assert_ok(proc, npes)


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_device_headers_compile_with_nvcc(tmp_path, arch):
    """Every device-API function, in kernels, compiles for the GPU (no GPU needed)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    proc = subprocess.run(
        [nvcc, "-std=c++17", f"-arch={arch}", "-I", str(REPO / "csrc" / "include"), "-c",
         str(REPO / "tests" / "cpp" / "device_api_kernels.cu"), "-o", str(tmp_path / "k.o")],
        capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "k.o").stat().st_size > 0


def test_device_header_compiles_as_plain_cxx17(tmp_path):
    """The same header set compiles with the host C++ compiler, warnings as errors."""
    cxx = shutil.which("g++") or shutil.which("c++")
    cccl = next((p for p in ["/usr/local/cuda/include/cccl", os.environ.get("CUDA_HOME", "") + "/include/cccl"]
                 if os.path.exists(os.path.join(p, "cuda", "atomic"))), None)
    if cxx is None or cccl is None:
        pytest.skip("no C++ compiler or no libcu++ (CCCL) headers")
    src = tmp_path / "t.cpp"
    src.write_text("#include <pyshmem/device.cuh>\nint main() { return pyshmem::Coop::thread == pyshmem::Coop::block; }\n")
    proc = subprocess.run([cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-I", str(REPO / "csrc" / "include"),
                           "-I", cccl, "-c", str(src), "-o", str(tmp_path / "t.o")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
