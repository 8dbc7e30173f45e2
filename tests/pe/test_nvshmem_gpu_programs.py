"""Whole NVSHMEM programs built for the GPU (``pyshmem-nvcc --gpu``: nvcc, sm_90,
-rdc=true, NVSHMEM's host API on pyshmem's GPU heap, pyshmem/nvshmem_host_gpu.h).

With no GPU here these check what can be checked without one: every test program,
example and benchmark compiles and links; a program built so ends cleanly with the
reason when there is no GPU, and with the fake CUDA driver gets through pyshmem's GPU heap
to the CUDA runtime's first call; host code calls NVSHMEM's RMA, atomics, waits and
collectives (their host forms), also from a .cpp the host compiler builds, and a
device-only function (a _block variant) fails to compile naming it; several sources
share one device state; the command lines.
tests/gpu/test_nvshmem_programs_gpu.py runs the same programs on a GPU."""

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import REPO, cpu_kernel_toolchain_missing, run_pes
from test_nvshmem_programs import PROGRAMS, nvcc_cpu as nvcc

# Every NVSHMEM-style source of the repository: (name, source).
# Not here: mpi_comm_init.cu needs MPI's flags (test_nvshmem_compat.py builds it with
# them), and cuda_compat.cu checks the CPU build's own CUDA subset (what its NVML and
# driver answer for the CPU "device"; on a GPU NVIDIA's answer).
CPU_ONLY = {"mpi_comm_init", "cuda_compat"}
MODULES = {"module_kernels"}
SOURCES = [(p.stem, p) for p in sorted(PROGRAMS.glob("*.cu")) if p.stem not in CPU_ONLY] + [
    ("alltoall", REPO / "examples" / "nvshmem" / "alltoall.cu"),
    ("nvshmem_put_perf", REPO / "benchmarks" / "nvshmem_put_perf.cu")]


def _nvcc_missing():
    from pyshmem.nvcc import find_nvcc

    return None if find_nvcc() else "needs nvcc (the CUDA toolkit)"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    reason = _nvcc_missing() or cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("nvshmem_gpu_programs")
    # Programs that call the driver API link libcuda; without NVIDIA's driver here, a
    # stand-in made from <cuda.h> (scripts/nvshmem_suite.py's, as the toolkit's stubs).
    sys.path.insert(0, str(REPO / "scripts"))
    from nvshmem_suite import driver_stub

    stub = driver_stub(out)
    driver = ([f"-L{stub}"] if stub else []) + ["-lcuda"]

    def build(job):
        name, source = job
        if name in MODULES:  # kernels only, for cuModuleLoad (module_host.cu loads them)
            return name, nvcc("--gpu", "-cubin", source, "-o", out / name, "-arch=sm_90", "-O2")
        return name, nvcc("--gpu", source, "-o", out / name, "-arch=sm_90", "-O2", *driver)

    with ThreadPoolExecutor(max_workers=2) as pool:  # one nvcc per core
        results = dict(pool.map(build, SOURCES))
    return out, results


@pytest.mark.parametrize("name", [name for name, _ in SOURCES])
def test_program_compiles_and_links_for_sm_90(built, name):
    out, results = built
    proc = results[name]
    assert proc.returncode == 0, f"pyshmem-nvcc --gpu failed for {name}:\n{proc.stdout}{proc.stderr}"
    assert (out / name).is_file() and (name in MODULES or os.access(out / name, os.X_OK))
    assert "warning" not in proc.stderr, proc.stderr


def _no_gpu_here():
    from pyshmem.nvcc import gpu_present

    if gpu_present():
        pytest.skip("a GPU is present: tests/gpu runs the programs")


def test_without_a_gpu_the_program_ends_with_the_reason(built):
    _no_gpu_here()
    out, _ = built
    proc = run_pes(out / "ring_bcast", 2, timeout=60, env={"PYSHMEM_CUDA_DRIVER": "libcuda-none.so.1"})
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text
    assert "nvshmem_init failed" in text and "cannot load the CUDA driver 'libcuda-none.so.1'" in text, text
    assert "build it with pyshmem-nvcc --cpu" in text, text
    assert "Segmentation" not in text and "core dumped" not in text


