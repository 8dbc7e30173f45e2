"""Kernels and modules of CUDA C++ that uses the device API: ``compile``, ``Module``,
``Kernel``, ``launch`` and the include paths (public through :mod:`pyshmem.cuda`, which
documents them). A leaf of the package: it imports no other GPU module, so the host
API's GPU paths (``_gpu_coll``, ``_gpu_host_ops``) launch their kernels through it.
"""

import os
from pathlib import Path

from pyshmem import _kernel_args
from pyshmem.errors import InvalidArgumentError, ShmemOSError, ShmemTypeError
from pyshmem.runtime import where

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


def nvshmem_include_path():
    """The directory of ``<nvshmem.h>`` and ``<nvshmemx.h>``: NVSHMEM's device API on
    pyshmem's (docs/nvshmem.md), generated from the op table when pyshmem is built.
    ``Module`` and ``compile`` put it on their include path; add ``-I`` with it for your
    own nvcc/C++ build.

    Returns:
        str: the directory.

    Raises:
        FileNotFoundError: the build did not generate the headers (rebuild pyshmem).
    """
    d = Path(__file__).resolve().parent / "nvshmem_include"
    if not (d / "nvshmem.h").is_file():
        raise FileNotFoundError(f"{d / 'nvshmem.h'} is missing: pyshmem's build generates it "
                                "(pip install -e . again, or python setup.py build_ext --inplace)")
    return str(d)


def nvshmem_tree_path():
    """The directory of NVSHMEM's other installed header paths that user code includes
    (``<device_host/nvshmem_tensor.h>`` ...), next to :func:`nvshmem_include_path` on the
    include path (``csrc/include/pyshmem/nvshmem_tree/README.md``).

    Returns:
        str: the directory.
    """
    return str(Path(_pyshmem_include()) / "pyshmem" / "nvshmem_tree")


