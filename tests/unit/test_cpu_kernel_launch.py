"""The CPU launch of CUDA C++ kernels (pyshmem.cuda on a cpu Module), one PE in the test
process: arguments beyond the registers reach the kernel, the extern __shared__
rewrite, and launch's shared_mem/stack_size checks."""

from pathlib import Path

import numpy as np
import pytest

import pyshmem
import pyshmem.cuda as pcuda
from conftest import cpu_kernel_toolchain_missing
from pyshmem._cpu_kernels import rewrite_dynamic_shared

REASON = cpu_kernel_toolchain_missing()

SOURCE = r"""
#include <pyshmem/device.cuh>
// 9 integer/pointer and 11 floating-point parameters: some go on the stack.
extern "C" __global__ void many(double* out, int a, long long b, float f0, double f1, unsigned char c, float f2,
                                double f3, short d, float f4, double f5, int e, float f6, double f7, long long g,
                                float f8, double f9, int h, float f10) {
  if (threadIdx.x != 0) return;
  const double v[] = {double(a), double(b), f0, f1, double(c), f2, f3, double(d), f4, f5,
                      double(e), f6, f7, double(g), f8, f9, double(h), f10};
  for (int i = 0; i < 18; ++i) out[i] = v[i];
}
template <class T>
__device__ T* dyn() {
  extern __shared__ __align__(16) unsigned char raw[];
  return reinterpret_cast<T*>(raw);
}
extern __shared__ int at_file_scope[];
// __constant__ and __device__ variables are one per process, shared by every block;
// cache-hinted loads and stores are plain ones.
__constant__ int k_table[4] = {3, 5, 7, 11};
__device__ unsigned long long d_counter;
extern "C" __global__ void globals(int* out, int reset) {
  if (reset) {
    if (blockIdx.x == 0 && threadIdx.x == 0) d_counter = 0;
    return;
  }
  atomicAdd(&d_counter, 1ull);
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  __stcg(&out[t], k_table[t % 4]);
  __syncthreads();
  __stwt(&out[t], __ldcg(&out[t]) + __ldg(&out[t]));
  if (threadIdx.x == 0) __stcs(&out[1024 + blockIdx.x], (int)__ldcs(&d_counter));
}
extern "C" __global__ void dynamic(int* out) {
  int* s = dyn<int>();
  s[threadIdx.x] = threadIdx.x + 1;
  __syncthreads();
  if (threadIdx.x == 0) {
    int sum = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) sum += at_file_scope[i];  // the same buffer
    out[blockIdx.x] = sum;
  }
}
"""


@pytest.fixture(scope="module")
def module():
    if REASON is not None:
        pytest.skip(str(REASON))
    return pcuda.Module(SOURCE, name="unit_cpu_kernel_launch", target="cpu")


def test_arguments_past_the_registers(module):
    out = np.zeros(18)
    args = [np.int32(-1), -(2**40), np.float32(0.5), 1.25, np.uint8(200), np.float32(-2.5), 3.75, np.int16(-300),
            np.float32(4.5), 5.25, np.int32(7), np.float32(6.5), 7.75, 2**41, np.float32(8.5), 9.25, np.int32(-9),
            np.float32(10.5)]
    pcuda.launch(module.get_kernel("many"), 1, 32, out, *args)
    assert out.tolist() == [float(a) for a in args]


