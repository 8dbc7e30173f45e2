"""What NVIDIA's NVSHMEM programs need beyond NVSHMEM's device API, one class each, in
programs of our own (tests/nvshmem_programs/): CUDA's headers as such programs use them
(cuda_compat.cu), NVSHMEM called from host code and on streams (host_calls.cu), the
driver API's module path with a CPU cubin (module_kernels.cu, module_host.cu), a program
that refuses the PE count, a documented refusal (the tile API), and the initialisations
without shmemrun: a unique id passed between processes started by hand (uid_init.cu) and
an MPI communicator under mpirun (mpi_comm_init.cu). Built with ``pyshmem-nvcc --cpu``."""

import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import REPO, cpu_kernel_toolchain_missing, run_pes
from test_nvshmem_programs import PROGRAMS, nvcc_cpu


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    out = tmp_path_factory.mktemp("nvshmem_compat")
    jobs = [("cuda_compat", ["cuda_compat.cu"], ()), ("host_calls", ["host_calls.cu"], ()),
            ("module_host", ["module_host.cu"], ()),
            ("module_kernels.cubin", ["module_kernels.cu"], ("-cubin",)), ("uid_init", ["uid_init.cu"], ())]

    def build(job):
        name, sources, extra = job
        return name, nvcc_cpu("--cpu", *[PROGRAMS / s for s in sources], "-o", out / name, "-arch=sm_90",
                              "-rdc=true", *extra)

    with ThreadPoolExecutor(max_workers=2) as pool:  # one compiler per core
        for name, proc in pool.map(build, jobs):
            assert proc.returncode == 0, f"pyshmem-nvcc failed for {name}:\n{proc.stdout}{proc.stderr}"
    return {job[0]: out / job[0] for job in jobs}


def _all_ok(proc, npes, what):
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for pe in range(npes):
        assert re.search(rf"PE {pe} of {npes}: {what} OK$", proc.stdout, re.M), out
    return out


def test_cuda_headers_as_nvshmem_programs_use_them(built):
    # NVML, the driver API, graphs (NVSHMEM's on-stream collectives captured), kernels and
    # launches in macros and a header, a template kernel by address, query_gridsize's
    # grid resident at once, a short argument array.
    out = _all_ok(run_pes(built["cuda_compat"], 2, timeout=240), 2, "cuda compat")
    assert "args[1] is not a readable pointer (the kernel has 2 parameters" in out
    assert "kernel two_params" in out
    assert "cudaMemcpy: not allowed while a stream capture is active" in out


@pytest.mark.parametrize("npes", [2, 4])
def test_host_calls_rma_amo_waits_collectives_and_user_buffers(built, npes):
    _all_ok(run_pes(built["host_calls"], npes, timeout=240), npes, "host calls")


def test_host_calls_under_the_ordering_check(built):
    # Host RMA and signals with every put held and reordered as the rules allow: the
    # program's fences, quiets, signals and barriers are enough.
    for seed in (1, 2):
        _all_ok(run_pes(built["host_calls"], 3, timeout=240,
                        env={"PYSHMEM_ORDER_CHECK": "1", "PYSHMEM_ORDER_CHECK_SEED": str(seed)}), 3, "host calls")


def test_a_program_refusing_the_pe_count_exits_with_its_own_message(built):
    proc = run_pes(built["host_calls"], 2, "--require-npes", 3, timeout=60)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 255, out  # its own status (-1), not a launcher timeout or a crash
    assert out.count("This test requires exactly 3 processes") == 2, out
    assert "timed out" not in out and "signal" not in out, out


def test_module_loaded_with_the_driver_api(built):
    _all_ok(run_pes(built["module_host"], 2, built["module_kernels.cubin"], timeout=120), 2, "module path")