def test_with_the_fake_driver_init_reaches_the_cuda_runtime(built, fake_driver):
    """pyshmem starts its GPU heap (the fake driver's) and hands nvshmem_init the device and
    the state; the CUDA runtime, which needs a real driver, then fails its first call, and
    nvshmem_init says so and ends the job."""
    _no_gpu_here()
    out, _ = built
    proc = run_pes(out / "ring_bcast", 2, timeout=60,
                   env={"PYSHMEM_CUDA_DRIVER": fake_driver, "PYSHMEM_CUDA_SYMMETRIC_SIZE": "8M"})
    text = proc.stdout + proc.stderr
    assert proc.returncode == 1, text
    assert "nvshmem_init: copying the device state to the program's GPU code failed" in text, text
    assert "cudaErrorInsufficientDriver" in text or "cudaErrorNoDevice" in text, text


@pytest.fixture(scope="module")
def c_api_program(tmp_path_factory):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("c_api_gpu") / "capi"
    proc = nvcc("--cpu", REPO / "tests" / "pe" / "programs" / "c_api_gpu_heap.cpp", "-o", out)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.mark.parametrize("mode", ["cuda", "cpu"])
def test_gpu_heap_c_api_under_the_launcher(fake_driver, c_api_program, mode):
    """pyshmem/pyshmem_gpu.h, what nvshmem_init/malloc/free call in a GPU program: symmetric
    offsets, alignment, zero-size objects, reuse after free, and its errors (before init,
    bad alignment, heap exhausted, double free; every call with the cpu backend)."""
    env = {"PYSHMEM_BACKEND": mode, "PYSHMEM_CUDA_DRIVER": fake_driver, "PYSHMEM_CUDA_SYMMETRIC_SIZE": "8M"}
    proc = run_pes(c_api_program, 2, *(["cpu"] if mode == "cpu" else []), timeout=60, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for pe in range(2):
        assert f"PE {pe} of 2: GPU heap C API OK" in proc.stdout


def test_host_code_calling_a_device_only_function_fails_to_compile(tmp_path):
    """A block-cooperative variant has no meaning in host code: the build fails naming
    the call (never a run-time write to the wrong memory)."""
    reason = _nvcc_missing()
    if reason:
        pytest.skip(reason)
    src = tmp_path / "hostput.cu"
    src.write_text("#include <nvshmem.h>\nint main() {\n  nvshmem_init();\n"
                   "  int* x = static_cast<int*>(nvshmem_malloc(4));\n  nvshmemx_int_put_block(x, x, 1, 0);\n"
                   "  nvshmem_finalize();\n}\n")
    proc = nvcc("--gpu", src, "-o", tmp_path / "hostput")
    assert proc.returncode != 0
    assert 'calling a __device__ function("nvshmemx_int_put_block' in proc.stderr, proc.stderr
    assert "hostput.cu(5)" in proc.stderr, proc.stderr


def _undefined(obj):
    return subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True).stdout


def test_host_calls_compile_to_the_gpu_heap_host_forms(tmp_path):
    """nvshmem_int_p, an atomic, a wait and a reduction from host code: copies through
    pyshmem_gpu_put, a kernel for the atomic (after pyshmem_gpu_atomics_check), a poll
    (pyshmem_gpu_wait_until) and a kernel for the reduction."""
    reason = _nvcc_missing()
    if reason:
        pytest.skip(reason)
    src = tmp_path / "hostcalls.cu"
    src.write_text("#include <nvshmem.h>\nint main() {\n  nvshmem_init();\n"
                   "  int* x = static_cast<int*>(nvshmem_calloc(2, sizeof(int)));\n"
                   "  nvshmem_int_p(x, 1, 0);\n  int old = nvshmem_int_atomic_fetch_add(x, 1, 0);\n"
                   "  nvshmem_int_wait_until(x, NVSHMEM_CMP_GE, 2);\n"
                   "  nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, x + 1, x, 1);\n"
                   "  nvshmem_free(x);\n  nvshmem_finalize();\n  return old;\n}\n")
    proc = nvcc("--gpu", "-c", src, "-o", tmp_path / "hostcalls.o", "-arch=sm_90")
    assert proc.returncode == 0, proc.stderr
    undefined = _undefined(tmp_path / "hostcalls.o")
    for symbol in ("pyshmem_gpu_put", "pyshmem_gpu_atomics_check", "pyshmem_gpu_wait_until", "cudaStreamSynchronize"):
        assert symbol in undefined, undefined