def _kernel_include_paths():
    """include_paths() and, when built, the NVSHMEM headers' directory (Module, compile)."""
    try:
        return include_paths() + [nvshmem_include_path(), nvshmem_tree_path()]
    except FileNotFoundError:
        return include_paths()


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

    Cubin and LTO-IR go through ``cuda.core.Program``; PTX is made by NVRTC directly
    (``cuda.bindings.nvrtc``), because ``cuda.core`` asks the GPU driver whether it can
    load the PTX, which fails where no driver is installed. None of the three needs a
    GPU or its driver; *loading* the result does (a PTX image needs a driver at least
    as new as NVRTC).

    Results are cached per user (``$XDG_CACHE_HOME/pyshmem/nvrtc``, mode 0700), keyed by
    the source, arch, output, NVRTC's version and flags, and the contents of pyshmem's
    headers and of the files under `options`' directories: the PEs of a job, and later
    jobs, compile a module once (NVRTC takes seconds per module).

    Args:
        source: CUDA C++ source text.
        arch: target architecture, e.g. ``"sm_80"``, ``"sm_90"``.
        output: ``"cubin"``, ``"ptx"`` or ``"ltoir"``.
        name: program name shown in compiler messages.
        options: extra include directories (``-I`` is implied): a list of strings or paths.

    Returns:
        cuda.core.ObjectCode: the compiled code (``.code`` holds the bytes).

    Raises:
        InvalidArgumentError: bad ``output``/``arch`` (an architecture this NVRTC does
            not support included), or the source does not compile (the message carries
            the compiler log).
        ShmemTypeError: `source`, `name` or `options` of the wrong type.
        ShmemOSError: NVRTC (or another CUDA library) cannot be loaded.
        ImportError: ``cuda-core`` is not installed (``pip install 'pyshmem[cuda]'``).
    """
    call = where("cuda.compile")
    if output not in _OUTPUTS:
        raise InvalidArgumentError(f"{call}: output must be one of {_OUTPUTS}, not {output!r}")
    if not (isinstance(arch, str) and arch.startswith("sm_") and arch[3:].isdigit()):
        raise InvalidArgumentError(f"{call}: arch must look like 'sm_90', not {arch!r}")
    if not isinstance(source, str):
        raise ShmemTypeError(f"{call}: source must be a string of CUDA C++, not {type(source).__name__}; "
                             "decode bytes first (source.decode())")
    if not isinstance(name, str):
        raise ShmemTypeError(f"{call}: name must be a string, not {type(name).__name__}")
    extra = _include_dirs(call, options)
    try:
        from cuda.core import Program, ProgramOptions
    except ImportError as exc:
        raise ImportError("pyshmem.cuda needs cuda-core: pip install 'pyshmem[cuda]'") from exc
    includes = _kernel_include_paths() + extra
    cuda_home = Path(_cccl_include()).parent
    if (cuda_home / "cuda_runtime.h").is_file() or (cuda_home / "cuda.h").is_file():
        includes.append(str(cuda_home))
    opts = ProgramOptions(std="c++17", arch=arch, include_path=includes, name=name,
                          link_time_optimization=(output == "ltoir"))
    try:
        _check_arch(call, arch)
        flags = opts.as_bytes("nvrtc")
        cached = _nvrtc_cache_path(source, output, flags, _kernel_include_paths()[2:] + extra)
        with _cache_lock(cached):  # the PEs of a node wait for the one that compiles
            if cached.exists():
                return _OBJECT_FROM[output](cached.read_bytes(), name=name)
            if output == "ptx":
                code = _nvrtc_ptx(call, source, name, arch, flags)
            else:
                code = Program(source, code_type="c++", options=opts).compile(output)
            _nvrtc_cache_store(cached, bytes(code.code))
        return code
    except Exception as exc:
        if type(exc).__name__ == "DynamicLibNotFoundError":
            raise ShmemOSError(f"{call}: cannot load a CUDA library ({exc}); NVRTC comes with the CUDA toolkit or "
                               "`pip install nvidia-cuda-nvrtc`, the driver (libcuda) only with an NVIDIA driver "
                               "install") from None
        if type(exc).__name__ != "NVRTCError":
            raise
        raise InvalidArgumentError(f"{call}: {name} does not compile for {arch}:\n{exc}") from None


def _object_from(kind):
    def make(data, name):
        from cuda.core import ObjectCode

        return getattr(ObjectCode, f"from_{kind}")(data, name=name)

    return make


_OBJECT_FROM = {"cubin": _object_from("cubin"), "ptx": _object_from("ptx"), "ltoir": _object_from("ltoir")}


def _nvrtc_cache_path(source, output, flags, user_dirs):
    """Where compile()'s result for these inputs is cached (see compile)."""
    import hashlib

    from cuda.bindings import nvrtc

    from pyshmem._cpu_kernels import cache_dir

    h = hashlib.sha256()
    for part in (source.encode(), output.encode(), repr(nvrtc.nvrtcVersion()).encode(), *flags):
        h.update(part)
        h.update(b"\0")
    # pyshmem's headers and the user's include directories by content; the CUDA
    # toolkit's headers (CCCL) go with NVRTC's version and their path, in the flags.
    for d in [_pyshmem_include(), *user_dirs]:
        root = Path(d)
        if not root.is_dir():
            continue
        for f in sorted(root.rglob("*")):
            if f.is_file():
                h.update(str(f.relative_to(root)).encode())
                h.update(f.read_bytes())
    return cache_dir("nvrtc") / f"{h.hexdigest()[:40]}.{output}"


class _cache_lock:
    """An exclusive lock on `path`'s entry (flock on a .lock file; none if it cannot be made)."""

    def __init__(self, path):
        self._path = path.with_name(path.name + ".lock")
        self._fd = None

    def __enter__(self):
        import fcntl

        try:
            self._fd = os.open(self._path, os.O_CREAT | os.O_RDWR, 0o600)
            fcntl.flock(self._fd, fcntl.LOCK_EX)
        except OSError:
            pass
        return self

    def __exit__(self, *exc):
        if self._fd is not None:
            os.close(self._fd)  # releases the lock


