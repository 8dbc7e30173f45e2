"""CUDA C++ kernels built for and run on the CPU build of the device API.

Used by :mod:`pyshmem.cuda` when this PE's symmetric heap is host memory (the ``cpu``
backend). The source is compiled with the host C++ compiler as a shared library with
``pyshmem/cpu_kernel.h`` included first, which maps the CUDA keywords and
``threadIdx``/``blockIdx``/... onto host code (``extern __shared__`` arrays are
rewritten first, see :func:`rewrite_dynamic_shared`). A launch runs every block of the
grid on its own new OS thread, all blocks at once, and the CUDA threads of a block as
fibers on that thread (``pyshmem_cpu_run_block`` in ``pyshmem/cpu_block.h``).
Libraries are cached per user, keyed by the source, the flags, the compiler and the
headers.
"""

import ctypes
import hashlib
import os
import random
import re
import struct
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import numpy as np

from pyshmem._foreign import host_view, is_tensor
from pyshmem._lib import lib
from pyshmem.errors import InvalidArgumentError, KernelError, ShmemTypeError, ValueOverflowError
from pyshmem.runtime import env_setting, where

MAX_BLOCKS = 4096  # each block is an OS thread
DEFAULT_STACK = 64 * 1024  # per CUDA thread, reserved; PYSHMEM_CPU_KERNEL_STACK

# `extern __shared__ <specifiers> name[];` (an array of unknown bound: the launch's
# dynamic shared memory), at namespace or block scope.
_EXTERN_SHARED = re.compile(r"\bextern\s+__shared__\s+((?:[^;\[\]{}()]|\([^;()]*\))*?)\b([A-Za-z_]\w*)\s*\[\s*\]\s*;")
_ALIGN = re.compile(r"\b(?:__align__|alignas)\s*\([^()]*\)|__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)")


def rewrite_dynamic_shared(source):
    """Rewrites each ``extern __shared__ T name[];`` into a per-block reference to the
    launch's dynamic shared memory: ``thread_local T (&name)[] = *reinterpret_cast<T
    (*)[]>(::pyshmem::cpu::dynamic_shared());``.

    A macro cannot do this: ``extern`` precedes the ``__shared__`` keyword and the name
    follows the type, so no definition of ``__shared__`` turns the declaration into one
    of a buffer sized at launch (an ``extern thread_local`` array would need a
    definition of fixed size for every name). ``thread_local`` gives one binding per OS
    thread, i.e. per block (every block runs on a new thread), made the first time the
    block reaches it; at block scope it is static storage, as the declaration was.
    Alignment specifiers are dropped (the buffer is 128-byte aligned). Newlines inside a
    declaration are kept, so compiler messages keep their line numbers.
    """
    def sub(m):
        spec = " ".join(_ALIGN.sub(" ", m.group(1)).split())
        name = m.group(2)
        lines = "\n" * m.group(0).count("\n")
        return (f"thread_local {spec} (&{name})[] = *reinterpret_cast<{spec} (*)[]>"
                f"(::pyshmem::cpu::dynamic_shared());{lines}")

    return _EXTERN_SHARED.sub(sub, source)


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
    """The cache key: compiler, flags, source, and the contents of pyshmem's headers and
    libcu++'s version, not where they are, so checkouts at other paths (a fresh clone)
    share the libraries built from identical headers."""
    h = hashlib.sha256()
    text = " ".join(flags)
    for i, d in sorted(enumerate(include_dirs), key=lambda e: -len(str(e[1]))):  # longest first: nested dirs
        text = text.replace(str(d), f"<include{i}>")
    for part in (cxx, text, source):
        h.update(part.encode())
        h.update(b"\0")
    pyshmem_include = Path(include_dirs[0]) / "pyshmem"
    for header in sorted(pyshmem_include.rglob("*")):
        if header.is_file():
            h.update(str(header.relative_to(pyshmem_include)).encode())
            h.update(header.read_bytes())
    for d in include_dirs[1:]:
        version = Path(d) / "cuda" / "std" / "__cccl" / "version.h"
        if version.is_file():
            h.update(version.read_bytes())
        for generated in ("nvshmem.h", "nvshmemx.h"):  # pyshmem's generated NVSHMEM headers
            if (Path(d) / generated).is_file():
                h.update((Path(d) / generated).read_bytes())
    try:
        h.update(subprocess.run([cxx, "--version"], capture_output=True, timeout=30).stdout)
    except (OSError, subprocess.SubprocessError):
        pass
    return h.hexdigest()[:32]


