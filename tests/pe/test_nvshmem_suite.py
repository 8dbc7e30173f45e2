"""scripts/nvshmem_suite.py, the runner of NVIDIA's perftest and examples, on a small
source tree of the project's own laid out as NVSHMEM's (CI has no copy of NVIDIA's): it
builds what the CMake lists name and nothing else, runs each program on its PE counts
(cubin variants with NVSHMEM_TEST_CUBIN_LIBRARY=1, counted apart), lists a documented
refusal apart from failures, and ends with K/N pass and a non-zero status unless all
pass."""

import re
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, cpu_kernel_toolchain_missing

# A perftest program with no .args file: it checks a put and, when run as its cubin
# variant, fails (so the runner must count that run with the cubin variants).
PUT_CHECK = r"""
#include <nvshmem.h>
#include <cstdio>
#include <cstdlib>
#include "helper.h"
__global__ void put_next(int* x) { nvshmem_int_p(x, nvshmem_my_pe(), (nvshmem_my_pe() + 1) % nvshmem_n_pes()); }
int main() {
  nvshmem_init();
  int* x = (int*)nvshmem_malloc(sizeof(int));
  put_next<<<1, 1>>>(x);
  cudaDeviceSynchronize();
  nvshmem_barrier_all();
  int got = -1;
  cudaMemcpy(&got, x, sizeof got, cudaMemcpyDeviceToHost);
  const int want = (nvshmem_my_pe() + nvshmem_n_pes() - 1) % nvshmem_n_pes();
  nvshmem_finalize();
  if (getenv("NVSHMEM_TEST_CUBIN_LIBRARY")) { fprintf(stderr, "no cubin path in this program\n"); return 3; }
  return got == want && helper_ok() ? 0 : 1;
}
"""
TILE = r"""
#include <nvshmem.h>
#include "device_host/nvshmem_common.cuh"
template <class S, class D> __global__ void k(S s, D d) {
  nvshmemx::tile_sum_reduce<S, D, nvshmemx::shape<>, nvshmemx::NVLS_ONE_SHOT_PULL_NBI>(NVSHMEM_TEAM_WORLD, s, d, {}, {}, 0, 0);
}
int main() {
  auto layout = nvshmemx::make_layout(nvshmemx::make_shape(ConstInt<4>{}, 8), nvshmemx::make_stride(ConstInt<1>{}, 4));
  nvshmemx::Tensor<float, decltype(layout)> t(nullptr, layout);
  k<<<1, 1>>>(t, t);
  return 0;
}
"""
# An example written for two PEs: it refuses other counts, as NVIDIA's moe_shuffle does.
PAIR = r"""
#include <nvshmem.h>
#include <cstdio>
int main() {
  nvshmem_init();
  const int n = nvshmem_n_pes();
  nvshmem_finalize();
  if (n != 2) { printf("this example needs 2 PEs, not %d\n", n); return 1; }
  return 0;
}
"""


def _tree(root):
    files = {
        "CMakeLists.txt": "cmake_minimum_required(VERSION 3.19)\nproject(NVSHMEM VERSION 9.8.7.6)\n",
        "perftest/common/helper.h": "bool helper_ok();\n",
        "perftest/common/utils.cu": "#include \"helper.h\"\nbool helper_ok() { return true; }\n",
        "perftest/device/pt-to-pt/CMakeLists.txt": textwrap.dedent("""\
            nvshmem_add_perftest(put_check.cu)
            if(NVSHMEM_BUILD_BITCODE_LIBRARY)
                nvshmem_add_cubin_perftest(put_check.cu)
            endif()
            """),
        "perftest/device/pt-to-pt/put_check.cu": PUT_CHECK,
        "perftest/device/pt-to-pt/not_listed.cu": "#error the runner builds only what CMake lists\n",
        "perftest/device/tile/CMakeLists.txt": "nvshmem_add_perftest(tile_sum.cu)\n",
        "perftest/device/tile/tile_sum.cu": TILE,
        "examples/CMakeLists.txt": "set(OPTIONAL_MPI_EXAMPLES\n  pair.cu\n  )\n",
        "examples/pair.cu": PAIR,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_runner_builds_what_cmake_lists_runs_it_and_counts(tmp_path):
    reason = cpu_kernel_toolchain_missing()
    if reason:
        pytest.skip(reason)
    tree = _tree(tmp_path / "nvshmem")
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "nvshmem_suite.py"), str(tree), "--cubin",
                           "--build-dir", str(tmp_path / "build"), "--timeout", "60", "-j", "2"],
                          capture_output=True, text=True, timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out  # not everything passes
    assert "(9.8.7.6)" in out, out
    assert "not_listed" not in out, out
    row = re.compile(r"^((?:perftest|examples)/\S+)\s+(pass|run|build|refused|built)\s", re.M)
    rows = {m.group(1): m.group(2) for m in row.finditer(out)}
    assert rows == {"perftest/device/pt-to-pt/put_check": "pass", "perftest/device/tile/tile_sum": "refused",
                    "examples/pair": "run"}, out
    # put_check ran once as itself and once as its cubin variant, on 2 PEs (point-to-point).
    assert re.search(r"^perftest/device/pt-to-pt/put_check\s+pass\s+[\d.]+\s+2:ok\(\d+s\), 2c:FAIL\(\d+s\)$", out,
                     re.M), out
    assert "cubin variants (NVSHMEM_TEST_CUBIN_LIBRARY=1): 0/1 pass" in out, out
    assert re.search(r"put_check: on 2 PEs: .*no cubin path in this program", out), out
    assert "pyshmem does not provide NVSHMEM's tile API" in out, out
    assert re.search(r"^examples/pair\s+run\s+[\d.]+\s+2:ok\(\d+s\), 4:FAIL\(\d+s\)$", out, re.M), out
    assert "this example needs 2 PEs, not 4" in out, out
    assert out.rstrip().splitlines()[-1] == "1/3 pass (1 refused: a documented refusal, see above)", out
    assert (tmp_path / "build" / "suite.log").is_file()
