"""The kernels of tests/pe/programs/cpu_intrinsics.py compile for the GPU too (NVRTC,
sm_90): pyshmem/cpu_intrinsics.h offers CUDA's overloads, nothing a GPU build lacks."""

import ast
from pathlib import Path

import pytest

pytest.importorskip("cuda.core", reason="cuda-core is not installed (pip install 'pyshmem[cuda]')")

import pyshmem.cuda as pcuda  # noqa: E402

PROGRAM = Path(__file__).resolve().parents[1] / "pe" / "programs" / "cpu_intrinsics.py"


def test_the_cpu_intrinsics_kernels_compile_for_sm90():
    tree = ast.parse(PROGRAM.read_text())
    source = next(node.value.value for node in tree.body if isinstance(node, ast.Assign)
                  and getattr(node.targets[0], "id", "") == "SOURCE")
    ptx = bytes(pcuda.compile(source, arch="sm_90", output="ptx", name="cpu_intrinsics").code).decode()
    for kernel in ("contend", "intrinsics", "nanosleep_spin"):
        assert f".entry {kernel}(" in ptx, kernel
