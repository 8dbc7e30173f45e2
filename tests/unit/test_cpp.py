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
