"""CUDA C++ kernels built for and run on the CPU build of the device API.

Used by :mod:`pyshmem.cuda` when this PE's symmetric heap is host memory (the ``cpu``
backend). The source is compiled with the host C++ compiler as a shared library with
``pyshmem/cpu_kernel.h`` included first, which maps the CUDA keywords and
``threadIdx``/``blockIdx``/... onto host code; a launch runs every block of the grid
as one host thread (blocks run concurrently, one thread per block). Libraries are
cached per user, keyed by the source, the flags, the compiler and the headers.
"""

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np

from pyshmem._lib import lib
from pyshmem.errors import InvalidArgumentError, ShmemTypeError, ValueOverflowError
from pyshmem.runtime import where

MAX_BLOCKS = 4096  # each block is an OS thread


def _compiler():
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    if not cxx:
        raise FileNotFoundError(f"{where('cuda.Module')}: no host C++ compiler found to build the kernel for the "
                                "CPU build of the device API; install g++ (apt install g++) or set CXX")
    return cxx


def cache_dir(kind="cpu_kernels"):
    """A directory only this user can write (code from it is loaded and run):
    ``$XDG_CACHE_HOME/pyshmem/<kind>`` (default ``~/.cache``), else a private temporary one."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pyshmem" / kind
    try:
        base.mkdir(parents=True, exist_ok=True, mode=0o700)
        st = base.stat()
        if st.st_uid == os.getuid() and not (st.st_mode & 0o022):
            return base
    except OSError:
        pass
    return Path(tempfile.mkdtemp(prefix="pyshmem-kernels-"))  # private (0700), per process


def _fingerprint(cxx, flags, source, include_dirs):
    h = hashlib.sha256()
    for part in (cxx, " ".join(flags), source):
        h.update(part.encode())
        h.update(b"\0")
    pyshmem_include = Path(include_dirs[0]) / "pyshmem"
    for header in sorted(pyshmem_include.rglob("*")):
        if header.is_file():
            h.update(header.name.encode())
            h.update(header.read_bytes())
    try:
        h.update(subprocess.run([cxx, "--version"], capture_output=True, timeout=30).stdout)
    except (OSError, subprocess.SubprocessError):
        pass
    return h.hexdigest()[:32]


def build(source, name, include_dirs, options):
    """Compiles `source` to a shared library; returns its path (cached)."""
    cxx = _compiler()
    flags = ["-std=c++17", "-O2", "-shared", "-fPIC", "-pthread", "-x", "c++",
             "-include", "pyshmem/cpu_kernel.h"]
    flags += [f"-I{d}" for d in include_dirs] + [str(o) for o in options]
    out = cache_dir() / f"{name}-{_fingerprint(cxx, flags, source, include_dirs)}.so"
    _remove_orphans(out.parent)
    if out.exists():
        return out
    # The source goes in on stdin and the library to a per-process name in the cache: a
    # PE killed mid-build (the launcher ends the others when one fails) leaves at most
    # that partial file, which the next build removes.
    tmp_out = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        proc = subprocess.run([cxx, *flags, "-", "-o", str(tmp_out)], input=source, capture_output=True, text=True,
                              timeout=600)
        if proc.returncode != 0:
            raise InvalidArgumentError(
                f"{where('cuda.Module')}: {name} does not compile for the CPU build of the device API "
                f"(host compiler {cxx}):\n{proc.stderr.strip().replace('<stdin>', name + '.cu')}")
        os.replace(tmp_out, out)  # atomic: PEs building the same source at once do not collide
    finally:
        tmp_out.unlink(missing_ok=True)
    return out


def _remove_orphans(cache):
    """Deletes partial libraries (.<name>.<pid>.tmp) of build processes that no longer run."""
    for partial in cache.glob(".*.tmp"):
        try:
            pid = int(partial.name.rsplit(".", 2)[-2])
            os.kill(pid, 0)  # raises when no such process
        except ProcessLookupError:
            partial.unlink(missing_ok=True)
        except (ValueError, OSError):
            pass


def load(path):
    """Loads a library built by build(); returns the ctypes handle."""
    handle = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)
    handle.pyshmem_cpu_bind_state.argtypes = [ctypes.c_void_p]
    handle.pyshmem_cpu_bind_state.restype = None
    handle.pyshmem_cpu_set_block.argtypes = [ctypes.c_uint] * 6
    handle.pyshmem_cpu_set_block.restype = None
    return handle


def c_arg(i, value):
    """Converts one kernel argument to its ctypes form (see pyshmem.cuda.launch)."""
    if isinstance(value, (ctypes._SimpleCData, ctypes._Pointer)) or value is None:
        return value
    if hasattr(value, "__cuda_array_interface__") and not hasattr(value, "__array_interface__"):
        raise ShmemTypeError(f"{where('cuda.launch')}: argument {i} is a GPU array, but this kernel runs on the CPU build "
                        f"(the heap is in host memory); pass NumPy arrays")
    if isinstance(value, (bool, np.bool_)):
        return ctypes.c_bool(bool(value))
    if isinstance(value, np.generic):
        types = {np.dtype(np.int8): ctypes.c_int8, np.dtype(np.int16): ctypes.c_int16,
                 np.dtype(np.int32): ctypes.c_int32, np.dtype(np.int64): ctypes.c_int64,
                 np.dtype(np.uint8): ctypes.c_uint8, np.dtype(np.uint16): ctypes.c_uint16,
                 np.dtype(np.uint32): ctypes.c_uint32, np.dtype(np.uint64): ctypes.c_uint64,
                 np.dtype(np.float32): ctypes.c_float, np.dtype(np.float64): ctypes.c_double}
        ctype = types.get(value.dtype)
        if ctype is None:
            raise ShmemTypeError(f"{where('cuda.launch')}: argument {i} has unsupported scalar type {value.dtype}; "
                                 "pass int8..int64, uint8..uint64, float32, float64 or bool")
        return ctype(value.item())
    if isinstance(value, np.ndarray) or hasattr(value, "__array_interface__"):
        arr = value if isinstance(value, np.ndarray) else np.asarray(value)
        if not (arr.flags.c_contiguous or arr.size <= 1):
            raise InvalidArgumentError(f"{where('cuda.launch')}: argument {i} is not C-contiguous; kernels index raw memory, "
                             f"pass np.ascontiguousarray(...) or a contiguous slice")
        return ctypes.c_void_p(arr.__array_interface__["data"][0])
    if isinstance(value, int):
        if not -(2**63) <= value < 2**64:
            raise ValueOverflowError(f"{where('cuda.launch')}: argument {i} ({value}) does not fit 64 bits; pass "
                                     f"a NumPy scalar of the kernel parameter's type")
        return ctypes.c_int64(value) if value < 2**63 else ctypes.c_uint64(value)
    if isinstance(value, float):
        return ctypes.c_double(value)
    raise ShmemTypeError(f"{where('cuda.launch')}: argument {i} of type {type(value).__name__} cannot be passed to a "
                    f"kernel; pass arrays, NumPy scalars (np.int32, np.float32, ...), int, float or ctypes values")


def run_grid(handle, func, grid, args):
    """Runs func(*args) once per block of `grid` (x, y, z), each block on its own thread."""
    c_args = [c_arg(i, a) for i, a in enumerate(args)]
    handle.pyshmem_cpu_bind_state(ctypes.c_void_p(lib.device_state_address()))
    gx, gy, gz = grid
    blocks = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]

    def run_block(bx, by, bz):
        handle.pyshmem_cpu_set_block(bx, by, bz, gx, gy, gz)
        func(*c_args)  # ctypes releases the GIL: blocks run in parallel

    if len(blocks) == 1:
        run_block(*blocks[0])
        return
    threads = [threading.Thread(target=run_block, args=b, name=f"pyshmem-block-{b}", daemon=True) for b in blocks]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():  # short joins keep Ctrl-C deliverable to the main thread
            t.join(0.1)


__all__ = ["build", "c_arg", "load", "run_grid", "MAX_BLOCKS"]
