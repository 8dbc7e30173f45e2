"""pyshmem.cuda compiles CUDA C++ using the device API to GPU code, with no GPU."""

import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("cuda.core", reason="cuda-core is not installed (pip install 'pyshmem[cuda]')")

import pyshmem  # noqa: E402
import pyshmem.cuda as pcuda  # noqa: E402



@pytest.fixture(autouse=True)
def _fresh_compile_cache(tmp_path, monkeypatch):
    """Each test compiles for real (compile() caches by content per user)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))


# The MoE dispatch pattern: every block sends one PE's share of tokens with a
# block-cooperative put, then signals the receiver.
ALLTOALL = r"""
#include <pyshmem/device.cuh>
extern "C" __global__ void dispatch(float* recv, const float* send, uint64_t* arrived, int per_pe) {
  const int me = pyshmem::my_pe(), n = pyshmem::n_pes();
  for (int pe = blockIdx.x; pe < n; pe += gridDim.x)
    pyshmem::put_signal_nbi_block(recv + me * per_pe, send + pe * per_pe, per_pe, arrived, 1,
                                  PYSHMEM_SIGNAL_ADD, pe);
  if (blockIdx.x == 0 && threadIdx.x == 0) pyshmem::signal_wait_until(arrived, PYSHMEM_CMP_GE, uint64_t(n));
}
"""


@pytest.mark.parametrize("output", ["cubin", "ptx", "ltoir"])
def test_device_api_kernel_compiles_for_sm90(output):
    """All three outputs need no GPU driver (this machine has none; PTX used to fail in
    cuda.core's check of the driver's version)."""
    obj = pcuda.compile(ALLTOALL, arch="sm_90", output=output)
    assert len(obj.code) > 1000
    if output == "ptx":
        text = bytes(obj.code).decode()
        assert ".target sm_90" in text and ".entry dispatch(" in text, text[:400]


def test_compile_errors_carry_the_compiler_log():
    with pytest.raises(pyshmem.InvalidArgumentError, match=r"(?s)does not compile for sm_90.*error"):
        pcuda.compile("#include <pyshmem/device.cuh>\n__global__ void k() { pyshmem::no_such_call(); }")


@pytest.mark.parametrize("kwargs, error, match", [
    ({"output": "exe"}, pyshmem.InvalidArgumentError, "output must be one of"),
    ({"arch": "hopper"}, pyshmem.InvalidArgumentError, "arch must look like"),
    ({"arch": "sm_1"}, pyshmem.InvalidArgumentError, r"NVRTC .* does not support sm_1; pass one of .*sm_90"),
    ({"output": "ptx", "arch": "sm_9999"}, pyshmem.InvalidArgumentError, r"does not support sm_9999"),
    ({"source": None}, pyshmem.ShmemTypeError, "source must be a string of CUDA C\\+\\+, not NoneType"),
    ({"source": b"x"}, pyshmem.ShmemTypeError, "source must be a string of CUDA C\\+\\+, not bytes"),
    ({"name": 5}, pyshmem.ShmemTypeError, "name must be a string, not int"),
    ({"options": "/usr/include"}, pyshmem.ShmemTypeError, r"options must be a list of include directories"),
    ({"options": [3]}, pyshmem.ShmemTypeError, r"options\[0\] must be a directory name .*not int"),
])
def test_bad_arguments(kwargs, error, match):
    kwargs = {"source": ALLTOALL, **kwargs}
    with pytest.raises(error, match=r"^pyshmem\.cuda\.compile( on PE \d+)?: .*" + match):
        pcuda.compile(kwargs.pop("source"), **kwargs)


def test_a_missing_cuda_library_is_a_pyshmem_error(monkeypatch):
    """NVRTC (or, for a caller's own use of the code, the driver) missing: a ShmemError
    that names the library and the fix, not cuda-pathfinder's DynamicLibNotFoundError."""
    import cuda.core
    from cuda.pathfinder import DynamicLibNotFoundError

    def missing(*args, **kwargs):
        raise DynamicLibNotFoundError('"nvrtc" not found: no libnvrtc.so.13')

    monkeypatch.setattr(cuda.core, "Program", missing)
    with pytest.raises(pyshmem.ShmemOSError, match=r"(?s)^pyshmem\.cuda\.compile( on PE \d+)?: "
                                                    r"cannot load a CUDA library.*"
                                                    r"libnvrtc\.so\.13.*pip install nvidia-cuda-nvrtc"):
        pcuda.compile(ALLTOALL, output="cubin")


def test_info_prints_include_flags():
    out = subprocess.run([sys.executable, "-m", "pyshmem", "info", "--includes"], capture_output=True, text=True,
                         timeout=60, cwd=str(REPO))
    assert out.returncode == 0, out.stderr
    flags = out.stdout.split()
    assert all(f.startswith("-I") for f in flags) and len(flags) == 2
    assert flags[0].endswith("include") and flags[1].endswith("cccl")


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_host_atomics_kernel_compiles(arch):
    """pyshmem/kernels/host_amo.cu (host-API atomics on GPU arrays) builds with NVRTC."""
    src = (REPO / "pyshmem" / "kernels" / "host_amo.cu").read_text()
    code = pcuda.compile(src, arch=arch, output="cubin", name="host_amo")
    assert len(code.code) > 1000


@pytest.mark.parametrize("reduction", [None, ("xor", "int8"), ("max", "float32"), ("prod", "complex128"),
                                       ("sum", "uint64")], ids=["base", "xor-int8", "max-f32", "prod-c128", "sum-u64"])
def test_stream_collective_kernels_compile(reduction):
    """pyshmem/kernels/coll.cu (collectives with stream=) builds with NVRTC for sm_90: the
    sync/broadcast/collect/fcollect/alltoall(s) kernels, and reductions as the GPU path instantiates
    them one (op, type) at a time (a sample: each element kind, and complex)."""
    from pyshmem import _gpu_coll

    cubin = bytes(pcuda.compile(_gpu_coll.source(reduction), arch="sm_90", output="cubin", name="coll").code)
    names = (["pyshmem_coll_sync", "pyshmem_coll_broadcast", "pyshmem_coll_collect", "pyshmem_coll_fcollect",
              "pyshmem_coll_alltoall", "pyshmem_coll_alltoalls"]
             if reduction is None else [f"pyshmem_coll_{reduction[0]}_reduce_{reduction[1]}"])
    for name in names:
        assert name.encode() + b"\0" in cubin, name


def test_perftest_kernels_compile():
    """pyshmem/perftest/kernels.cu (perftest --api device, compare's device figures and the
    GPU section) builds with NVRTC for sm_90 with every kernel the Python side launches."""
    source = (REPO / "pyshmem" / "perftest" / "kernels.cu").read_text()
    source += "PT_REDUCE(prod_reduce, complex64, cuda::std::complex<float>)\n"  # as device.py instantiates them
    cubin = bytes(pcuda.compile(source, arch="sm_90", output="cubin", name="perftest").code)
    for name in ("pt_latency", "pt_bandwidth", "pt_ping_pong", "pt_collective", "pt_atomic", "pt_signal_ping_pong",
                 "pt_compare", "pt_copy", "pt_reduce_prod_reduce_complex64"):
        assert name.encode() + b"\0" in cubin, name


def test_compiled_code_is_cached_by_content(tmp_path, monkeypatch):
    """A second compile of the same inputs is read from the per-user cache (the PEs of a
    job compile a module once); a changed header under an include directory, a changed
    source or another output compile anew."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    inc = tmp_path / "inc"
    inc.mkdir()
    (inc / "value.h").write_text("#define VALUE 1\n")
    src = '#include "value.h"\nextern "C" __global__ void k(int* x) { *x = VALUE; }\n'
    cache = tmp_path / "cache" / "pyshmem" / "nvrtc"
    first = pcuda.compile(src, output="ptx", options=[inc])
    assert len(list(cache.glob("*.ptx"))) == 1
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    entry = next(cache.glob("*.ptx"))
    entry.write_bytes(bytes(first.code).replace(b".entry k(", b".entry k_from_cache("))
    again = pcuda.compile(src, output="ptx", options=[inc])
    assert b".entry k_from_cache(" in bytes(again.code), "the second compile did not come from the cache"
    (inc / "value.h").write_text("#define VALUE 2\n")
    changed = pcuda.compile(src, output="ptx", options=[inc])
    assert b"k_from_cache" not in bytes(changed.code) and b"mov.u32 \t%r1, 2;" in bytes(changed.code).replace(
        b"mov.b32", b"mov.u32"), bytes(changed.code)[-600:]
    pcuda.compile(src + "\n// another source\n", output="ptx", options=[inc])
    assert len(list(cache.glob("*.ptx"))) == 3
