"""Builds the core without Python and runs its C/C++ tests (allocator unit test, and a
C program using only the public C API under the real launcher)."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, assert_ok, run_pes, ucx_unavailable


@pytest.fixture(scope="module")
def cpp_build(tmp_path_factory):
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not on PATH")
    build = tmp_path_factory.mktemp("cpp-build")
    extra = []
    try:  # the UCX transport, as the pip build has it (setup.py passes the same)
        import libucx

        extra.append(f"-DPYSHMEM_UCX_INCLUDE={os.path.dirname(libucx.__file__)}/include")
    except ImportError:
        pass
    cfg = subprocess.run(
        [cmake, str(REPO), "-DPYSHMEM_BUILD_PYTHON=OFF", "-DPYSHMEM_BUILD_TESTS=ON", "-DCMAKE_BUILD_TYPE=Release",
         *extra],
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
@pytest.mark.parametrize("path", ["shm", "ucx", "order-check"])
def test_c_api_program(cpp_build, npes, path):
    """The C API ring; with PYSHMEM_REMOTE_ONLY=1 over UCX, where putmem_nbi really is
    non-blocking until quiet; and under the ordering check."""
    if path == "ucx":
        _require_ucx()
    env = {"PYSHMEM_REMOTE_ONLY": "1" if path == "ucx" else "0"}
    if path == "order-check":
        env.update(PYSHMEM_ORDER_CHECK="1", PYSHMEM_ORDER_CHECK_SEED=str(30 + npes))
    proc = run_pes(str(cpp_build / "c_api_ring"), npes, timeout=90, env=env)
    assert_ok(proc, npes)


def _require_ucx():
    reason = ucx_unavailable()
    if reason:
        pytest.skip(reason)


def _cccl_program(cpp_build, name):
    exe = cpp_build / name
    if not exe.exists():
        pytest.skip("libcu++ (CCCL) headers not found, so the CPU build of the device API was not built")
    return exe


@pytest.mark.parametrize("npes", [1, 2, 4])
@pytest.mark.parametrize("path", ["direct", "proxy", "ucx", "order-check"])
def test_device_api_cpu_build(cpp_build, npes, path):
    """The device API compiled for the host, 4 threads per PE, under the launcher: by
    direct loads/stores, with every operation sent through the proxy FIFO and thread
    (PYSHMEM_PROXY_ALL=1) to the shared-memory transport, with every peer remote
    (PYSHMEM_REMOTE_ONLY=1): the proxy then drives UCX, the path to other nodes, and
    under the ordering check (the proxy holds the operations and applies them late)."""
    exe = _cccl_program(cpp_build, "device_api_host")
    if path == "ucx":
        _require_ucx()
    env = {"PYSHMEM_PROXY_ALL": "1" if path == "proxy" else "0", "PYSHMEM_REMOTE_ONLY": "1" if path == "ucx" else "0"}
    if path == "order-check":
        env.update(PYSHMEM_ORDER_CHECK="1", PYSHMEM_ORDER_CHECK_SEED=str(20 + npes))
    proc = run_pes(str(exe), npes, timeout=120, env=env)
    assert_ok(proc, npes)
    for line in proc.stdout.splitlines():
        if " OK pe=" not in line:
            continue
        fields = dict(f.split("=") for f in line.split("OK ", 1)[1].split())
        if path in ("proxy", "order-check") or (path == "ucx" and npes > 1):
            assert fields["proxy"] == "yes" and int(fields["slots"]) > 1000, line
        else:
            assert fields["proxy"] == "no" and fields["slots"] == "0", line


@pytest.mark.parametrize("npes", [2, 3])
@pytest.mark.parametrize("path", ["gpu-direct", "gpu-ucx"])
def test_device_api_with_the_gpu_state(cpp_build, fake_driver, npes, path, tmp_path):
    """The same device-API program playing GPU kernels (the cuda backend over the fake
    driver, whose "device memory" is host memory): objects in the GPU heap, the GPU
    device state, and for PEs on other nodes (PYSHMEM_REMOTE_ONLY=1) the proxy ring that
    GPU kernels push to, executed by the proxy through UCX with the GPU heap's keys."""
    exe = _cccl_program(cpp_build, "device_api_host")
    if path == "gpu-ucx":
        _require_ucx()
    log = tmp_path / "cuda.log"
    env = {"TEST_GPU_STATE": "1", "PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_DRIVER": fake_driver,
           "PYSHMEM_CUDA_SYMMETRIC_SIZE": "8M", "PYSHMEM_REMOTE_ONLY": "1" if path == "gpu-ucx" else "0",
           "FAKE_CUDA_LOG": str(log)}
    proc = run_pes(str(exe), npes, timeout=180, env=env)
    if "built without the CUDA headers" in proc.stdout + proc.stderr:
        pytest.skip("the core was built without the CUDA backend")
    assert_ok(proc, npes)
    for line in proc.stdout.splitlines():
        if " OK pe=" in line:
            fields = dict(f.split("=") for f in line.split("OK ", 1)[1].split())
            if path == "gpu-ucx":  # every request went through the GPU kernels' ring
                assert fields["proxy"] == "yes" and int(fields["slots"]) > 1000, line
            else:
                assert fields["proxy"] == "no", line
    if path == "gpu-ucx":
        # The proxy made the GPU context current on its own thread, and flushed the GPU's
        # RDMA writes (with that context) after the gets it ran for GPU kernels.
        calls = [line.split() for line in log.read_text().splitlines()]
        flushes = [c for c in calls if c[3] == "cuFlushGPUDirectRDMAWrites"]
        assert flushes and all(c[-1] == "rc=0" for c in flushes), flushes[:3]
        attached = {(c[0], c[1]) for c in calls if c[3] == "cuCtxSetCurrent" and c[-1] == "rc=0"}
        assert {(c[0], c[1]) for c in flushes} <= attached, "a flush from a thread that never made the context current"