def _nvrtc_cache_store(path, data):
    """Writes `data` at `path` atomically (PEs compiling the same module at once)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except OSError:
        pass  # a cache that cannot be written only costs time
    finally:
        tmp.unlink(missing_ok=True)


def _include_dirs(call, options):
    """`options` of compile() as a list of include-directory strings."""
    if isinstance(options, (str, bytes)) or not hasattr(options, "__iter__"):
        raise ShmemTypeError(f"{call}: options must be a list of include directories, not "
                             f"{type(options).__name__} {options!r}; wrap one directory in a list")
    dirs = list(options)
    for i, d in enumerate(dirs):
        if not isinstance(d, (str, os.PathLike)):
            raise ShmemTypeError(f"{call}: options[{i}] must be a directory name (str or path), "
                                 f"not {type(d).__name__}")
    return [os.fspath(d) for d in dirs]


def _nvrtc_status(call, what, result):
    """Raises for a failed cuda.bindings.nvrtc call; returns its value(s)."""
    from cuda.bindings import nvrtc

    if result[0] != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise InvalidArgumentError(f"{call}: NVRTC's {what} failed: {result[0].name}")
    return result[1] if len(result) == 2 else result[1:]


def _check_arch(call, arch):
    """An arch NVRTC cannot target is a bad argument, not a compile error of the source."""
    from cuda.bindings import nvrtc

    archs = _nvrtc_status(call, "nvrtcGetSupportedArchs", nvrtc.nvrtcGetSupportedArchs())
    if int(arch[3:]) not in archs:
        major, minor = _nvrtc_status(call, "nvrtcVersion", nvrtc.nvrtcVersion())
        raise InvalidArgumentError(f"{call}: NVRTC {major}.{minor} does not support {arch}; pass one of "
                                   + ", ".join(f"sm_{a}" for a in archs))


def _nvrtc_ptx(call, source, name, arch, flags):
    """PTX from NVRTC with no driver involved (cuda.core's PTX path queries the driver)."""
    from cuda.bindings import nvrtc
    from cuda.core import ObjectCode

    created = nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], [])
    prog = _nvrtc_status(call, "nvrtcCreateProgram", created)
    try:
        (status,) = nvrtc.nvrtcCompileProgram(prog, len(flags), flags)
        if status != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            size = _nvrtc_status(call, "nvrtcGetProgramLogSize", nvrtc.nvrtcGetProgramLogSize(prog))
            log = b" " * size
            nvrtc.nvrtcGetProgramLog(prog, log)
            raise InvalidArgumentError(f"{call}: {name} does not compile for {arch}:\n{status.name}, compilation log:\n"
                                       + log.rstrip(b"\0").decode(errors="replace"))
        size = _nvrtc_status(call, "nvrtcGetPTXSize", nvrtc.nvrtcGetPTXSize(prog))
        ptx = b" " * size
        nvrtc.nvrtcGetPTX(prog, ptx)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    return ObjectCode.from_ptx(ptx, name=name)


def _dims(what, value, limit):
    """A launch dimension as an (x, y, z) tuple of positive ints."""
    dims = (value,) if isinstance(value, int) else tuple(value) if isinstance(value, (tuple, list)) else None
    if (not dims or len(dims) > 3 or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 1
                                             for d in dims)):
        raise InvalidArgumentError(f"{where('cuda.launch')}: {what} must be a positive int or a tuple of 1 to 3 "
                                   f"positive ints, not {value!r}")
    dims = dims + (1,) * (3 - len(dims))
    total = dims[0] * dims[1] * dims[2]
    if total > limit:
        raise InvalidArgumentError(f"{where('cuda.launch')}: {what} {value!r} has {total} entries; at most {limit} here")
    return dims


