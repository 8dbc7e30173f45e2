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
            "nvshmem": nvshmem_include_path(), "nvshmem_tree": str(Path(inc) / "pyshmem" / "nvshmem_tree"),
            "lib": str(lib)}


# Flags both the compile and the link step need.
_BOTH = ("-pthread", "-fopenmp", "-fsanitize", "-fno-sanitize", "-flto", "-fprofile", "-fcoverage", "--coverage")
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
    opts = {"target": None, "show": False, "compile_only": False, "device_only": None, "output": None, "sources": [],
            "objects": [], "compile": [], "host": [], "device": [], "link": [], "opt": None, "std": None}
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
        elif a in ("-cubin", "--cubin", "-fatbin", "--fatbin", "-ptx", "--ptx"):
            opts["device_only"] = a.lstrip("-")
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
        elif re.fullmatch(r"-t\d+", a):  # nvcc's compile threads (CMake passes -t4)
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


def cpu_commands(opts, tmp):
    """The CPU build of `opts` (pyshmem/_cpu_build.py): ([steps of each source], link step
    or None). With -cubin/-fatbin, a module of the sources' kernels for cuModuleLoad."""
    from pyshmem._cpu_build import commands

    if opts["device_only"] == "ptx":
        raise UsageError("-ptx: the CPU build has no PTX; build a module for cuModuleLoad with -cubin")
    if opts["device_only"] and len(opts["sources"]) != 1:
        raise UsageError(f"-{opts['device_only']} takes one source file")
    return commands(opts, tmp, _paths(), module=bool(opts["device_only"]))


_MPI_LIBRARIES = re.compile(r"-l(mpi|mpi_cxx|mpicxx|mpich|mpichcxx|mpi_ibm|msmpi)$")


def with_mpi_bootstrap(opts, paths):
    """Adds pyshmem's MPI bootstrap (pyshmem/nvshmem_mpi_bootstrap.cpp: what
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM) calls) to the sources of a program
    whose link line names an MPI library; it is compiled with the program's flags, so
    with its <mpi.h>."""
    if opts["compile_only"] or opts["device_only"] or not any(_MPI_LIBRARIES.match(f) for f in opts["link"]):
        return opts
    return dict(opts, sources=[*opts["sources"], str(Path(paths["include"]) / "pyshmem" / "nvshmem_mpi_bootstrap.cpp")])


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
    """The nvcc build of `opts` for the GPU: ([steps of each source], the link phase's steps
    or None), as cpu_commands. With -cubin/-fatbin/-ptx, one nvcc call that makes the module (the
    device state defined in it: nvshmemx_cumodule_init fills it)."""
    from pyshmem._cpu_build import Step

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
    includes = [f"-I{p['nvshmem']}", f"-I{p['nvshmem_tree']}", f"-I{p['include']}"]
    if opts["device_only"]:
        if len(opts["sources"]) != 1:
            raise UsageError(f"-{opts['device_only']} takes one source file")
        out = opts["output"] or str(Path(opts["sources"][0]).with_suffix("." + opts["device_only"]).name)
        return [[Step([nvcc, std, *opt, "-DPYSHMEM_GPU_PROGRAM=1", *includes, *opts["compile"], *host, *opts["device"],
                       f"-{opts['device_only']}", opts["sources"][0], "-o", out])]], None
    steps, objects = [], []
    common = [std, *opt, "-rdc=true", "-DPYSHMEM_GPU_PROGRAM=1", *includes, *opts["compile"], *host, *opts["device"]]
    for index, src in enumerate(opts["sources"]):
        if opts["compile_only"]:
            obj = opts["output"] if opts["output"] else Path(src).with_suffix(".o").name
        else:
            obj = str(Path(tmp) / f"{index}_{Path(src).name}.o")  # by index: sources may share a name
        # The device state is declared in every source and defined once, at the link
        # (below): so objects compiled one at a time with -c link together.
        lang = common[1:] if src.endswith(".c") else common
        steps.append([Step([nvcc, *lang, "-DPYSHMEM_DEVICE_STATE_EXTERN", "-c", src, "-o", obj])])
        objects.append(obj)
    if opts["compile_only"]:
        return steps, None
    # The link step's own unit: the one definition of the device state, and the
    # host-callable NVSHMEM functions that host-only units (.cpp) call (their <nvshmem.h>
    # only declares them; see host_api_unit). Made once the objects exist.
    state = Path(tmp) / "pyshmem_device_state.cu"
    inputs = [*objects, *opts["objects"]]
    out = opts["output"] or "a.out"
    link = [x for f in opts["link"] for x in _nvcc_link_flag(f)]
    headers = [Path(p["nvshmem"]) / "nvshmem.h", Path(p["include"]) / "pyshmem" / "nvshmem_base.h"]
    return steps, [Step(action=(lambda: host_api_unit(state, inputs, headers),
                                f"write {state}: the device state and the NVSHMEM host functions the objects use")),
                   Step([nvcc, *common, "-c", str(state), "-o", str(state.with_suffix(".o"))]),
                   Step([nvcc, *opt, "-rdc=true", *_link_device_flags(opts["device"]), *objects,
                         str(state.with_suffix(".o")), *opts["objects"], "-o", out, *link, f"-L{p['lib']}",
                         "-lpyshmem_core", "-Xcompiler", "-pthread", "-ldl"])]