def test_module_kernel_without_cumodule_init_fails_its_launch(built):
    proc = run_pes(built["module_host"], 2, built["module_kernels.cubin"], "--no-init", timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 3, out
    assert "launch without nvshmemx_cumodule_init: failed as it must" in out
    assert "call nvshmemx_cumodule_init(module) first" in out


def test_a_cubin_holds_the_kernels_and_not_the_host_code(built):
    syms = subprocess.run(["nm", "-C", str(built["module_kernels.cubin"])], capture_output=True, text=True).stdout
    assert re.search(r" [tT] ring_put$", syms, re.M) and "ops::scale(int*, int)" in syms
    assert not re.search(r" [tT] main$", syms, re.M)


def test_the_tile_api_is_a_documented_refusal_at_compile_time(tmp_path):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    src = tmp_path / "tile.cu"
    src.write_text(
        "#include <nvshmem.h>\n#include \"device_host/nvshmem_common.cuh\"\n"
        "template <class S, class D>\n__global__ void k(S s, D d) {\n"
        "  nvshmemx::tile_sum_reduce<S, D, nvshmemx::shape<>, nvshmemx::NVLS_ONE_SHOT_PULL_NBI>(\n"
        "      NVSHMEM_TEAM_WORLD, s, d, {}, {}, 0, 0);\n}\n"
        "int main() {\n  auto layout = nvshmemx::make_layout(nvshmemx::make_shape(ConstInt<4>{}, 8),\n"
        "                                       nvshmemx::make_stride(ConstInt<1>{}, 4));\n"
        "  nvshmemx::Tensor<float, decltype(layout)> t(nullptr, layout);\n"
        "  k<<<1, 1>>>(t, t);\n  return cuda::std::get<1>(t.shape()) == 8 ? 0 : 1;\n}\n")
    proc = nvcc_cpu("--cpu", src, "-o", tmp_path / "tile")
    assert proc.returncode != 0
    assert "pyshmem does not provide NVSHMEM's tile API (NVLS multicast tile collectives" in proc.stderr, proc.stderr
    assert "tile.cu:5" in proc.stderr  # names the user's call


def _start_ranks(program, nranks, id_file, extra=None, env=None):
    """Starts `program` as nranks plain processes (no launcher): rank r gets r, nranks,
    id_file and extra.get(r)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("PYSHMEM_")}
    base.update(env or {})
    return [subprocess.Popen([str(program), str(r), str(nranks), str(id_file), *(extra or {}).get(r, [])],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=base)
            for r in range(nranks)]


def _finish(procs, timeout=120):
    out = []
    for proc in procs:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        out.append((proc.returncode, stdout, stderr))
    return out


@pytest.mark.parametrize("nranks", [2, 4])
def test_unique_id_init_of_processes_started_by_hand(built, tmp_path, nranks):
    results = _finish(_start_ranks(built["uid_init"], nranks, tmp_path / "id"))
    for rank, (rc, stdout, stderr) in enumerate(results):
        assert rc == 0, f"rank {rank}: {stdout}{stderr}"
        assert f"PE {rank} of {nranks}: uid init OK" in stdout, stdout + stderr


def test_unique_id_with_a_wrong_secret_is_refused_by_the_rendezvous(built, tmp_path):
    results = _finish(_start_ranks(built["uid_init"], 2, tmp_path / "id", extra={1: ["--tamper"]},
                                   env={"PYSHMEM_BOOTSTRAP_TIMEOUT": "5"}))
    (rc0, out0, err0), (rc1, out1, err1) = results
    assert rc1 == 1 and "rejected this PE (wrong PYSHMEM_JOB_SECRET" in err1, out1 + err1
    assert rc0 == 1 and "did not reach the rendezvous within PYSHMEM_BOOTSTRAP_TIMEOUT" in err0, out0 + err0
    assert "uid init OK" not in out0 + out1


def _mpi():
    mpicxx, mpirun = shutil.which("mpicxx"), shutil.which("mpirun")
    if not (mpicxx and mpirun):
        pytest.skip("needs MPI (mpicxx and mpirun)")
    flags = []
    for ask in ("--showme:compile", "--showme:link"):
        proc = subprocess.run([mpicxx, ask], capture_output=True, text=True)
        if proc.returncode != 0:
            pytest.skip("needs Open MPI's mpicxx --showme")
        flags += proc.stdout.split()
    return mpirun, flags


def test_mpi_comm_init_on_a_split_communicator(tmp_path):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    mpirun, flags = _mpi()
    exe = tmp_path / "mpi_comm_init"
    proc = nvcc_cpu("--cpu", PROGRAMS / "mpi_comm_init.cu", "-o", exe, *flags)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSHMEM_")}
    env["OMPI_MCA_osc"] = "^rdma"
    run = subprocess.run([mpirun, "--allow-run-as-root", "--oversubscribe", "-n", "4", str(exe)], capture_output=True,
                         text=True, timeout=180, env=env, cwd=str(REPO))
    out = run.stdout + run.stderr
    assert run.returncode == 0, out
    # Two jobs: world ranks {0, 2} and {1, 3}; each sums its own ranks.
    for world, pe, total in ((0, 0, 2), (2, 1, 2), (1, 0, 4), (3, 1, 4)):
        assert f"world {world}: PE {pe} of 2: mpi comm init OK (sum {total})" in run.stdout, out