class Module:
    """CUDA C++ source built for a target: the GPU, or the CPU build of the device API.

    ``target="auto"`` picks the GPU when this PE has a GPU heap (backend cuda), else the
    CPU. GPU: compiled with NVRTC for this GPU's architecture, loaded, and this PE's
    device state copied into the module before any kernel runs. CPU: compiled with the
    host C++ compiler (``CXX`` or g++) with ``pyshmem/cpu_kernel.h`` included first; the
    library is cached per user. Kernels must be ``extern "C"``.

    Args:
        source: CUDA C++ source text that includes ``<pyshmem/device.cuh>``.
        name: a name for messages (and the cached CPU library).
        options: extra compiler flags (CPU: any g++ flag; GPU: include directories).
        target: ``"auto"``, ``"gpu"`` or ``"cpu"``.

    Raises:
        InvalidArgumentError: the source does not compile (the message has the log), a
            bad name/target, or ``target="gpu"`` without a GPU heap.
        FileNotFoundError: no host C++ compiler, or libcu++ headers are missing.
        ImportError: a GPU build needs cuda-core (``pip install 'pyshmem[cuda]'``).
    """

    def __init__(self, source, *, name="pyshmem_kernel", options=(), target="auto"):
        from pyshmem import _cpu_kernels
        from pyshmem._lib import lib
        from pyshmem.runtime import ensure_started

        if not isinstance(source, str) or not source.strip():
            raise InvalidArgumentError(f"{where('cuda.Module')}: source must be a non-empty string of CUDA C++")
        if not isinstance(name, str) or not name.replace("_", "").isalnum():
            raise InvalidArgumentError(f"{where('cuda.Module')}: name must be letters, digits and _, not {name!r}")
        if isinstance(options, (str, bytes)) or not hasattr(options, "__iter__"):
            raise ShmemTypeError(f"{where('cuda.Module')}: options must be a list of compiler flags, not "
                                 f"{type(options).__name__} {options!r}; wrap one flag in a list")
        if target not in ("auto", "gpu", "cpu"):
            raise InvalidArgumentError(f"{where('cuda.Module')}: target must be 'auto', 'gpu' or 'cpu', not {target!r}")
        if target != "cpu":
            ensure_started("cuda.Module")
        if target == "auto":
            target = "gpu" if lib.gpu_active() else "cpu"
        if target == "gpu" and not lib.gpu_active():
            raise InvalidArgumentError(f"{where('cuda.Module')}: target='gpu' but this PE has no GPU heap: "
                                       f"{lib.gpu_describe()}; use target='auto' (or 'cpu') to run it on the CPU build")
        self.name = name
        self.target = target
        self._handle = None
        self._params = _kernel_args.parse(source)
        if target == "gpu":
            image = compile(source, arch=lib.gpu_arch(), output="cubin", name=name, options=options).code
            self._handle = lib.gpu_module_load(bytes(image), "pyshmem.cuda.Module")
        else:
            self._path = _cpu_kernels.build(source, name, _kernel_include_paths(), options)
            self._lib = _cpu_kernels.load(self._path)

    def get_kernel(self, name):
        """The ``extern "C"`` kernel called `name`.

        Args:
            name: the kernel's C name.

        Returns:
            Kernel: pass it to :func:`launch`.

        Raises:
            InvalidArgumentError: no such extern "C" kernel in the module.
        """
        from pyshmem._lib import lib

        if self.target == "gpu":
            return Kernel(self, name, lib.gpu_module_function(self._handle, name, "pyshmem.cuda.Module.get_kernel"),
                          self._params.get(name))
        try:
            func = getattr(self._lib, name)
        except AttributeError:
            raise InvalidArgumentError(
                f"{where('cuda.Module.get_kernel')}: {self.name} has no kernel {name!r}; kernels must be declared "
                f'extern "C" __global__') from None
        func.restype = None
        return Kernel(self, name, func, self._params.get(name))

    def __repr__(self):
        return f"<pyshmem.cuda.Module {self.name} target={self.target}>"


class Kernel:
    """A kernel of a :class:`Module` (from ``Module.get_kernel``).

    Attributes:
        params: the parameters read from the module's source (objects with ``text``,
            ``name`` and ``kind``), which :func:`launch` checks its arguments against;
            None where the source does not spell them out (a kernel declared by a
            macro, a template, overloads): then the arguments go as given.
    """

    def __init__(self, module, name, func, params=None):
        self.module = module
        self.name = name
        self._func = func
        self.params = params

    def __repr__(self):
        return f"<pyshmem.cuda.Kernel {self.name} of {self.module.name}>"


