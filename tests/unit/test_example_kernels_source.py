"""The CUDA C++ kernels of examples/*.cu, run on the CPU build by tests/pe/test_examples.py,
compile for the GPU too (NVRTC, sm_90): every extern "C" __global__ kernel is in the PTX."""

import re
from pathlib import Path

import pytest

pytest.importorskip("cuda.core", reason="cuda-core is not installed (pip install 'pyshmem[cuda]')")

import pyshmem.cuda as pcuda  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOURCES = sorted(EXAMPLES.glob("*.cu"))


def test_the_examples_have_kernels():
    assert {p.name for p in SOURCES} >= {"moe_alltoall.cu", "tp_allreduce.cu", "ws_allreduce.cu"}


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.name)
def test_example_kernels_compile_for_sm90(path):
    source = path.read_text()
    kernels = re.findall(r'extern "C" __global__ void (\w+)\(', source)
    assert kernels, f"{path.name} declares no extern \"C\" kernel"
    ptx = bytes(pcuda.compile(source, arch="sm_90", output="ptx", name=path.stem).code).decode()
    for kernel in kernels:
        assert f".entry {kernel}(" in ptx, f"{path.name}: {kernel} missing from the PTX"