@pytest.mark.parametrize("npes, env", [
    (1, {}), (2, {}), (3, {}), (4, {}),
    (3, {"PYSHMEM_PROXY_ALL": "1"}),
    (3, {"PYSHMEM_REMOTE_ONLY": "1"}),
    (3, {"TEST_GPU_STATE": "1", "PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "8M"}),
    (3, {"TEST_GPU_STATE": "1", "PYSHMEM_BACKEND": "cuda", "PYSHMEM_CUDA_SYMMETRIC_SIZE": "8M",
         "PYSHMEM_REMOTE_ONLY": "1"}),
], ids=["1pe", "2pe", "3pe", "4pe", "proxy", "ucx", "gpu-state", "gpu-state-ucx"])
def test_device_collectives_cpu_build(cpp_build, fake_driver, npes, env):
    """Device-API teams and collectives (broadcast, fcollect, alltoall, reductions, team
    sync) in the CPU build over the world, TEAM_SHARED, a strided team and a 2-D split;
    through the proxy, over UCX, and against the GPU device state (fake driver): the GPU
    copy of the team table and the GPU heap's team slots."""
    exe = _cccl_program(cpp_build, "device_coll_host")
    if env.get("PYSHMEM_REMOTE_ONLY") == "1":
        _require_ucx()
    if "TEST_GPU_STATE" in env:
        env = {**env, "PYSHMEM_CUDA_DRIVER": fake_driver}
    proc = run_pes(str(exe), npes, timeout=180, env=env)
    if "built without the CUDA headers" in proc.stdout + proc.stderr:
        pytest.skip("the core was built without the CUDA backend")
    assert_ok(proc, npes)


def test_proxy_fifo(cpp_build):
    """Multi-producer FIFO: nothing lost, duplicated, torn or reordered; bounded spins;
    fetched values handed over through the result cells."""
    proc = subprocess.run([str(_cccl_program(cpp_build, "test_proxy_fifo"))], capture_output=True, text=True,
                          timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_proxy_fifo: OK" in proc.stdout
    assert "80000 requests" in proc.stdout
    assert "result cells: 20000 fetches" in proc.stdout


def test_device_headers_compile_with_nvcc(tmp_path):
    """Every device-API function, in kernels, compiles for the GPU (no GPU needed), for
    sm_80 and sm_90 in one nvcc run (--threads 2: one device compilation per core)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    proc = subprocess.run(
        [nvcc, "-std=c++17", "-gencode", "arch=compute_80,code=sm_80", "-gencode", "arch=compute_90,code=sm_90",
         "--threads", "2", "-I", str(REPO / "csrc" / "include"), "-c",
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


@pytest.mark.parametrize("mode, env, message", [
    ("bad_pe", {"PYSHMEM_DEBUG": "1"}, "pyshmem::p on PE {pe}: PE out of range (pe=2)"),
    ("not_symmetric", {"PYSHMEM_DEBUG": "1"}, "pyshmem::putmem on PE {pe}: address is not in the symmetric heap"),
    ("proxy_reject", {"PYSHMEM_PROXY_ALL": "1"},
     "pyshmem::putmem on PE {pe}: the proxy thread failed (pe={peer}): proxy: put request: target range"),
])
def test_device_api_bad_input_traps(cpp_build, mode, env, message):
    """Bad input in device code stops the job with a message naming the call and PE:
    debug-mode checks in the caller, and the proxy's own checks behind PYSHMEM_PROXY_ALL."""
    exe = _cccl_program(cpp_build, "device_api_traps")
    proc = run_pes(str(exe), 2, mode, timeout=60, env=env, tag_output=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "REACHED" in proc.stdout and "OK pe=" not in proc.stdout, out
    assert any(message.format(pe=pe, peer=1 - pe) in proc.stderr for pe in (0, 1)), out
    assert "SIGABRT" in proc.stderr, out


def test_device_api_traps_control_run(cpp_build):
    """The same program without bad input finishes on every PE (through the proxy too)."""
    exe = _cccl_program(cpp_build, "device_api_traps")
    assert_ok(run_pes(str(exe), 2, "ok", timeout=60, env={"PYSHMEM_PROXY_ALL": "1"}), 2)


def test_ucx_gpu_atomics_rule(tmp_path):
    """Atomics on another node's GPU heap go only through UCX transports whose NIC does
    them (transport/ucx/gpu_atomics.h); the others get a message naming them."""
    cxx = shutil.which("g++") or shutil.which("c++")
    if cxx is None:
        pytest.skip("no C++ compiler")
    exe = tmp_path / "test_ucx_gpu_atomics"
    subprocess.run([cxx, "-std=c++17", "-Wall", "-I", str(REPO / "csrc"), str(REPO / "tests" / "cpp" /
                    "test_ucx_gpu_atomics.cpp"), "-o", str(exe)], check=True, timeout=120)
    proc = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "test_ucx_gpu_atomics: OK" in proc.stdout
