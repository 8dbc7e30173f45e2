"""How ``pyshmem-nvcc --cpu`` builds a CUDA program for the CPU (pyshmem/nvcc.py parses the
command line and calls :func:`commands`).

Each source goes through three steps, as nvcc itself preprocesses before it splits host
from device code:

1. **Preprocess** with the host compiler, ``pyshmem/cpu_program.h`` first (CUDA's runtime
   and driver API subsets, the CPU kernel runner, NVSHMEM's names), with
   ``PYSHMEM_CPU_PREPROCESS`` defined so that ``__global__`` and ``__shared__`` survive.
2. **Rewrite** what follows the prelude (pyshmem/_cuda_source.py): ``<<<...>>>`` launches,
   kernel registration, ``extern __shared__``. Working on the preprocessed text, it sees
   kernels and launches written inside macros and in included headers.
3. **Compile** the rewritten text with the prelude *precompiled*: a GCC precompiled
   header per set of compiler flags, cached per user (``$XDG_CACHE_HOME/pyshmem/pch``,
   keyed by the compiler, the flags and the contents of pyshmem's headers), so each
   compile parses the program's own code and not the ~120,000 lines of the prelude again.
   Where the precompiled header cannot be used (another compiler, a flag it does not
   match), the compiler reads the prelude itself: slower, the same program.

Then the objects are linked with pyshmem's runtime, or, for ``-cubin``, into a "CPU cubin":
a shared object holding the source's kernels and what they call (host code is dropped by
the linker's garbage collection), which ``cuModuleLoad`` loads (pyshmem/cpu_cuda_module.h).
"""

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

PRELUDE = "pyshmem/cpu_program.h"
PRELUDE_END = "pyshmem_cpu_program_prelude_end"
# Flags of the compile step that a precompiled header must have been built with.
_CODEGEN = ("-pthread", "-fstack-clash-protection")
_MODULE = ("-fPIC", "-fvisibility=hidden", "-ffunction-sections", "-fdata-sections", "-DPYSHMEM_CPU_MODULE=1")
_KEEP_PCH = 6  # precompiled headers kept in the cache (each ~100 MB)


# What NVSHMEM's and CUDA's build lines link that pyshmem's runtime replaces on the CPU.
_REPLACED_LIBS = re.compile(r"-l(nvshmem\w*|cuda|cudart\w*|cudadevrt|nvidia-ml)$")


class Step:
    """One step of a build: a command (argv), a rewrite of `src`'s preprocessed text `inp`
    into `out` (run in this process), or an action: (callable returning (exit status,
    output), what --show prints)."""

    def __init__(self, argv=None, rewrite=None, action=None):
        self.argv, self.rewrite, self.action = argv, rewrite, action

    def show(self):
        import shlex

        if self.argv:
            return shlex.join(self.argv)
        if self.action:
            return f"# pyshmem-nvcc: {self.action[1]}"
        inp, out, src = self.rewrite
        return f"# pyshmem-nvcc: rewrite {inp} (preprocessed {src}) into {out}"

    def run(self):
        """Runs the step; returns (exit status, output to show)."""
        if self.argv:
            proc = subprocess.run(self.argv, capture_output=True, text=True)
            return proc.returncode, proc.stdout + proc.stderr
        if self.action:
            return self.action[0]()
        from pyshmem._cuda_source import after_prelude, rewrite_program
        from pyshmem.errors import ShmemError

        inp, out, src = self.rewrite
        try:
            text = rewrite_program(after_prelude(Path(inp).read_text(errors="replace"), PRELUDE_END), src)
        except ShmemError as e:
            return 2, f"pyshmem-nvcc: {e}\n"
        Path(out).write_text(text)
        return 0, ""


def compiler():
    return os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++") or "g++"


def _is_gcc(cxx):
    try:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return False, ""
    return ("clang" not in out.lower() and ("g++" in out or "GCC" in out or "Free Software" in out)), out


def _pch_key(cxx, version, flags, paths):
    """Names a precompiled header by what it depends on: the compiler, the flags and the
    contents of pyshmem's headers, the generated NVSHMEM headers and libcu++'s version."""
    h = hashlib.sha256()
    for part in (cxx, version, "\0".join(flags)):
        h.update(part.encode())
        h.update(b"\0")
    include = Path(paths["include"]) / "pyshmem"
    for header in sorted(include.rglob("*")):
        if header.is_file():
            h.update(str(header.relative_to(include)).encode())
            h.update(header.read_bytes())
    for generated in ("nvshmem.h", "nvshmemx.h"):
        f = Path(paths["nvshmem"]) / generated
        if f.is_file():
            h.update(f.read_bytes())
    version_h = Path(paths["cccl"]) / "cuda" / "std" / "__cccl" / "version.h"
    if version_h.is_file():
        h.update(version_h.read_bytes())
    return h.hexdigest()[:24]


