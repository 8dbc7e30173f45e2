"""Shared pytest fixtures: running programs on N PEs under the real launcher."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PROGRAMS = Path(__file__).resolve().parent / "pe" / "programs"


def shm_entries():
    """Names in /dev/shm (the leak check compares before/after)."""
    try:
        return set(os.listdir("/dev/shm"))
    except FileNotFoundError:
        return set()


def run_pes(program, npes, *args, timeout=120, env=None, tag_output=True, launcher_args=()):
    """Run `program` (a path, a file name in tests/pe/programs, or "-m module") on `npes`
    PEs with shmemrun.

    Returns the CompletedProcess (text mode). Never hangs: the launcher gets a --timeout
    and the subprocess a hard timeout.
    """
    path = Path(program)
    if not path.is_absolute() and not path.exists():
        path = PROGRAMS / program
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("PYSHMEM_SYMMETRIC_SIZE", "64M")
    full_env["PYTHONUNBUFFERED"] = "1"
    if env:
        full_env.update(env)
    cmd = [sys.executable, "-m", "pyshmem.run", "-n", str(npes), "--timeout", str(timeout - 10)]
    if tag_output:
        cmd.append("--tag-output")
    if str(program).startswith("-m "):
        prog = [sys.executable, "-m", str(program)[3:]]
    else:
        prog = [sys.executable, str(path)] if path.suffix == ".py" else [str(path)]
    cmd += [*launcher_args, *prog, *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=str(REPO))


def assert_ok(proc, npes, marker="OK"):
    """Asserts the job exited 0 and every PE printed `<marker> pe=<k>`."""
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"exit code {proc.returncode}\n{out}"
    for pe in range(npes):
        assert f"{marker} pe={pe}" in proc.stdout, f"PE {pe} did not report {marker}\n{out}"


def ucx_unavailable():
    """Why the UCX transport cannot be used here (the core's own report), or None."""
    from pyshmem._lib import lib

    line = next(t for t in lib.transports().splitlines() if t.startswith("ucx"))
    return None if line.startswith("ucx: available") else line


def cpu_kernel_toolchain_missing():
    """Why CUDA C++ kernels cannot be built for the CPU build here (pyshmem.cuda.Module
    needs a host C++ compiler and the libcu++ headers), or None when they can."""
    import shutil

    import pyshmem.cuda as pcuda

    try:
        pcuda.include_paths()
    except FileNotFoundError as exc:
        return str(exc)
    if not (os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")):
        return "no host C++ compiler"
    return None


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory):
    """Path of a fake CUDA driver built from tests/cpp/fake_cuda_driver.cpp and
    tests/cpp/fake_cuda/*.cpp ("device memory" is memfd-backed host memory; copies,
    memsets and launches run asynchronously on per-stream worker threads, with CUDA's
    ordering rules; fake modules only), for the cuda backend's host side."""
    import shutil
    import subprocess

    cxx = shutil.which("g++") or shutil.which("c++")
    include = next((p for p in [os.environ.get("CUDA_HOME", "") + "/include", "/usr/local/cuda/include"]
                    if os.path.exists(os.path.join(p, "cuda.h"))), None)
    if cxx is None or include is None:
        pytest.skip("needs a C++ compiler and cuda.h (the CUDA toolkit headers)")
    out = tmp_path_factory.mktemp("fakecuda") / "libfakecuda.so"
    sources = [REPO / "tests" / "cpp" / "fake_cuda_driver.cpp", *sorted((REPO / "tests" / "cpp" / "fake_cuda").glob("*.cpp"))]
    subprocess.run([cxx, "-std=c++17", "-O1", "-pthread", "-shared", "-fPIC", "-I", include,
                    "-I", str(REPO / "csrc" / "include"),
                    *map(str, sources), "-o", str(out)], check=True, timeout=300)
    return str(out)


@pytest.fixture
def pes():
    """The run_pes helper as a fixture."""
    return run_pes