_NM_SYMBOL = re.compile(r"^\s*(?:[0-9a-fA-F]+\s+)?([A-Za-z])\s+(.*)$")
_NVSHMEM_FUNCTION = re.compile(r"(?:^|\s)(nvshmemx?_\w+)(<0>)?\(")


def host_api_unit(path, objects, headers):
    """Writes the link step's unit `path`: <nvshmem.h> (so the program's device state is
    defined) and the address of every host-callable NVSHMEM function that some object
    uses but none defines. A host-only unit (a .cpp: the host compiler builds it without
    device code) declares those functions; the units nvcc builds define them inline, so
    they exist only where used. Taking their addresses here makes this unit emit them
    (weak, as every inline function), so the link finds them. Returns (status, output)."""
    defined, wanted = set(), {}
    for obj in objects:
        try:
            proc = subprocess.run(["nm", "-C", str(obj)], capture_output=True, text=True)
        except OSError as e:
            return 1, f"pyshmem-nvcc: nm (binutils) is needed to link with --gpu: {e}\n"
        if proc.returncode != 0:
            return 1, f"pyshmem-nvcc: nm {obj} failed: {proc.stderr}"
        for line in proc.stdout.splitlines():
            m = _NM_SYMBOL.match(line)
            f = m and _NVSHMEM_FUNCTION.search(m.group(2))
            if not f:
                continue
            if m.group(1) == "U":
                wanted[f.group(1)] = f.group(2) or ""
            elif m.group(1).isupper():  # a global definition (lowercase: local to its object)
                defined.add(f.group(1))
    text = "".join(h.read_text() for h in headers if h.is_file())
    kept = [f"(void*)&{name}{inst}" for name, inst in sorted(wanted.items())
            if name not in defined and re.search(rf"\b{name}\(", text)]
    lines = ["// pyshmem-nvcc --gpu: the program's one definition of pyshmem_d_state (its device state), and",
             "// the NVSHMEM host functions its host-only units call (see pyshmem/nvcc.py host_api_unit)",
             "#include <nvshmem.h>"]
    if kept:
        lines += ["__attribute__((used)) static void* const pyshmem_host_api_kept[] = {",
                  *[f"    {k}," for k in kept], "};"]
    Path(path).write_text("\n".join(lines) + "\n")
    return 0, ""


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


def _as_list(link):
    """The link phase's steps (run in order once every source is built): None, one Step
    (the CPU build), or a list (the GPU build makes its own unit from the objects first)."""
    return [] if link is None else link if isinstance(link, list) else [link]


def _run_steps(step_lists):
    """Runs each source's steps in order, as many sources at once as there are CPUs;
    returns the first nonzero exit status (0 when all succeed). Each step's messages go
    to stderr whole."""
    from concurrent.futures import ThreadPoolExecutor

    def run(steps):
        for step in steps:
            rc, text = step.run()
            if text:
                sys.stderr.write(text)
            if rc != 0:
                return rc
        return 0

    with ThreadPoolExecutor(max_workers=max(1, min(len(step_lists), os.cpu_count() or 1))) as pool:
        return next((rc for rc in pool.map(run, step_lists) if rc != 0), 0)


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
            opts = with_mpi_bootstrap(opts, _paths())
            steps, link = gpu_commands(opts, tmp) if target == "gpu" else cpu_commands(opts, tmp)
            if opts["show"]:
                for step in [s for source in steps for s in source] + _as_list(link):
                    print(step.show())
                return 0
            return _run_steps(steps) or (_run_steps([_as_list(link)]) if link else 0)
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