def precompiled_prelude(cxx, flags, paths):
    """The header to -include in the compile step: a cached precompiled prelude for these
    flags, built now if missing (once, even with several pyshmem-nvcc at once); or the
    prelude itself where no precompiled header can be made (not GCC, no cache)."""
    from pyshmem._cpu_kernels import cache_dir

    gcc, version = _is_gcc(cxx)
    if not gcc:
        return PRELUDE, None
    cache = cache_dir("pch")
    key = _pch_key(cxx, version, flags, paths)
    entry = cache / key
    header = entry / "prelude.h"
    if (entry / "prelude.h.gch").is_file():
        os.utime(entry)  # recently used: kept by _prune
        return str(header), None
    with open(cache / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another pyshmem-nvcc may be building it
        if not (entry / "prelude.h.gch").is_file():
            tmp = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=cache))
            try:
                (tmp / "prelude.h").write_text(f"#include \"{PRELUDE}\"\n")
                proc = subprocess.run([cxx, *flags, "-x", "c++-header", str(tmp / "prelude.h"), "-o",
                                       str(tmp / "prelude.h.gch")], capture_output=True, text=True)
                if proc.returncode != 0:
                    return PRELUDE, proc.stderr  # the compile step will report it
                shutil.rmtree(entry, ignore_errors=True)
                os.replace(tmp, entry)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        _prune(cache)
    return str(header), None


def _prune(cache):
    """Keeps the _KEEP_PCH most recently used precompiled headers."""
    entries = sorted((p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")),
                     key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[_KEEP_PCH:]:
        shutil.rmtree(old, ignore_errors=True)
        (cache / f"{old.name}.lock").unlink(missing_ok=True)


def commands(opts, tmp, paths, module=False):
    """The build of `opts` (pyshmem/nvcc.py's parse) for the CPU: a list of Steps per
    source (to run in order; the sources' lists may run at once), and the link Step (or
    None with -c). `module`: build a CPU cubin (nvcc's -cubin)."""
    cxx = compiler()
    cc = os.environ.get("CC") or shutil.which("gcc") or shutil.which("cc") or "gcc"
    opt = [opts["opt"] or "-O2"]
    std = opts["std"] or "-std=c++17"
    if re.fullmatch(r"-std=(c|gnu)\+\+(98|03|0x|11|1y|14)", std):
        std = "-std=c++17"  # pyshmem's headers need C++17 (nvcc's own default is C++17 too)
    includes = [f"-I{paths['cpu_program_include']}", f"-I{paths['cpu_include']}", f"-I{paths['include']}",
                f"-I{paths['nvshmem']}", f"-I{paths['nvshmem_tree']}", f"-I{paths['cccl']}"]
    defines, user_includes = [], []  # -D/-U (every step) and -I/-isystem/-include (the preprocessing)
    it = iter(opts["compile"])
    for f in it:
        pair = [f, next(it)] if f in ("-I", "-D", "-U", "-isystem", "-include") else [f]
        (defines if pair[0][:2] in ("-D", "-U") else user_includes).extend(pair)
    extra = list(_MODULE) if module else []
    base = [std, *opt, *_CODEGEN, *extra, "-DPYSHMEM_CPU_PROGRAM=1", *includes, *defines, *opts["host"]]
    steps, objects = [], []
    prelude = None
    for index, src in enumerate(opts["sources"]):
        if opts["compile_only"] and not module:
            obj = opts["output"] if opts["output"] else Path(src).with_suffix(".o").name
        else:
            obj = str(Path(tmp) / f"{index}_{Path(src).name}.o")  # by index: sources may share a name
        objects.append(obj)
        if src.endswith(".c"):
            steps.append([Step([cc, *opt, *extra, *includes, *opts["compile"], *opts["host"], "-c", src, "-o", obj])])
            continue
        if prelude is None:
            prelude, _ = precompiled_prelude(cxx, base, paths)
        pre = str(Path(tmp) / f"{index}_{Path(src).name}.ii")
        rewritten = str(Path(tmp) / f"{index}_{Path(src).name}.cpp")
        # -iquote: "header.h" next to the original source, as if compiling it in place.
        steps.append([
            Step([cxx, *base, "-DPYSHMEM_CPU_PREPROCESS=1", "-E", "-x", "c++", "-include", PRELUDE,
                  f"-iquote{Path(src).resolve().parent}", *user_includes, src, "-o", pre]),
            Step(rewrite=(pre, rewritten, src)),
            Step([cxx, *base, "-x", "c++", "-include", prelude, "-c", rewritten, "-o", obj]),
        ])
    link = None
    if module:
        out = opts["output"] or (Path(opts["sources"][0]).stem + ".cubin" if opts["sources"] else "a.cubin")
        link = Step([cxx, "-shared", *objects, *opts["objects"], "-o", out, "-Wl,--gc-sections", "-Wl,-z,defs",
                     "-pthread", "-ldl"])
    elif not opts["compile_only"]:
        out = opts["output"] or "a.out"
        libs = [f for f in opts["link"] if not _REPLACED_LIBS.match(f)]
        link = Step([cxx, *objects, *opts["objects"], "-o", out, *libs, f"-L{paths['lib']}", "-lpyshmem_core",
                     "-pthread", "-ldl"])
    return steps, link


__all__ = ["PRELUDE", "PRELUDE_END", "Step", "commands", "precompiled_prelude"]