def test_a_host_only_source_calls_nvshmem_and_links(tmp_path):
    """A .cpp (nvcc hands it to the host compiler, no device code) that includes
    <nvshmem.h> and calls the host API, the _on_stream forms, host RMA, an atomic and a
    reduction, linked with a .cu holding a kernel: the link step defines what the .cpp
    uses (NVIDIA's host perftest is written so)."""
    reason = _nvcc_missing()
    if reason:
        pytest.skip(reason)
    (tmp_path / "host_side.cpp").write_text(
        "#include <nvshmem.h>\n#include <nvshmemx.h>\nint host_side(cudaStream_t s) {\n"
        "  int me = nvshmem_my_pe(), npes = nvshmem_n_pes();\n"
        "  int* buf = static_cast<int*>(nvshmem_malloc(64 * sizeof(int)));\n  int local[64] = {0};\n"
        "  nvshmem_int_put(buf, local, 64, (me + 1) % npes);\n"
        "  nvshmemx_int_put_on_stream(buf, buf, 8, (me + 1) % npes, s);\n  nvshmemx_quiet_on_stream(s);\n"
        "  nvshmemx_barrier_all_on_stream(s);\n  nvshmem_int_sum_reduce(NVSHMEM_TEAM_WORLD, buf, buf + 8, 8);\n"
        "  long long x = nvshmem_longlong_atomic_fetch_add(reinterpret_cast<long long*>(buf), 1, 0);\n"
        "  nvshmem_barrier_all();\n  nvshmem_free(buf);\n  return static_cast<int>(x);\n}\n")
    (tmp_path / "main.cu").write_text(
        "#include <nvshmem.h>\nint host_side(cudaStream_t s);\n"
        "__global__ void k(int* p) { nvshmem_int_p(p, 1, 0); }\n"
        "int main() {\n  nvshmem_init();\n  int r = host_side(0);\n"
        "  int* p = static_cast<int*>(nvshmem_malloc(4));\n  k<<<1, 1>>>(p);\n  cudaDeviceSynchronize();\n"
        "  nvshmem_free(p);\n  nvshmem_finalize();\n  return r;\n}\n")
    proc = nvcc("--gpu", "main.cu", "host_side.cpp", "-o", "prog", "-arch=sm_90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "prog").is_file()
    # Compiled on its own, the .cpp declares what it calls and defines none of it.
    proc = nvcc("--gpu", "-c", "host_side.cpp", "-o", "host_side.o", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    undefined = subprocess.run(["nm", "-C", "-u", str(tmp_path / "host_side.o")], capture_output=True, text=True).stdout
    for name in ("nvshmem_int_put(", "nvshmemx_int_put_on_stream<0>(", "nvshmem_int_sum_reduce(",
                 "nvshmem_longlong_atomic_fetch_add(", "nvshmem_my_pe("):
        assert name in undefined, undefined


def test_two_sources_share_one_device_state(tmp_path):
    """Kernels in two .cu files that both include <nvshmem.h> link into one program, built
    as a Makefile would (-dc of each, then the link; one command gives the same nvcc
    lines, checked with --show): every source only declares pyshmem_d_state
    (-DPYSHMEM_DEVICE_STATE_EXTERN) and the link step compiles its one definition."""
    reason = _nvcc_missing()
    if reason:
        pytest.skip(reason)
    (tmp_path / "a.cu").write_text(
        "#include <nvshmem.h>\n__global__ void from_b(int* x);\n"
        "__global__ void from_a(int* x) { nvshmem_int_p(x, 1, (nvshmem_my_pe() + 1) % nvshmem_n_pes()); }\n"
        "int main() {\n  nvshmem_init();\n  int* x = static_cast<int*>(nvshmem_malloc(sizeof(int)));\n"
        "  from_a<<<1, 1>>>(x);\n  from_b<<<1, 1>>>(x);\n  nvshmemx_barrier_all_on_stream(0);\n"
        "  cudaDeviceSynchronize();\n  nvshmem_free(x);\n  nvshmem_finalize();\n}\n")
    (tmp_path / "b.cu").write_text("#include <nvshmem.h>\n__global__ void from_b(int* x) { nvshmem_quiet(); }\n")
    for name in ("a", "b"):
        proc = nvcc("--gpu", "-dc", f"{name}.cu", "-o", f"{name}.o", "-arch=sm_90", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    proc = nvcc("--gpu", "a.o", "b.o", "-o", "ab", "-arch=sm_90", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "ab").is_file()
    show = nvcc("--gpu", "--show", "a.cu", "b.cu", "-o", "ab", cwd=tmp_path).stdout.splitlines()
    assert all("-DPYSHMEM_DEVICE_STATE_EXTERN" in line for line in show[:2])
    assert "pyshmem_device_state.cu" in show[3] and "-DPYSHMEM_DEVICE_STATE_EXTERN" not in show[3]


def test_gpu_command_lines(tmp_path):
    reason = _nvcc_missing()
    if reason:
        pytest.skip(reason)
    proc = nvcc("--gpu", "--show", PROGRAMS / "ring_bcast.cu", "-o", tmp_path / "x", "-arch=sm_90", "-O3", "-DFOO=1",
                "-Wall", "-Xcompiler", "-fopenmp", "-Xlinker", "-rpath,/opt/x", "-lnvshmem_host", "-lnvshmem_device",
                "-lm", "-rdc=false", "-lineinfo")
    assert proc.returncode == 0, proc.stderr
    compile_line, write_line, state_line, link_line = proc.stdout.strip().splitlines()
    assert write_line.startswith("# pyshmem-nvcc: write ") and "the NVSHMEM host functions the objects use" in write_line
    assert "pyshmem_device_state.cu" in state_line and " -arch=sm_90 " in state_line
    for flag in ("-arch=sm_90", "-O3", "-DFOO=1", "-rdc=true", "-DPYSHMEM_GPU_PROGRAM=1", "-lineinfo", "-std=c++17"):
        assert f" {flag} " in compile_line, compile_line
    assert " -Xcompiler -Wall,-fopenmp " in compile_line and "-rdc=false" not in compile_line
    for flag in ("-arch=sm_90", "-rdc=true", "-lm", "-lpyshmem_core", "-Xlinker -rpath", "-Xcompiler -fopenmp"):
        assert f" {flag} " in link_line, link_line
    assert "nvshmem_host" not in link_line and "nvshmem_device" not in link_line  # pyshmem replaces NVSHMEM
    assert not (tmp_path / "x").exists()
    only = nvcc("--gpu", "--show", "-dc", PROGRAMS / "ring_bcast.cu", "-o", tmp_path / "x.o").stdout.strip()
    assert len(only.splitlines()) == 1 and " -c " in only  # -dc: compile only (relocatable)
    # -x cu names the sources' language: on the link line nvcc would read the objects as CUDA.
    lines = nvcc("--gpu", "--show", "-x", "cu", REPO / "tests" / "pe" / "programs" / "c_api_gpu_heap.cpp", "-o",
                 tmp_path / "y").stdout.strip().splitlines()
    assert " -x cu " in lines[0] and " -x " not in lines[-1], lines


def test_gpu_target_without_nvcc_is_a_usage_error(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(REPO), NVCC="/nonexistent/nvcc", PATH="/usr/bin:/bin", CUDA_HOME="/nonexistent")
    code = ("import sys, pyshmem.nvcc as n; n.find_nvcc = lambda: None; "
            "sys.exit(n.main(['--gpu', sys.argv[1], '-o', sys.argv[2]]))")
    proc = subprocess.run([sys.executable, "-c", code, str(PROGRAMS / "ring_bcast.cu"), str(tmp_path / "x")],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 2
    assert "--gpu: nvcc not found" in proc.stderr and "--cpu" in proc.stderr
