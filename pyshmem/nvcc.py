"""``pyshmem-nvcc``: builds an NVSHMEM-style CUDA program against pyshmem, like mpicc.

    pyshmem-nvcc [--cpu|--gpu] [--show] prog.cu [more.cu ...] -o prog [nvcc-style flags]
    shmemrun -n 4 ./prog

``--cpu`` builds the program for the CPU with the host C++ compiler: kernels run on
pyshmem's CPU execution of CUDA kernels (every CUDA thread a fiber, every block an OS
thread: pyshmem/cpu_kernel.h), host code gets pyshmem's CUDA runtime subset on the CPU
(``<cuda_runtime.h>``: pyshmem/cpu_cuda_runtime.h) and NVSHMEM's host API
(pyshmem/nvshmem_host.h, nvshmem_host_cpu.h), and the program links pyshmem's runtime
(``pyshmem/lib``). Each source is first rewritten (pyshmem/_cuda_source.py: ``<<<...>>>``
launches, kernel registration, ``extern __shared__``) with its line numbers kept.

``--gpu`` builds it with nvcc (``$NVCC``, else ``nvcc`` on the PATH, else
``$CUDA_HOME/bin/nvcc``) for the GPU: the sources as they are, NVSHMEM's host API on
pyshmem's GPU heap (pyshmem/nvshmem_host_gpu.h), always with ``-rdc=true`` (as NVSHMEM
requires) and ``-DPYSHMEM_DEVICE_STATE_EXTERN`` (the link step compiles the one definition
of the device state, so link ``-c`` objects with pyshmem-nvcc too), linked with nvcc
against pyshmem's runtime and CUDA's runtime. With neither flag the target is ``gpu`` when nvcc is found and the CUDA
driver sees a GPU, else ``cpu``.

Flags understood as nvcc's: ``-c``, ``-dc``, ``-o FILE``, ``-O0..3``, ``-g``, ``-I``, ``-D``,
``-U``, ``-L``, ``-l``, ``-std=``, ``-Xcompiler ARGS``, ``-Xlinker ARGS``, ``-w``, ``-W...``,
``-f...`` (``-Wl,...`` to the link step; ``-pthread``, ``-fopenmp``, ``-fsanitize=...`` to both);
NVSHMEM's libraries (``-lnvshmem*``) are dropped, pyshmem's runtime replaces them, and on
the CPU CUDA's too (``-lcuda``, ``-lcudart``, ``-lnvidia-ml``). Device-code flags
(``-arch``, ``-gencode``, ``-code``, ``-G``, ``-lineinfo``, ``--expt-*``, ``--extended-lambda``,
``-Xptxas``, ``-Xnvlink``, ``-maxrregcount``, ``-x cu``, ``-ccbin``, ``--use_fast_math``,
``-cudart=...``) go to nvcc with ``--gpu`` and are accepted and ignored with ``--cpu``.
``--show`` prints the commands instead of running them.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

_SOURCES = (".cu", ".cpp", ".cc", ".cxx", ".C")
_IGNORED_WITH_VALUE = {"-arch", "--gpu-architecture", "-gencode", "--generate-code", "-code", "--gpu-code", "-ccbin",
                       "--compiler-bindir", "-Xptxas", "--ptxas-options", "-maxrregcount", "--maxrregcount", "-x",
                       "-Xnvlink", "-t", "--threads"}
_IGNORED_PREFIXES = ("-arch=", "--gpu-architecture=", "-gencode=", "--generate-code=", "-code=", "-rdc=",
                     "--relocatable-device-code=", "--expt-", "-Xptxas=", "-maxrregcount=", "-ccbin=",
                     "--use_fast_math", "-use_fast_math", "--default-stream", "-t=", "--threads=")
_IGNORED = {"-G", "--device-debug", "-lineinfo", "--generate-line-info", "--extended-lambda", "-rdc",
            "--expt-relaxed-constexpr", "--expt-extended-lambda"}
# Flags for the CPU target's nothing that still mean something to nvcc (--gpu passes them).
_DEVICE_PREFIXES = ("-cudart=", "--cudart=")
# nvcc's relocatable-device-code switches: --gpu always uses -rdc=true.
_RDC = ("-rdc", "-rdc=", "--relocatable-device-code=")


class UsageError(Exception):
    """A command line pyshmem-nvcc cannot build from (printed, exit status 2)."""


def _paths():
    """Include directories and the runtime library directory of this pyshmem."""
    from pyshmem.cuda import include_paths, nvshmem_include_path

    pkg = Path(__file__).resolve().parent
    inc, cccl = include_paths()
    lib = pkg / "lib"
    if not (lib / "libpyshmem_core.a").is_file():
        raise UsageError(f"{lib / 'libpyshmem_core.a'} is missing: pyshmem's build makes it (pip install -e . "
                         "again, or python setup.py build_ext --inplace)")
    return {"cpu_program_include": str(Path(inc) / "pyshmem" / "cpu_program_include"),
            "cpu_include": str(Path(inc) / "pyshmem" / "cpu_include"), "include": inc, "cccl": cccl,
            "nvshmem": nvshmem_include_path(), "lib": str(lib)}


# Flags both the compile and the link step need.
_BOTH = ("-pthread", "-fopenmp", "-fsanitize", "-fno-sanitize", "-flto", "-fprofile", "-fcoverage", "--coverage")
# What NVSHMEM's and CUDA's build lines link that pyshmem's runtime replaces on the CPU.
_REPLACED_LIBS = re.compile(r"-l(nvshmem\w*|cuda|cudart\w*|cudadevrt|nvidia-ml)$")
_NVSHMEM_LIBS = re.compile(r"-lnvshmem\w*$")


def _host_flag(opts, flag):
    """A flag for the host compiler: linker flags to the link step, some to both."""
    if flag.startswith("-Wl,"):
        opts["link"].append(flag)
    elif flag.startswith(_BOTH):
        opts["host"].append(flag)
        opts["link"].append(flag)
    else:
        opts["host"].append(flag)


def parse(argv):
    """Splits an nvcc-style command line into a dict: target, show, compile_only, output,
    sources, objects, compile (preprocessor flags), host (host-compiler flags), device
    (nvcc's device-code flags), link (flags for linking, CUDA's libraries included),
    opt, std."""
    opts = {"target": None, "show": False, "compile_only": False, "output": None, "sources": [], "objects": [],
            "compile": [], "host": [], "device": [], "link": [], "opt": None, "std": None}
    args = list(argv)
    i = 0

    def value(flag):
        nonlocal i
        if i + 1 >= len(args):
            raise UsageError(f"{flag} needs a value")
        i += 1
        return args[i]

    while i < len(args):
        a = args[i]
        if a in ("--cpu", "--gpu"):
            opts["target"] = a[2:]
        elif a in ("--show", "-show", "--dryrun"):
            opts["show"] = True
        elif a in ("-c", "--compile", "-dc", "--device-c"):
            opts["compile_only"] = True
        elif a in ("-o", "--output-file"):
            opts["output"] = value(a)
        elif a.startswith("-o") and len(a) > 2:
            opts["output"] = a[2:]
        elif a.startswith("-O"):
            opts["opt"] = a
        elif a.startswith("-std=") or a.startswith("--std="):
            opts["std"] = "-std=" + a.split("=", 1)[1]
        elif a in ("-std", "--std"):
            opts["std"] = "-std=" + value(a)
        elif a in ("-I", "-D", "-U", "-isystem", "--include-path", "--define-macro", "-include"):
            flag = {"--include-path": "-I", "--define-macro": "-D"}.get(a, a)
            opts["compile"] += [flag, value(a)]
        elif a[:2] in ("-I", "-D", "-U"):
            opts["compile"].append(a)
        elif a in ("-L", "-l", "--library-path", "--library"):
            flag = {"--library-path": "-L", "--library": "-l"}.get(a, a) + value(a)
            if not _NVSHMEM_LIBS.match(flag):
                opts["link"].append(flag)
        elif a[:2] in ("-L", "-l") and a != "-lineinfo":
            if not _NVSHMEM_LIBS.match(a):
                opts["link"].append(a)
        elif a in ("-Xcompiler", "--compiler-options") or a.startswith(("-Xcompiler=", "--compiler-options=")):
            text = value(a) if "=" not in a else a.split("=", 1)[1]
            for x in text.replace(",", " ").split():
                _host_flag(opts, x)
        elif a in ("-Xlinker", "--linker-options"):
            opts["link"] += ["-Wl," + x for x in value(a).split(",") if x]
        elif a in ("-g", "-w", "-pthread", "-fPIC") or a.startswith(("-W", "-f")):
            _host_flag(opts, a)
        elif a in _RDC or a.startswith(_RDC):
            pass  # --gpu: always -rdc=true; --cpu: no device code
        elif a in _IGNORED or a.startswith(_IGNORED_PREFIXES + _DEVICE_PREFIXES):
            opts["device"].append(a)
        elif a in _IGNORED_WITH_VALUE:
            opts["device"] += [a, value(a)]
        elif a.startswith("-"):
            raise UsageError(f"unknown option {a!r} (pass host-compiler flags with -Xcompiler {a})")
        elif a.endswith(_SOURCES):
            opts["sources"].append(a)
        elif a.endswith((".o", ".a", ".so")):
            opts["objects"].append(a)
        elif a.endswith(".c"):
            opts["sources"].append(a)
        else:
            raise UsageError(f"{a!r}: not a source (.cu .cpp .cc .c) or object (.o .a .so) file")
        i += 1
    if not opts["sources"] and not opts["objects"]:
        raise UsageError("no input files")
    if opts["compile_only"] and opts["output"] and len(opts["sources"]) > 1:
        raise UsageError("-c with -o takes one source file")
    return opts


def _rewrite(src_path, tmp, index):
    """The source as the host compiler gets it (rewritten, line numbers kept)."""
    from pyshmem._cpu_kernels import rewrite_dynamic_shared
    from pyshmem._cuda_source import register_kernels, rewrite_chevrons, single_kernels

    text = rewrite_dynamic_shared(Path(src_path).read_text())
    text = register_kernels(rewrite_chevrons(text, src_path, single_kernels(text)))
    out = Path(tmp) / f"{index}_{Path(src_path).name}.cpp"  # by index: sources may share a name
    quoted = str(src_path).replace("\\", "\\\\").replace('"', '\\"')
    out.write_text(f'#line 1 "{quoted}"\n' + text)
    return out


def cpu_commands(opts, tmp):
    """The host compiler commands (a list of argv lists) that build `opts` for the CPU."""
    p = _paths()
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or "g++"
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc") or "gcc"
    opt = [opts["opt"] or "-O2"]
    includes = [f"-I{p['cpu_program_include']}", f"-I{p['cpu_include']}", f"-I{p['include']}", f"-I{p['nvshmem']}", f"-I{p['cccl']}"]
    cmds, objects = [], []
    std = opts["std"] or "-std=c++17"
    if re.fullmatch(r"-std=(c|gnu)\+\+(98|03|0x|11|1y|14)", std):
        std = "-std=c++17"  # pyshmem's headers need C++17 (nvcc's own default is C++17 too)
    for index, src in enumerate(opts["sources"]):
        if opts["compile_only"]:
            obj = opts["output"] if opts["output"] else Path(src).with_suffix(".o").name
        else:
            obj = str(Path(tmp) / f"{index}_{Path(src).name}.o")  # by index: sources may share a name
        if src.endswith(".c"):
            cmds.append([cc, *opt, *includes, *opts["compile"], *opts["host"], "-c", src, "-o", obj])
        else:
            rewritten = _rewrite(src, tmp, index)
            # -iquote: "header.h" next to the original source, as if compiling it in place.
            # cpu_launch.h (and the CUDA runtime) is included first, as nvcc includes
            # <cuda_runtime.h> into every .cu file.
            cmds.append([cxx, std, *opt, "-pthread", "-fstack-clash-protection", "-x", "c++",
                         "-include", "pyshmem/cpu_kernel.h", "-include", "pyshmem/cpu_launch.h",
                         "-DPYSHMEM_CPU_PROGRAM=1", f"-iquote{Path(src).resolve().parent}", *includes,
                         *opts["compile"], *opts["host"], "-c", str(rewritten), "-o", obj])
        objects.append(obj)
    if not opts["compile_only"]:
        out = opts["output"] or "a.out"
        link = [f for f in opts["link"] if not _REPLACED_LIBS.match(f)]
        cmds.append([cxx, *objects, *opts["objects"], "-o", out, *link, f"-L{p['lib']}", "-lpyshmem_core",
                     "-pthread", "-ldl"])
    return cmds


def find_nvcc():
    """nvcc's path ($NVCC, the PATH, $CUDA_HOME/bin, /usr/local/cuda/bin), or None."""
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"),
                      os.path.join(os.environ.get("CUDA_HOME", ""), "bin", "nvcc") if os.environ.get("CUDA_HOME") else None,
                      "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def _nvcc_link_flag(flag):
    """A link flag as nvcc takes it: -L/-l as they are, -Wl,... through -Xlinker, the rest
    (-pthread, -fopenmp, -fsanitize=...) through -Xcompiler."""
    if flag.startswith(("-L", "-l")):
        return [flag]
    if flag.startswith("-Wl,"):
        return ["-Xlinker", flag[4:]]
    return ["-Xcompiler", flag]