def build(source, name, include_dirs, options):
    """Compiles `source` to a shared library; returns its path (cached)."""
    cxx = _compiler()
    # -fstack-clash-protection: a frame larger than a page touches the fiber stack's
    # guard page instead of jumping over it into the next thread's stack.
    flags = ["-std=c++17", "-O2", "-shared", "-fPIC", "-pthread", "-fstack-clash-protection", "-x", "c++",
             "-include", "pyshmem/cpu_kernel.h"]
    # #line: compiler messages and assert() name the kernel's source as <name>.cu.
    source = f'#line 1 "{name}.cu"\n' + rewrite_dynamic_shared(source)
    # pyshmem/cpu_include holds the CPU build's versions of CUDA's own headers
    # (<cooperative_groups.h>, <cuda_fp16.h> ...), searched before the others; it is not
    # on the GPU build's path, where the toolkit's headers are the real ones.
    cpu_include = Path(include_dirs[0]) / "pyshmem" / "cpu_include"
    flags += [f"-I{cpu_include}"] + [f"-I{d}" for d in include_dirs] + [str(o) for o in options]
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
                f"(host compiler {cxx}):\n{proc.stderr.strip()}")
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
    handle.pyshmem_cpu_run_block.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                                             ctypes.c_int, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64,
                                             ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint64]
    handle.pyshmem_cpu_run_block.restype = ctypes.c_int
    handle.pyshmem_cpu_switches.argtypes = []
    handle.pyshmem_cpu_switches.restype = ctypes.c_uint64
    handle.pyshmem_cpu_preemptions.argtypes = []
    handle.pyshmem_cpu_preemptions.restype = ctypes.c_uint64
    return handle


def c_arg(i, value):
    """Converts one kernel argument to its ctypes form (see pyshmem.cuda.launch)."""
    if isinstance(value, (ctypes._SimpleCData, ctypes._Pointer)) or value is None:
        return value
    if is_tensor(value) and not value.is_cuda:
        value = host_view("cuda.launch", f"argument {i}", value)  # a CPU tensor: its memory, as a NumPy view
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


_FLOATS = {ctypes.c_float: (1, "<f"), ctypes.c_double: (2, "<d")}


def _abi_word(i, value):
    """(kind, 64-bit word) of one converted argument: kind 0 integer or pointer
    (sign- or zero-extended), 1 float (its bits in the low half), 2 double."""
    if value is None:
        return 0, 0
    if isinstance(value, ctypes._Pointer):
        return 0, ctypes.cast(value, ctypes.c_void_p).value or 0
    kind = _FLOATS.get(type(value))
    if kind is not None:
        return kind[0], int.from_bytes(struct.pack(kind[1], value.value).ljust(8, b"\0"), "little")
    if ctypes.sizeof(value) > 8 or isinstance(value, ctypes.c_longdouble):
        raise ShmemTypeError(f"{where('cuda.launch')}: argument {i} ({type(value).__name__}) is wider than 8 bytes; "
                             "CPU kernels take scalars and pointers of at most 8 bytes")
    v = value.value
    v = 0 if v is None else int(v)
    return 0, v & (2**64 - 1)


def stack_size(value):
    """The stack per CUDA thread: `value` (bytes) or PYSHMEM_CPU_KERNEL_STACK's."""
    if value is None:
        text = env_setting("PYSHMEM_CPU_KERNEL_STACK")
        if not text:
            return DEFAULT_STACK
        m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", str(text), re.I)
        if not m:
            raise InvalidArgumentError(f"{where('cuda.launch')}: PYSHMEM_CPU_KERNEL_STACK={text!r} is not a size "
                                       "(bytes, with K, M or G)")
        value = int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2).upper()]
    if isinstance(value, bool) or not isinstance(value, int) or not 16 * 1024 <= value <= 1 << 30:
        raise InvalidArgumentError(f"{where('cuda.launch')}: stack_size must be an int of bytes from 16 KiB to 1 GiB, "
                                   f"not {value!r}")
    return value


