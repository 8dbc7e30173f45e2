"""``python -m pyshmem info``: what this installation can do, in one screen."""

import importlib.util
import os
import platform
import re
import sys

from pyshmem._lib import lib


def env_markdown():
    """Returns the table of PYSHMEM_* variables as Markdown (docs/environment.md)."""
    lines = [
        "# Environment variables",
        "",
        "Generated from the one table in `csrc/core/env_vars.def` by `python -m pyshmem info --env-markdown`.",
        "",
        "| Variable | Type | Default | Meaning |",
        "|---|---|---|---|",
    ]
    for row in lib.env_table():
        default = row["default"] if row["default"] != "" else "(unset)"
        lines.append(f"| `{row['name']}` | {row['type']} | `{default}` | {row['help']} |")
    return "\n".join(lines) + "\n"


# What optional parts need: name shown -> distribution.
_OPTIONAL = (("numba-cuda", "numba-cuda"), ("numba", "numba"), ("cuda-core", "cuda-core"),
             ("cuda-bindings", "cuda-bindings"), ("mpi4py", "mpi4py"), ("ipyparallel", "ipyparallel"),
             ("matplotlib", "matplotlib"), ("shmem4py", "shmem4py"))


def _versions():
    """'name version' (or 'name: not installed') for the optional packages, without importing them."""
    from importlib import metadata

    out = []
    for name, dist in _OPTIONAL:
        try:
            out.append(f"{name} {metadata.version(dist)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name}: not installed")
    return out


def report():
    """Returns the human-readable environment report printed by ``info``."""
    import numpy

    out = [lib.describe().splitlines()[0]]
    out.append(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}")
    out.append(f"python {platform.python_version()} ({sys.executable}), numpy {numpy.__version__}")
    out.append("optional: " + ", ".join(_versions()))
    backend = next(r for r in lib.env_table() if r["name"] == "PYSHMEM_BACKEND")
    out.append(f"backend: PYSHMEM_BACKEND={backend['value'] if backend['is_set'] else backend['default']} "
               f"(host heap always; cuda adds a GPU heap)")
    out.append(f"cuda: {lib.gpu_probe()}")
    out.append("transports:")
    out += ["  " + t for t in lib.transports().splitlines()]
    try:
        lib.config_check()
        config_ok = "ok"
    except Exception as exc:  # report, don't fail: this is a diagnostic tool
        config_ok = f"ERROR: {exc}"
    out.append(f"environment: {config_ok}")
    heap = next(r for r in lib.env_table() if r["name"] == "PYSHMEM_SYMMETRIC_SIZE")
    out.append(f"symmetric heap: {heap['value'] if heap['is_set'] else heap['default']} per PE "
               "(PYSHMEM_SYMMETRIC_SIZE; reserved lazily, backed where touched)")
    out.append("variables (* = set in this environment):")
    for row in lib.env_table():
        is_set = row["is_set"] and not _defaulted_by_pyshmem(row)
        mark = "*" if is_set else " "
        value = row["value"] if row["is_set"] else row["default"]
        out.append(f" {mark} {row['name']:<28} = {value!s:<12} {_first_sentence(row['help'])}")
    out.append(f"torch tensors in calls: {_torch_path()}")
    launcher = os.environ.get("PYSHMEM_LAUNCHER")
    out.append(f"launcher: {launcher or 'none (a program started now is a single PE)'}")
    return "\n".join(out)


def _torch_path():
    """How calls read torch tensors here: the stable-ABI fast path or DLPack (imports torch)."""
    if importlib.util.find_spec("torch") is None:
        return "torch not installed"
    try:
        import torch  # noqa: F401  (the binding finds it in sys.modules)
    except Exception as exc:  # a diagnostic: report a broken torch, don't fail on it
        return f"torch fails to import ({type(exc).__name__}: {exc})"

    state = lib._torch_fast_path()
    if state["enabled"]:
        return "libtorch's stable C ABI" + ("" if state["bits"] else f" ({state['status']})")
    return f"torch's DLPack exporter (fast path off: {state['status']})"


def _first_sentence(text):
    """The help text up to its first full stop, not cut at abbreviations such as "e.g."."""
    m = re.search(r"(?<!\be\.g)(?<!\bi\.e)(?<!\betc)\.(\s|$)", text)
    return text[: m.start()] if m else text


def _defaulted_by_pyshmem(row):
    """True for PYSHMEM_UCX_LIBRARY when pyshmem itself set it to the libucx wheel's libucp."""
    from pyshmem._lib import UCX_WHEEL_LIBRARY

    return row["name"] == "PYSHMEM_UCX_LIBRARY" and row["value"] == UCX_WHEEL_LIBRARY


def main(argv=None):
    """Entry point of ``python -m pyshmem info [--env-markdown | --includes]``.

    Returns:
        int: process exit code.
    """
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "info":
        argv = argv[1:]
    if argv == ["--env-markdown"]:
        sys.stdout.write(env_markdown())
        return 0
    if argv in (["--includes"], ["--nvshmem-includes"]):
        from pyshmem.cuda import include_paths, nvshmem_include_path, nvshmem_tree_path

        paths = include_paths() + ([nvshmem_include_path(), nvshmem_tree_path()]
                                   if argv[0] == "--nvshmem-includes" else [])
        print(" ".join("-I" + p for p in paths))
        return 0
    if argv:
        print("usage: python -m pyshmem info [--env-markdown | --includes | --nvshmem-includes]", file=sys.stderr)
        return 2
    print(report())
    return 0


__all__ = ["main", "report", "env_markdown"]