def gpu_commands(opts, tmp):
    """The nvcc commands (a list of argv lists) that build `opts` for the GPU."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise UsageError("--gpu: nvcc not found (set NVCC or CUDA_HOME, or put nvcc on the PATH); build for the CPU "
                         "with --cpu")
    p = _paths()
    opt = [opts["opt"]] if opts["opt"] else []
    std = opts["std"] or "-std=c++17"
    if re.fullmatch(r"-std=(c|gnu)\+\+(98|03|0x|11|1y|14)", std):
        std = "-std=c++17"  # pyshmem's headers need C++17 (nvcc's own default)
    host = ["-Xcompiler", ",".join(opts["host"])] if opts["host"] else []
    includes = [f"-I{p['nvshmem']}", f"-I{p['include']}"]
    cmds, objects = [], []
    common = [std, *opt, "-rdc=true", "-DPYSHMEM_GPU_PROGRAM=1", *includes, *opts["compile"], *host, *opts["device"]]
    for index, src in enumerate(opts["sources"]):
        if opts["compile_only"]:
            obj = opts["output"] if opts["output"] else Path(src).with_suffix(".o").name
        else:
            obj = str(Path(tmp) / f"{index}_{Path(src).name}.o")  # by index: sources may share a name
        # The device state is declared in every source and defined once, at the link
        # (below): so objects compiled one at a time with -c link together.
        lang = common[1:] if src.endswith(".c") else common
        cmds.append([nvcc, *lang, "-DPYSHMEM_DEVICE_STATE_EXTERN", "-c", src, "-o", obj])
        objects.append(obj)
    if not opts["compile_only"]:
        state = Path(tmp) / "pyshmem_device_state.cu"
        state.write_text("// pyshmem-nvcc --gpu: the program's one definition of pyshmem_d_state (its device state)\n"
                         "#include <nvshmem.h>\n")
        cmds.append([nvcc, *common, "-c", str(state), "-o", str(state.with_suffix(".o"))])
        out = opts["output"] or "a.out"
        link = [x for f in opts["link"] for x in _nvcc_link_flag(f)]
        cmds.append([nvcc, *opt, "-rdc=true", *_link_device_flags(opts["device"]), *objects, str(state.with_suffix(".o")),
                     *opts["objects"], "-o", out, *link, f"-L{p['lib']}", "-lpyshmem_core", "-Xcompiler", "-pthread",
                     "-ldl"])
    return cmds


def _link_device_flags(flags):
    """nvcc's device flags that the link step takes too (the architectures for the device
    link); -x names the language of sources and would make nvcc read objects as CUDA."""
    out, skip = [], False
    for f in flags:
        if skip:
            skip = False
        elif f == "-x":
            skip = True
        else:
            out.append(f)
    return out


def gpu_present():
    """True when the CUDA driver loads and sees at least one GPU (the default target)."""
    import ctypes

    try:
        cuda = ctypes.CDLL(os.environ.get("PYSHMEM_CUDA_DRIVER") or "libcuda.so.1")
        count = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except (OSError, AttributeError):
        return False


def _run_compiles(cmds):
    """Runs the compile commands, as many at once as there are CPUs; returns the first
    nonzero exit status (0 when all succeed). Each compiler's messages go to stderr whole."""
    from concurrent.futures import ThreadPoolExecutor

    def run(cmd):
        proc = subprocess.run(cmd, capture_output=True, text=True)
        sys.stdout.write(proc.stdout)
        sys.stderr.write(proc.stderr)
        return proc.returncode

    if len(cmds) == 1:
        return subprocess.run(cmds[0]).returncode
    with ThreadPoolExecutor(max_workers=max(1, min(len(cmds), os.cpu_count() or 1))) as pool:
        return next((rc for rc in pool.map(run, cmds) if rc != 0), 0)


def main(argv=None):
    """Console entry point. Returns the exit status (the compiler's, or 2 for usage)."""
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    try:
        opts = parse(argv)
        target = opts["target"] or ("gpu" if find_nvcc() and gpu_present() else "cpu")
        with tempfile.TemporaryDirectory(prefix="pyshmem-nvcc-") as tmp:
            cmds = gpu_commands(opts, tmp) if target == "gpu" else cpu_commands(opts, tmp)
            if opts["show"]:
                for cmd in cmds:
                    print(shlex.join(cmd))
                return 0
            compiles, link = (cmds, []) if opts["compile_only"] else (cmds[:-1], cmds[-1:])
            return _run_compiles(compiles) or (subprocess.run(link[0]).returncode if link else 0)
    except (UsageError, FileNotFoundError, OSError) as e:
        print(f"pyshmem-nvcc: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # a source the rewrite cannot handle (InvalidArgumentError)
        from pyshmem.errors import ShmemError

        if not isinstance(e, ShmemError):
            raise
        print(f"pyshmem-nvcc: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
