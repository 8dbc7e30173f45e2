"""Compile CUDA C++ that uses the device API (``#include <pyshmem/device.cuh>``).

``compile(source)`` runs NVRTC through ``cuda.core`` with pyshmem's and libcu++'s
include directories set, and returns the compiled object (cubin, PTX or LTO-IR). It
needs no GPU. Loading and launching the result needs the CUDA backend, which is not
built yet (``launch`` raises ``NotImplementedError``). ``include_paths()`` (or
``python -m pyshmem info --includes``) gives the flags for your own nvcc/CMake build.
"""

import os
from pathlib import Path

from pyshmem.errors import InvalidArgumentError, ShmemNotImplementedError

_OUTPUTS = ("cubin", "ptx", "ltoir")


def _pyshmem_include():
    here = Path(__file__).resolve().parent
    for cand in (here / "include", here.parent / "csrc" / "include"):  # wheel, then source tree
        if (cand / "pyshmem" / "device.cuh").is_file():
            return str(cand)
    raise FileNotFoundError("pyshmem's device headers are missing from this installation; reinstall pyshmem")


def _cccl_include():
    """libcu++ headers: CUDA_HOME's toolkit, the default toolkit, or the cuda-cccl wheel."""
    cands = []
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH")
    if home:
        cands.append(Path(home) / "include" / "cccl")
    cands.append(Path("/usr/local/cuda/include/cccl"))
    try:
        from cuda.pathfinder import find_nvidia_header_directory

        found = find_nvidia_header_directory("cccl")
        if found:
            cands.append(Path(found))
    except Exception:  # pathfinder missing or too old: fall back to the other places
        pass
    for c in cands:
        if (c / "cuda" / "atomic").is_file():
            return str(c)
    raise FileNotFoundError(
        "libcu++ (CCCL) headers not found: install the CUDA toolkit or `pip install nvidia-cuda-cccl`, "
        "or set CUDA_HOME"
    )


def include_paths():
    """Include directories a CUDA C++ build needs for ``<pyshmem/device.cuh>``.

    Returns:
        list[str]: pyshmem's include directory, then libcu++'s.

    Raises:
        FileNotFoundError: a directory cannot be found (with how to install it).
    """
    return [_pyshmem_include(), _cccl_include()]


def compile(source, *, arch="sm_90", output="cubin", name="pyshmem_kernel", options=()):  # noqa: A001
    """Compile CUDA C++ source that includes ``<pyshmem/device.cuh>`` (no GPU needed).

    Args:
        source: CUDA C++ source text.
        arch: target architecture, e.g. ``"sm_80"``, ``"sm_90"``.
        output: ``"cubin"``, ``"ptx"`` or ``"ltoir"``.
        name: program name shown in compiler messages.
        options: extra include directories (``-I`` is implied) as strings.

    Returns:
        cuda.core.ObjectCode: the compiled code (``.code`` holds the bytes).

    Raises:
        InvalidArgumentError: bad ``output``/``arch``, or the source does not compile
            (the message carries the compiler log).
        ImportError: ``cuda-core`` is not installed (``pip install 'pyshmem[cuda]'``).
    """
    if output not in _OUTPUTS:
        raise InvalidArgumentError(f"pyshmem.cuda.compile: output must be one of {_OUTPUTS}, not {output!r}")
    if not (isinstance(arch, str) and arch.startswith("sm_") and arch[3:].isdigit()):
        raise InvalidArgumentError(f"pyshmem.cuda.compile: arch must look like 'sm_90', not {arch!r}")
    try:
        from cuda.core import Program, ProgramOptions
    except ImportError as exc:
        raise ImportError("pyshmem.cuda needs cuda-core: pip install 'pyshmem[cuda]'") from exc
    includes = include_paths() + [str(p) for p in options]
    cuda_home = Path(_cccl_include()).parent
    if (cuda_home / "cuda_runtime.h").is_file() or (cuda_home / "cuda.h").is_file():
        includes.append(str(cuda_home))
    opts = ProgramOptions(std="c++17", arch=arch, include_path=includes, name=name,
                          link_time_optimization=(output == "ltoir"))
    try:
        return Program(source, code_type="c++", options=opts).compile(output)
    except Exception as exc:
        if type(exc).__name__ != "NVRTCError":
            raise
        raise InvalidArgumentError(f"pyshmem.cuda.compile: {name} does not compile for {arch}:\n{exc}") from None


def launch(*args, **kwargs):
    """Launch compiled device code on this PE's GPU.

    Raises:
        ShmemNotImplementedError: the CUDA backend (GPU heap, device-state upload) is
            not built yet.
    """
    raise ShmemNotImplementedError(
        "pyshmem.cuda.launch: the CUDA backend is not built yet; compile() works without a GPU, "
        "and the same device code runs on the CPU build of the device API"
    )


__all__ = ["compile", "include_paths", "launch"]