def _gpu_arg(i, value):
    """The bytes of one kernel parameter for a GPU launch."""
    import numpy as np

    from pyshmem import _cpu_kernels

    cai = getattr(value, "__cuda_array_interface__", None)  # GpuArray, CuPy, PyTorch, Numba
    if cai is not None:
        return int(cai["data"][0]).to_bytes(8, "little")
    if value is None:
        return bytes(8)
    if isinstance(value, np.ndarray) or (hasattr(value, "__array_interface__") and not isinstance(value, np.generic)):
        raise ShmemTypeError(f"{where('cuda.launch')}: argument {i} is host memory, but this kernel runs on the GPU; pass "
                        f"GPU arrays (pyshmem.cuda.empty/zeros, CuPy, PyTorch, Numba)")
    return bytes(_cpu_kernels.c_arg(i, value))


def launch(kernel, grid, block, *args, stream=None, shared_mem=0, stack_size=None, cooperative=False):
    """Runs `kernel` on a grid of blocks.

    GPU modules: arguments are GPU arrays (``GpuArray`` from empty/zeros, or any
    ``__cuda_array_interface__`` object: passed as device pointers) and scalars; with
    ``stream=None`` the kernel runs on the legacy default stream (after your earlier work
    there) and the call waits for that stream and reports the kernel's errors (a
    device-side trap included), while kernels on other streams keep running; with a
    stream (0: the legacy default stream) it is enqueued there and the call returns
    (:func:`synchronize` waits for it).

    CPU modules: every block runs on its own new host thread, all blocks at once (so
    blocks may wait for each other's signals), and the `block` CUDA threads of a block
    are fibers on that thread with the launch's ``threadIdx``/``blockDim`` (1-D, 2-D,
    3-D). A fiber runs until it synchronises: ``__syncthreads`` (and ``_count``/``_and``/
    ``_or``) is a real block barrier, ``__syncwarp(mask)`` meets the lanes in mask, and
    the device API's waits (``signal_wait_until``, ``wait_until``, barriers, ``quiet``)
    let the block's other threads run; its ``_warp``/``_block`` calls cooperate across
    the threads as on a GPU (one signal per block, the copy shared out). Warps are 32
    consecutive threads: the warp intrinsics (``__shfl*_sync``, ``__ballot_sync``,
    ``__match_*_sync``, ``__reduce_*_sync``...) meet the lanes of their mask, and
    ``<cooperative_groups.h>`` gives blocks, tiles of up to 32 and grid sync. A thread
    that spins on its own block's flags makes progress at once through a device-API
    wait, ``__nanosleep`` or CUDA atomic functions, and otherwise (plain or
    ``volatile`` loads, ``cuda::atomic_ref``) after 10-20 ms of CPU time, when it is
    preempted.
    A block that cannot finish (threads wait at a ``__syncthreads`` or warp intrinsic
    others never reach), a misused intrinsic, a failed ``assert``, ``__trap()`` or a
    device-API check raise :class:`pyshmem.KernelError`, and the other blocks stop; a
    thread that overflows its stack ends the process with a message naming kernel,
    block and thread. ``printf`` writes each call's text in one piece to standard
    output. Static ``__shared__`` variables are per block and start zeroed; ``extern
    __shared__ T name[]`` is the launch's `shared_mem` bytes, per block. Arrays are
    NumPy or symmetric arrays (pointers to their first element, no copy); the call is
    synchronous and `stream` must be None. ``PYSHMEM_CPU_SCHEDULE=random:SEED`` runs
    the threads of each block in a seeded random order to expose ordering bugs.

    Both check the arguments against the kernel's parameters as the module's source
    declares them (``kernel.params``): their number, and their kind (an array or address
    for a pointer, a scalar for a scalar); Python ints, floats and bools are converted to
    the parameter's C type, NumPy scalars and ctypes values must have its size. A kernel
    whose parameters the source does not spell out (declared by a macro, a template)
    gets its arguments as given, with the types listed below.

    Args:
        kernel: a :class:`Kernel`.
        grid: blocks, as an int or a tuple of up to 3 ints (at most 4096 blocks on the CPU).
        block: threads per block, an int or a tuple of up to 3 ints (at most 1024).
        *args: kernel arguments in order: arrays, NumPy scalars for exact C types
            (``np.int32(n)`` for ``int``, ``np.float32(x)`` for ``float``), Python ints
            and floats (the parameter's type; 64-bit and ``double`` where it is not
            known), ctypes values, or None (null pointer).
        stream: GPU only: None, a CUstream handle or a CUDA stream object.
        shared_mem: bytes of dynamic shared memory per block (``extern __shared__``), on
            both targets (a GPU may need more than 48 KiB opted in for the kernel).
        stack_size: CPU only: bytes of stack reserved per CUDA thread (committed as
            used); default ``PYSHMEM_CPU_KERNEL_STACK`` (64 KiB).
        cooperative: a cooperative launch, needed by ``this_grid().sync()``: on a GPU
            ``cuLaunchCooperativeKernel`` (the driver refuses a grid larger than the GPU
            holds at once); on the CPU every block runs at once anyway.

    Raises:
        ShmemTypeError: `kernel` is not a Kernel, too few or too many arguments, or an
            argument of the wrong kind for its parameter or that cannot be passed.
        ValueOverflowError: a Python int out of its parameter's range.
        InvalidArgumentError: a bad grid/block/shared_mem/stack_size/cooperative, a
            non-contiguous array, a stream on the CPU, or a bad PYSHMEM_CPU_SCHEDULE.
        KernelError: CPU: a block could not finish (a missed ``__syncthreads`` or warp
            intrinsic, a grid sync without ``cooperative=True``), an intrinsic was
            misused, or a thread failed an assert, ``__trap()`` or a device-API check;
            the message names kernel, block and thread, and the PE.
    """
    from pyshmem import _cpu_kernels
    from pyshmem._lib import lib
    from pyshmem.runtime import ensure_started

    if not isinstance(kernel, Kernel):
        raise ShmemTypeError(f"{where('cuda.launch')}: kernel must come from Module.get_kernel, not {type(kernel).__name__}")
    on_gpu = kernel.module.target == "gpu"
    grid3 = _dims("grid", grid, 2**31 - 1 if on_gpu else _cpu_kernels.MAX_BLOCKS)
    block3 = _dims("block", block, 1024)
    if isinstance(shared_mem, bool) or not isinstance(shared_mem, int) or not 0 <= shared_mem < 2**32:
        raise InvalidArgumentError(f"{where('cuda.launch')}: shared_mem must be an int of bytes (0 to 2**32 - 1), "
                                   f"not {shared_mem!r}")
    if not isinstance(cooperative, bool):
        raise InvalidArgumentError(f"{where('cuda.launch')}: cooperative must be True or False, not {cooperative!r}")
    ensure_started("cuda.launch")
    args = _kernel_args.check(kernel.name, kernel.params, args)
    if on_gpu:
        if stack_size is not None:
            raise InvalidArgumentError(f"{where('cuda.launch')}: stack_size= is for CPU launches (a GPU thread's stack "
                                       "is set for the context, not per launch)")
        packed = [_gpu_arg(i, a) for i, a in enumerate(args)]
        lib.gpu_launch(kernel._func, list(grid3), list(block3), shared_mem, lib.stream_handle(stream, "pyshmem.cuda.launch"),
                       packed, cooperative, "pyshmem.cuda.launch")
        return
    if stream is not None:
        raise InvalidArgumentError(f"{where('cuda.launch')}: stream= is for GPU launches; the CPU build runs the kernel "
                                   "synchronously (pass stream=None)")
    _cpu_kernels.run_grid(kernel.module._lib, kernel._func, kernel.name, grid3, block3, args, shared_mem, stack_size,
                          cooperative)


__all__ = ["Kernel", "Module", "compile", "include_paths", "launch", "nvshmem_include_path"]