class _Grid(ctypes.Structure):
    """The state the blocks of one launch share (pyshmem::cpu::Grid in cpu_fibers.h)."""
    _fields_ = [("failed", ctypes.c_uint32), ("sync_arrived", ctypes.c_uint32),
                ("sync_generation", ctypes.c_uint32), ("blocks", ctypes.c_uint32), ("finished", ctypes.c_uint32),
                ("cooperative", ctypes.c_uint32), ("schedule", ctypes.c_uint32), ("seed", ctypes.c_uint64)]


def schedule():
    """PYSHMEM_CPU_SCHEDULE as (kind, seed): (0, 0) the fixed order, (1, SEED) random.

    Raises:
        InvalidArgumentError: the value is neither ``fixed`` nor ``random:SEED``.
    """
    text = env_setting("PYSHMEM_CPU_SCHEDULE")
    if text in ("", "fixed"):
        return 0, 0
    m = re.fullmatch(r"random:(\d{1,19})", text)
    if not m or int(m.group(1)) >= 2**64:
        raise InvalidArgumentError(f"{where('cuda.launch')}: PYSHMEM_CPU_SCHEDULE={text!r} is not 'fixed' or "
                                   "'random:SEED' (SEED a non-negative integer below 2**64)")
    return 1, int(m.group(1))


def run_grid(handle, func, name, grid, block, args, shared_mem=0, stack=None, cooperative=False):
    """Runs kernel `func` over `grid` (x, y, z) blocks of `block` (x, y, z) threads:
    every block on its own new OS thread (all at once), its threads as fibers there.

    Raises:
        KernelError: a block cannot finish (threads wait at a __syncthreads some thread
            of the block never reaches), an intrinsic was misused, or a thread failed an
            assert, called __trap() or a device-API check; names the kernel, the block,
            the thread and the PE. The other blocks stop at their next switch point.
    """
    words = [_abi_word(i, c_arg(i, a)) for i, a in enumerate(args)]
    n = len(words)
    argv = (ctypes.c_uint64 * max(n, 1))(*[w for _, w in words])
    kinds = (ctypes.c_uint8 * max(n, 1))(*[k for k, _ in words])
    stack = stack_size(stack)
    kind, seed = schedule()
    handle.pyshmem_cpu_bind_state(ctypes.c_void_p(lib.device_state_address()))
    fn = ctypes.cast(func, ctypes.c_void_p).value
    gx, gy, gz = grid
    blocks = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
    state = _Grid(blocks=len(blocks), cooperative=int(bool(cooperative)), schedule=kind, seed=seed)
    errors = []
    kname = name.encode()

    def run_block(bx, by, bz):
        coords = (ctypes.c_uint * 9)(bx, by, bz, gx, gy, gz, *block)
        err = ctypes.create_string_buffer(4096)
        # ctypes releases the GIL: blocks run in parallel. 2: stopped because another
        # block failed (its error is the one reported).
        if handle.pyshmem_cpu_run_block(fn, kname, argv, kinds, n, coords, shared_mem, stack, ctypes.byref(state),
                                        err, len(err)) == 1:
            errors.append(err.value.decode(errors="replace"))

    sys.stdout.flush()  # the kernel's printf writes to file descriptor 1 directly

    # A new thread for every block, one block included: static __shared__ variables are
    # thread_local, so a block never sees another block's (or launch's) values.
    threads = [threading.Thread(target=run_block, args=b, name=f"pyshmem-block-{b}", daemon=True) for b in blocks]
    if kind == 1:  # the random schedule also starts the blocks in a seeded random order
        random.Random(seed).shuffle(threads)
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():  # short joins keep Ctrl-C deliverable to the main thread
            t.join(0.1)
    if errors:
        more = f" (and {len(errors) - 1} more blocks)" if len(errors) > 1 else ""
        raise KernelError(f"{where('cuda.launch')}: {errors[0]}{more}")


__all__ = ["build", "c_arg", "load", "rewrite_dynamic_shared", "run_grid", "stack_size", "MAX_BLOCKS"]