def test_dynamic_shared_memory_is_per_block_and_shared_by_every_extern_name(module):
    out = np.zeros(3, np.int32)
    pcuda.launch(module.get_kernel("dynamic"), 3, 64, out, shared_mem=64 * 4)
    assert out.tolist() == [64 * 65 // 2] * 3


def test_rewrite_keeps_lines_and_drops_alignment():
    src = "a;\nextern __shared__ __align__(16)\n  float buf[];\nb;\n  extern  __shared__ volatile int x[ ];"
    out = rewrite_dynamic_shared(src)
    assert out.count("\n") == src.count("\n")
    assert "thread_local float (&buf)[] = *reinterpret_cast<float (*)[]>(::pyshmem::cpu::dynamic_shared());" in out
    assert "thread_local volatile int (&x)[]" in out and "__align__" not in out
    assert rewrite_dynamic_shared("__shared__ float s[128]; extern int y[];") == "__shared__ float s[128]; extern int y[];"


@pytest.mark.parametrize("kw", [{"shared_mem": -1}, {"shared_mem": 1.5}, {"stack_size": 100}, {"stack_size": "64K"}])
def test_bad_shared_mem_or_stack_size(module, kw):
    out = np.zeros(3, np.int32)
    with pytest.raises(pyshmem.InvalidArgumentError, match="shared_mem|stack_size"):
        pcuda.launch(module.get_kernel("dynamic"), 1, 32, out, **kw)


def test_constant_and_device_globals_are_shared_by_every_block(module):
    out = np.zeros(1024 + 8, np.int32)
    k = module.get_kernel("globals")
    pcuda.launch(k, 1, 32, out, np.int32(1))
    pcuda.launch(k, 8, 128, out, np.int32(0))
    assert out[:1024].tolist() == [[6, 10, 14, 22][t % 4] for t in range(1024)]
    # Each block's thread 0 saw at least its own block's 128 increments of the one counter.
    assert all(128 <= c <= 1024 for c in out[1024:].tolist()), out[1024:]
    pcuda.launch(k, 1, 32, out, np.int32(1))
    pcuda.launch(k, 1, 64, out, np.int32(0))
    assert out[1024] == 64  # the counter survived between launches and was reset


def test_the_source_compiles_for_sm90():
    pytest.importorskip("cuda.core", reason="cuda-core is not installed (pip install 'pyshmem[cuda]')")
    ptx = bytes(pcuda.compile(SOURCE, arch="sm_90", output="ptx", name="unit_cpu_kernel_launch").code).decode()
    for kernel in ("many", "globals", "dynamic"):
        assert f".entry {kernel}(" in ptx, kernel


def test_the_library_cache_key_ignores_the_checkout_path(tmp_path):
    """Identical headers at two paths (two clones) share one cached library; a change
    to any header, or to libcu++'s version, makes a new one."""
    import shutil

    from pyshmem import _cpu_kernels

    include, cccl = pcuda.include_paths()
    a, b = tmp_path / "a" / "include", tmp_path / "b" / "elsewhere" / "include"
    for d in (a, b):
        shutil.copytree(Path(include) / "pyshmem", d / "pyshmem")

    def key(inc, cccl_dir=cccl):
        flags = ["-O2", "-include", "pyshmem/cpu_kernel.h", f"-I{inc}/pyshmem/cpu_include", f"-I{inc}",
                 f"-I{cccl_dir}"]
        return _cpu_kernels._fingerprint("g++", flags, "src", [str(inc), str(cccl_dir)])

    assert key(a) == key(b)
    (b / "pyshmem" / "cpu_warp.h").write_text((b / "pyshmem" / "cpu_warp.h").read_text() + "\n// changed\n")
    assert key(a) != key(b)
    fake_cccl = tmp_path / "cccl"
    (fake_cccl / "cuda" / "std" / "__cccl").mkdir(parents=True)
    (fake_cccl / "cuda" / "std" / "__cccl" / "version.h").write_text("#define CCCL_VERSION 1\n")
    assert key(a, fake_cccl) != key(a)


def test_a_kernel_source_may_include_standard_headers_after_the_cuda_keywords():
    # cpu_kernel.h defines __noinline__, which libstdc++'s <memory> spells inside
    # __attribute__((...)); the header includes <memory> first so a later #include works.
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    src = ('#include <memory>\n#include <functional>\n#include <pyshmem/device.cuh>\n'
           'extern "C" __global__ void k(int* a) { auto p = std::make_shared<int>(7); a[0] = *p; }\n')
    module = pcuda.Module(src, name="unit_cpu_std_headers", target="cpu")
    a = np.zeros(1, np.int32)
    pcuda.launch(module.get_kernel("k"), 1, 1, a)
    assert a[0] == 7
