"""Whole NVSHMEM programs (host main() and kernels, tests/nvshmem_programs/*.cu) built with
``pyshmem-nvcc --cpu`` and run under shmemrun on 2 and 4 PEs; every program checks its
own results and prints "PE k of n: ... OK"."""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import pyshmem

from conftest import REPO, cpu_kernel_toolchain_missing, run_pes

PROGRAMS = REPO / "tests" / "nvshmem_programs"
RUNNABLE = ["ring_bcast", "ring_reduce", "collective_launch", "moe_shuffle", "half_reduce", "wait_sets",
            "maxloc_reduce"]
# Also built by the fixture (all at once, one compiler per core): (name, source, extra flags).
OTHERS = [("errors", "errors.cu", ()), ("ring_nofence", "ring_bcast.cu", ("-DRING_WITHOUT_FENCE",)),
          ("alltoall", REPO / "examples" / "nvshmem" / "alltoall.cu", ())]  # the docs' worked example


def nvcc_cpu(*args, cwd=None):
    """Runs pyshmem-nvcc (as python -m pyshmem.nvcc) and returns the CompletedProcess."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pyshmem.nvcc", *map(str, args)], capture_output=True, text=True,
                          timeout=600, env=env, cwd=cwd)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("nvshmem_programs")

    def build(job):
        name, source, extra = job
        return name, nvcc_cpu("--cpu", PROGRAMS / source,  # (an absolute path stays as it is)
                              "-o", out / name, "-arch=sm_90", "-rdc=true", "-O2", *extra)

    jobs = [(name, f"{name}.cu", ()) for name in RUNNABLE] + OTHERS
    with ThreadPoolExecutor(max_workers=2) as pool:  # one compiler per core
        for name, proc in pool.map(build, jobs):
            assert proc.returncode == 0, f"pyshmem-nvcc failed for {name}:\n{proc.stdout}{proc.stderr}"
    return {job[0]: out / job[0] for job in jobs}


@pytest.mark.parametrize("npes", [2, 4])
@pytest.mark.parametrize("name", RUNNABLE + ["alltoall"])
def test_program_runs_and_checks_its_results(built, name, npes):
    proc = run_pes(built[name], npes, timeout=180)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for pe in range(npes):
        assert re.search(rf"PE {pe} of {npes}: .*OK$", proc.stdout, re.M), out
    assert "FAILED" not in out


def test_ring_without_its_fence_fails_under_the_ordering_check(built, tmp_path):
    # The same program with and without nvshmem_fence between the data put and the
    # signal: with it, every seed passes; without, the ordering check delivers the signal
    # first for some seed and the next PE forwards stale data (the program says FAILED).
    seeds = range(1, 9)
    for seed in seeds[:3]:
        proc = run_pes(built["ring_bcast"], 3, timeout=120,
                       env={"PYSHMEM_ORDER_CHECK": "1", "PYSHMEM_ORDER_CHECK_SEED": str(seed)})
        assert proc.returncode == 0, proc.stdout + proc.stderr
    failed = []
    for seed in seeds:
        proc = run_pes(built["ring_nofence"], 3, timeout=120,
                       env={"PYSHMEM_ORDER_CHECK": "1", "PYSHMEM_ORDER_CHECK_SEED": str(seed)})
        if proc.returncode != 0:
            assert "FAILED" in proc.stdout and f"PYSHMEM_ORDER_CHECK_SEED={seed} replays" in proc.stderr, proc.stderr
            failed.append(seed)
    assert failed, "removing the fence went unnoticed under every seed"


def test_exit_code_and_output_are_the_programs(tmp_path):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    src = tmp_path / "exit3.cu"
    src.write_text('#include <nvshmem.h>\n#include <cstdio>\n'
                   'int main() { nvshmem_init(); printf("hello from %d\\n", nvshmem_my_pe());\n'
                   '  nvshmem_finalize(); return nvshmem_my_pe() == 1 ? 3 : 0; }\n')
    assert nvcc_cpu("--cpu", src, "-o", tmp_path / "exit3").returncode == 0
    proc = run_pes(tmp_path / "exit3", 2, timeout=60)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "hello from 0" in proc.stdout and "hello from 1" in proc.stdout


def test_thread_levels_versions_mc_ptr_and_global_exit(tmp_path):
    # nvshmem_init_thread (a bad level refused before anything starts), query_thread,
    # the vendor version (pyshmem's), nvshmemx_mc_ptr (NULL: no multicast objects), and
    # nvshmem_global_exit from one PE ending the job, PE 0 included, with its status.
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    src = tmp_path / "levels.cu"
    src.write_text(
        "#include <nvshmem.h>\n#include <cstdio>\nint main() {\n  int provided = -1, q = -1, a, b, c;\n"
        "  if (nvshmem_init_thread(7, &provided) == 0) return 8;\n"
        "  if (nvshmem_init_thread(NVSHMEM_THREAD_FUNNELED, &provided) != 0) return 9;\n"
        "  nvshmem_query_thread(&q);\n  nvshmemx_vendor_get_version_info(&a, &b, &c);\n"
        "  void* x = nvshmem_malloc(8);\n"
        "  printf(\"PE %d: provided=%d query=%d multiple=%d mc_null=%d version=%d.%d.%d\\n\", nvshmem_my_pe(), provided, q,\n"
        "         NVSHMEM_THREAD_MULTIPLE, nvshmemx_mc_ptr(NVSHMEM_TEAM_WORLD, x) == nullptr, a, b, c);\n"
        "  fflush(stdout);\n  nvshmem_barrier_all();\n  if (nvshmem_my_pe() == 1) nvshmem_global_exit(5);\n"
        "  nvshmem_barrier_all();  // PE 0 waits here until PE 1 ends the job\n  return 0;\n}\n")
    assert nvcc_cpu("--cpu", src, "-o", tmp_path / "levels").returncode == 0
    proc = run_pes(tmp_path / "levels", 2, timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 5, out
    for pe in (0, 1):
        assert f"PE {pe}: provided=3 query=3 multiple=3 mc_null=1 version={pyshmem.__version__}" in proc.stdout, out
    assert "nvshmem_init_thread is not supported: requested must be one of NVSHMEM_THREAD_SINGLE" in proc.stderr, out


def test_errors_are_cuda_error_codes_with_messages_not_crashes(built):
    proc = run_pes(built["errors"], 2, timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert out.count(": ok\n") == 2 * 16 and "WRONG" not in out, out
    for pe in (0, 1):
        assert f"PE {pe} of 2: errors OK" in proc.stdout, out
        # The kernel's fault, named: PE, kernel, block, thread.
        assert (f"pyshmem: a kernel failed on PE {pe}: __trap() called (thread (3,0,0) of block (1,0,0) of kernel "
                "faulty)") in proc.stderr, out
    assert "pyshmem: cudaEventCreate: cudaEventInterprocess events (cudaErrorNotSupported)" in proc.stderr
    assert "kernel fine: a block of (2048,1,1) threads; at most 1024 threads" in proc.stderr


def test_a_cuda_program_without_nvshmem_and_sources_sharing_a_name(tmp_path):
    # Only <cuda_runtime.h> (nvcc includes it anyway), NULL and 0 for pointer parameters,
    # a launch by address, and two sources both named k.cu in different directories.
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "k.cu").write_text(
        "#include <cstdio>\n"
        "__global__ void k(int* out, const int* in, int n) { if (threadIdx.x == 0) out[0] = in ? in[0] : n; }\n"
        "int other();\n"
        "int main() {\n  int* d; cudaMalloc(&d, sizeof(int));\n  k<<<1, 32>>>(d, NULL, 7);\n"
        "  int h = 0; cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
        "  k<<<1, 1>>>(d, 0, h + other());\n  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
        "  printf(\"result %d\\n\", h);\n  return cudaGetLastError();\n}\n")
    (tmp_path / "b" / "k.cu").write_text(
        "__global__ void twice(int* v) { v[0] *= 2; }\n"
        "int other() {\n  int* d; cudaMalloc(&d, sizeof(int)); int h = 21;\n"
        "  cudaMemcpy(d, &h, sizeof h, cudaMemcpyHostToDevice);\n  void* args[] = {&d};\n"
        "  cudaLaunchKernel((const void*)twice, dim3(1), dim3(1), args, 0, 0);\n"
        "  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);\n  return h;\n}\n")
    proc = nvcc_cpu("--cpu", tmp_path / "a" / "k.cu", tmp_path / "b" / "k.cu", "-o", tmp_path / "prog", "-lcudart",
                    "-lcuda")
    assert proc.returncode == 0, proc.stderr
    run = subprocess.run([str(tmp_path / "prog")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout == "result 49\n", run.stdout + run.stderr


def test_flags_reach_the_step_that_needs_them(tmp_path):
    proc = nvcc_cpu("--cpu", "--show", PROGRAMS / "ring_bcast.cu", "-o", tmp_path / "x", "-Xcompiler", "-fopenmp",
                    "-Xcompiler", "-Wall -Wextra", "-Wl,-rpath,/opt/x", "-lnvshmem_host", "-lnvidia-ml", "-lm",
                    "-std=c++14")
    assert proc.returncode == 0, proc.stderr
    preprocess, rewrite, compile_line, link_line = proc.stdout.strip().splitlines()
    assert rewrite.startswith("# pyshmem-nvcc: rewrite ")
    for line in (preprocess, compile_line):  # -fopenmp defines _OPENMP: the preprocessing needs it too
        assert " -fopenmp " in line and " -Wall -Wextra " in line and "-std=c++17" in line
        assert "-Wl,-rpath,/opt/x" not in line
    assert " -fopenmp " in link_line and "-Wl,-rpath,/opt/x" in link_line and " -lm " in link_line
    assert "nvshmem_host" not in link_line and "nvidia-ml" not in link_line  # pyshmem's runtime replaces them


def test_show_prints_the_commands_without_building(tmp_path):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    proc = nvcc_cpu("--cpu", "--show", PROGRAMS / "ring_bcast.cu", "-o", tmp_path / "ring", "-DFOO=1", "-O3",
                    "-lineinfo", "-dc")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout.strip().splitlines()) == 3  # -dc: preprocess, rewrite, compile; no link
    assert "-lineinfo" not in proc.stdout  # a device-code flag, not -l ineinfo
    proc = nvcc_cpu("--cpu", "--show", PROGRAMS / "ring_bcast.cu", "-o", tmp_path / "ring", "-DFOO=1", "-O3")
    assert proc.returncode == 0, proc.stderr
    preprocess, _, compile_line, link_line = proc.stdout.strip().splitlines()
    assert "-include pyshmem/cpu_program.h" in preprocess and " -E " in preprocess and "-DFOO=1" in preprocess
    assert "prelude.h" in compile_line and "-DFOO=1" in compile_line and "-O3" in compile_line
    assert "-lpyshmem_core" in link_line and str(tmp_path / "ring") in link_line
    assert not (tmp_path / "ring").exists()


def test_unknown_option_is_a_usage_error(tmp_path):
    proc = nvcc_cpu("--cpu", "--no-such-flag", PROGRAMS / "ring_bcast.cu")
    assert proc.returncode == 2
    assert "unknown option '--no-such-flag'" in proc.stderr
