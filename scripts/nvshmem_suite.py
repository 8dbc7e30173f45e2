#!/usr/bin/env python3
"""Builds NVIDIA's NVSHMEM perftest and examples from an NVSHMEM source tree you have,
as NVSHMEM's CMake builds them, with pyshmem-nvcc, runs each under shmemrun, and prints
a table with ``K/N pass`` last.

    python scripts/nvshmem_suite.py /path/to/nvshmem                  # CPU build, run all
    python scripts/nvshmem_suite.py /path/to/nvshmem --target gpu --build-only
    python scripts/nvshmem_suite.py /path/to/nvshmem --only 'shmem_p_|ring' -v

NVIDIA's files carry NVIDIA's licence, which forbids redistributing them: pyshmem never
contains them. This script reads them from where you have them (a checkout or release
tarball of github NVIDIA/nvshmem: the folder holding ``perftest/`` and ``examples/``) and
writes only into ``--build-dir``.

What is built is what the tree's CMake lists say, without MPI (``NVSHMEM_MPI_SUPPORT=0``):
every ``nvshmem_add_perftest(...)`` of ``perftest/**/CMakeLists.txt`` (linked with the
helper library ``perftest/common/utils.cu``), every ``nvshmem_add_cubin_perftest(...)``
as a "cubin" next to its program when ``--cubin`` is given (run again with
``NVSHMEM_TEST_CUBIN_LIBRARY=1``), and the examples of ``OPTIONAL_MPI_EXAMPLES`` in
``examples/CMakeLists.txt`` (with ``--mpi``, also ``MPI_EXAMPLES``, as NVSHMEM's CMake
with ``NVSHMEM_MPI_SUPPORT=1``: built with ``mpicxx --showme``'s flags and
``-DNVSHMEMTEST_MPI_SUPPORT``, run under ``mpirun``). Flags are CMake's for these targets: ``-std=c++17``,
``-rdc=true``, ``-t4``, the build type's (``release``: ``-O3 -DNDEBUG``, as NVSHMEM's own
build; ``debug``: ``-O0 -g``, asserts on), ``-I perftest/common`` for the perftest.

A program whose build stops at a documented refusal (a call pyshmem does not provide,
whose compile error says "pyshmem does not provide ...") is listed as ``refused`` with
that reason, apart from the failures. Each program runs with its first ``.args`` line (NVIDIA's runner's argument file; every
line with ``--all-args``) on the PE counts NVIDIA's runner uses for it, capped at
``--max-pes``: 2 for ``pt-to-pt``, 1/2/4 for the rest, 2 and 4 for the examples, except
those written for one PE count (EXAMPLE_NPES), which run at that count (``--npes``
overrides all). A run passes when it exits 0 within ``--timeout``; the first lines of a
failure's output are in the table's log file (``<build-dir>/suite.log``). A program
passes when all its runs pass; with ``--cubin``, its cubin variant's runs are counted
apart (a line before the last).
"""

import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

BUILD_TYPES = {"release": ["-O3", "-DNDEBUG"], "debug": ["-O0", "-g"], "none": []}
# What NVSHMEM's CMake links every perftest and example with (CUDA::cudart,
# CUDA::cuda_driver, nvshmem_host, nvshmem_device): pyshmem-nvcc drops NVSHMEM's
# libraries (its runtime replaces them), and CUDA's too for the CPU.
LINK = ["-lcudart", "-lcuda", "-lnvshmem_host", "-lnvshmem_device"]
NVIDIA_NPES = [1, 2, 4, 8, 16]  # perftestRunner.py's NPE_START_END_STEP
# Examples written for one PE count. moe_shuffle: 16 experts, one per PE (its offset
# exchange reads expert counts from PE threadIdx.x / npes for 16 * npes threads, so any
# other count reads past the last PE).
EXAMPLE_NPES = {"moe_shuffle": [16]}
CUBIN = " cubin"  # the label of a cubin variant's runs


def cmake_calls(path, command):
    """The first arguments of every `command(ARG ...)` call in a CMakeLists.txt."""
    text = re.sub(r"#.*", "", path.read_text())
    return [m.group(1) for m in re.finditer(rf"\b{command}\s*\(\s*([^\s)]+)", text)]


def cmake_list(path, name):
    """The items of `set(NAME item ...)` in a CMakeLists.txt."""
    text = re.sub(r"#.*", "", path.read_text())
    m = re.search(rf"\bset\s*\(\s*{name}\b([^)]*)\)", text)
    return m.group(1).split() if m else []


class Program:
    def __init__(self, kind, source, name, npes, args, mpi=False):
        self.kind, self.source, self.name, self.npes, self.args = kind, source, name, npes, args
        self.mpi = mpi  # built with MPI and run under mpirun
        self.cubin = False
        self.build = None  # (ok, seconds, output)
        self.runs = []  # (label, npes, ok, seconds, output, command, cubin variant?)

    @property
    def label(self):
        return f"{self.kind}/{self.name}"


def discover(tree, max_pes, npes_override, all_args, mpi=False):
    """The programs NVSHMEM's CMake builds without MPI, with their PE counts and args."""
    programs = []
    perftest = tree / "perftest"
    for cm in sorted(perftest.rglob("CMakeLists.txt")):
        cubins = set(cmake_calls(cm, "nvshmem_add_cubin_perftest"))
        for src in cmake_calls(cm, "nvshmem_add_perftest"):
            source = cm.parent / src
            rel = source.relative_to(perftest)
            npes = [2] if "pt-to-pt" in rel.parts else list(NVIDIA_NPES)
            npes = npes_override or [n for n in npes if n <= max_pes]
            args_file = source.with_suffix(".args")
            lines = [ln.strip() for ln in args_file.read_text().splitlines() if ln.strip()] if args_file.is_file() else []
            args = (lines if all_args else lines[:1]) or [""]
            p = Program("perftest", source, str(rel.with_suffix("")), npes, args)
            p.cubin = src in cubins
            programs.append(p)
    examples = tree / "examples"
    cm = examples / "CMakeLists.txt"
    if cm.is_file():
        for src in cmake_list(cm, "OPTIONAL_MPI_EXAMPLES"):
            npes = npes_override or EXAMPLE_NPES.get(Path(src).stem) or [n for n in (2, 4) if n <= max_pes]
            programs.append(Program("examples", examples / src, Path(src).stem, npes, [""]))
        if mpi:  # the MPI_EXAMPLES list is built in a conditional block: take its items from that block
            block = re.search(r"list\s*\(\s*APPEND\s+MPI_EXAMPLES\b([^)]*)\)", re.sub(r"#.*", "", cm.read_text()))
            for src in block.group(1).split() if block else []:
                npes = npes_override or [n for n in (2, 4) if n <= max_pes]
                programs.append(Program("examples", examples / src, Path(src).stem, npes, [""], mpi=True))
    return programs


def tree_version(tree):
    """'3.5.0.0, git <commit>' as far as the tree says."""
    parts = []
    top = tree / "CMakeLists.txt"
    if top.is_file():
        m = re.search(r"\bVERSION\s+(\d+\.\d+\.\d+(?:\.\d+)?)", re.sub(r"cmake_minimum_required\([^)]*\)", "",
                                                                      top.read_text()))
        if m:
            parts.append(m.group(1))
    try:
        commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
        if re.fullmatch(r"[0-9a-f]{40}", commit):
            parts.append(f"git {commit}")
    except (OSError, subprocess.SubprocessError):
        pass
    return ", ".join(parts) or "unknown version"


def nvcc_command(target, gpu_arch):
    cmd = [sys.executable, "-m", "pyshmem.nvcc", f"--{target}"]
    if target == "gpu":
        cmd.append(f"-arch={gpu_arch}")
    return cmd


def run(cmd, cwd=None, env=None, timeout=None):
    """(exit status, seconds, output) of a command; 124 when it timed out."""
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, timeout=timeout, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace", start_new_session=True)
        return proc.returncode, time.monotonic() - t0, proc.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return 124, time.monotonic() - t0, out + f"\n[timed out after {timeout} s]"


def driver_stub(out):
    """A directory with a libcuda.so to link against when this machine has none (no
    NVIDIA driver, no toolkit stubs): one function per driver entry point of the
    toolkit's <cuda.h>, each returning CUDA_ERROR_STUB_LIBRARY, as the toolkit's own
    stubs do. Programs link against it; they run only where the real driver is. None
    when the real library is found or the stub cannot be made."""
    try:
        found = "libcuda.so" in subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    except OSError:
        found = False
    home = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda"))
    if found or any((home / d / "libcuda.so").exists() for d in ("lib64/stubs", "targets/x86_64-linux/lib/stubs")):
        return None
    header = home / "include" / "cuda.h"
    if not header.is_file():
        return None
    # Preprocessed, so the names are the versioned ones programs reference (cuMemAlloc_v2 ...).
    pre = subprocess.run(["cc", "-E", "-P", f"-I{home / 'include'}", str(header)], capture_output=True, text=True)
    names = sorted(set(re.findall(r"\bCUresult\s+(cu\w+)\s*\(", pre.stdout)))
    if pre.returncode != 0 or not names:
        return None
    stub = out / "stubs"
    stub.mkdir(parents=True, exist_ok=True)
    src = stub / "libcuda_stub.c"
    src.write_text("/* written by pyshmem's scripts/nvshmem_suite.py: a link-time stand-in for libcuda */\n" +
                   "".join(f"int {n}(void) {{ return 34; }}\n" for n in names))  # CUDA_ERROR_STUB_LIBRARY
    made = subprocess.run(["cc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(stub / "libcuda.so"), str(src)],
                          capture_output=True, text=True)
    return stub if made.returncode == 0 else None


def build_all(programs, tree, out, opts):
    """Compiles the perftest helper, then every program (and cubin), `opts.jobs` at once."""
    nvcc = [*nvcc_command(opts.target, opts.gpu_arch), *opts.nvcc_flag]
    flags = ["-std=c++17", "-rdc=true", "-t4", *BUILD_TYPES[opts.build_type]]
    link = list(LINK)
    if opts.target == "gpu":
        stub = driver_stub(out)
        if stub:
            print(f"no libcuda.so on this machine: linking against a stub made from <cuda.h> in {stub} (the programs "
                  "link; they run where NVIDIA's driver is)", flush=True)
            link.insert(0, f"-L{stub}")
    common = tree / "perftest" / "common"
    helper = out / "perftest" / "common" / "utils.o"
    helper.parent.mkdir(parents=True, exist_ok=True)
    status = None
    if any(p.kind == "perftest" for p in programs):
        status = run([*nvcc, *flags, f"-I{common}", "-c", str(common / "utils.cu"), "-o", str(helper)])
        if status[0] != 0:
            print(f"perftest helper (perftest/common/utils.cu) does not build:\n{status[2]}", file=sys.stderr)

    def build(p):
        exe = out / p.kind / p.name
        exe.parent.mkdir(parents=True, exist_ok=True)
        if p.kind == "perftest":
            if status[0] != 0:
                p.build = (False, 0.0, "the perftest helper (perftest/common/utils.cu) does not build")
                return
            cmd = [*nvcc, *flags, f"-I{common}", str(p.source), str(helper), "-o", str(exe), *link]
        else:
            cmd = [*nvcc, *flags, str(p.source), "-o", str(exe), *link]
        if p.mpi:
            cmd += ["-DNVSHMEMTEST_MPI_SUPPORT", *mpi_flags()]
        if opts.reuse and exe.is_file() and (not (p.cubin and opts.cubin) or
                                             exe.with_name(p.source.stem + ".cubin").is_file()):
            p.build = (True, 0.0, "reused")
            return
        rc, secs, text = run(cmd, timeout=opts.build_timeout)
        if rc == 0 and p.cubin and opts.cubin:
            cubin = exe.with_name(p.source.stem + ".cubin")
            rc2, secs2, text2 = run([*nvcc, *flags, f"-I{common}", f"-I{tree / 'src' / 'include'}",
                                     "-DNVSHMEM_HOSTLIB_ONLY", "-cubin", str(p.source), "-o", str(cubin)],
                                    timeout=opts.build_timeout)
            rc, secs, text = rc2, secs + secs2, text + text2
        p.build = (rc == 0, secs, text)
        if opts.verbose:
            print(f"  built {p.label}: {'ok' if rc == 0 else 'FAILED'} ({secs:.1f} s)", flush=True)

    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        list(pool.map(build, programs))


def mpi_flags():
    """MPI's compile and link flags, as its compiler wrapper gives them (Open MPI's
    mpicxx --showme, MPICH's mpicxx -show)."""
    try:
        comp = subprocess.run(["mpicxx", "--showme:compile"], capture_output=True, text=True)
        link = subprocess.run(["mpicxx", "--showme:link"], capture_output=True, text=True)
        if comp.returncode == 0 and link.returncode == 0:
            return shlex.split(comp.stdout) + shlex.split(link.stdout)
        show = subprocess.run(["mpicxx", "-show"], capture_output=True, text=True)
        return [f for f in shlex.split(show.stdout)[1:] if f.startswith(("-I", "-L", "-l", "-Wl,", "-D"))]
    except OSError:
        return []


def launcher(p, n, timeout):
    """The command line that starts `p` on n PEs: shmemrun, or mpirun for MPI programs."""
    if not p.mpi:
        return ["shmemrun", "-n", str(n), "--timeout", str(timeout)]
    extra = ["--allow-run-as-root", "--oversubscribe"] if "Open MPI" in subprocess.run(
        ["mpirun", "--version"], capture_output=True, text=True).stdout else []
    return ["mpirun", *extra, "-n", str(n)]


def run_all(programs, out, opts):
    """Runs every built program on each of its PE counts (one job at a time)."""
    for p in programs:
        if not (p.build and p.build[0]) or opts.build_only:
            continue
        exe = out / p.kind / p.name
        modes = [("", {})] + ([(CUBIN, {"NVSHMEM_TEST_CUBIN_LIBRARY": "1"})] if p.cubin and opts.cubin else [])
        for args in p.args:
            for mode, extra in modes:
                for n in p.npes:
                    cmd = [*launcher(p, n, opts.timeout), str(exe), *shlex.split(args)]
                    env = dict(os.environ, **extra)
                    rc, secs, text = run(cmd, cwd=exe.parent, env=env, timeout=opts.timeout + 30)
                    label = f"{args}{mode}".strip()
                    p.runs.append((label, n, rc == 0, secs, text, shlex.join(cmd), mode == CUBIN))
                    if opts.verbose:
                        print(f"  ran {p.label} on {n} PEs{' ' + label if label else ''}: "
                              f"{'ok' if rc == 0 else f'FAILED (exit {rc})'} ({secs:.1f} s)", flush=True)


def first_error(text, lines=3):
    """The first lines of a compiler's or a program's output that say what went wrong."""
    picked = [ln for ln in text.splitlines() if re.search(r"error|fail|abort|assert|timed out|not supported|"
                                                          r"refus|requires", ln, re.I)]
    return " | ".join(ln.strip()[:200] for ln in (picked or text.splitlines()[-lines:])[:lines])


def report(programs, tree, out, opts, seconds):
    log = out / "suite.log"
    passed = 0
    rows = []
    cubins, cubin_failures = 0, []
    with log.open("w") as f:
        for p in programs:
            ok_build, build_s, build_text = p.build or (False, 0.0, "not built")
            refusal = re.search(r"pyshmem does not provide [^\n]*", build_text)
            if not ok_build and refusal:
                verdict, detail = "refused", refusal.group(0)[:200]
            elif not ok_build:
                verdict, detail = "build", first_error(build_text)
            elif opts.build_only:
                verdict, detail = "built", ""
            else:
                plain = [r for r in p.runs if not r[6]]
                bad = [r for r in plain if not r[2]]
                verdict = "pass" if plain and not bad else "run"
                detail = "; ".join(f"on {r[1]} PEs{' ' + r[0] if r[0] else ''}: {first_error(r[4])}"
                                   for r in bad[:2])
                cubin_runs = [r for r in p.runs if r[6]]
                if cubin_runs:
                    cubins += 1
                    cubin_bad = [r for r in cubin_runs if not r[2]]
                    if cubin_bad:
                        cubin_failures.append(f"{p.label}: on {cubin_bad[0][1]} PEs: {first_error(cubin_bad[0][4])}")
            passed += verdict in ("pass", "built")
            runs = ", ".join(f"{r[1]}{'c' if r[6] else ''}:{'ok' if r[2] else 'FAIL'}({r[3]:.0f}s)"
                             for r in p.runs)
            rows.append((p.label, verdict, f"{build_s:.1f}", runs, detail))
            f.write(f"==== {p.label}: {verdict}\n--- build ({build_s:.1f} s)\n{build_text}\n")
            for label, n, ok, secs, text, cmd, _ in p.runs:
                f.write(f"--- {cmd} ({'ok' if ok else 'FAILED'}, {secs:.1f} s)\n{text}\n")
    width = max(len(r[0]) for r in rows) if rows else 10
    print(f"NVSHMEM tree: {tree} ({tree_version(tree)})")
    print(f"target: {opts.target}, build type: {opts.build_type}, {'build only' if opts.build_only else 'built and run'}"
          f", {seconds:.0f} s; log: {log}")
    print(f"{'program':<{width}}  {'result':<6}  {'build s':>7}  runs (PEs[c: cubin variant]:result)")
    for label, verdict, build_s, runs, detail in rows:
        print(f"{label:<{width}}  {verdict:<6}  {build_s:>7}  {runs}")
        if detail:
            print(f"{'':<{width}}    {detail}")
    if cubins:
        print(f"cubin variants (NVSHMEM_TEST_CUBIN_LIBRARY=1): {cubins - len(cubin_failures)}/{cubins} pass")
        for failure in cubin_failures:
            print(f"  {failure}")
    what = "build" if opts.build_only else "pass"
    refused = sum(r[1] == "refused" for r in rows)
    print(f"{passed}/{len(programs)} {what}" + (f" ({refused} refused: a documented refusal, see above)" if refused else ""))
    return passed == len(programs)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("tree", type=Path, help="NVSHMEM source tree (the folder holding perftest/ and examples/)")
    ap.add_argument("--target", choices=("cpu", "gpu"), default="cpu", help="pyshmem-nvcc's target (default cpu)")
    ap.add_argument("--gpu-arch", default="sm_90", help="with --target gpu: nvcc's -arch (default sm_90)")
    ap.add_argument("--build-dir", type=Path, default=Path("nvshmem-suite-build"), help="where programs are built")
    ap.add_argument("--build-type", choices=tuple(BUILD_TYPES), default="release")
    ap.add_argument("--build-only", action="store_true", help="build, do not run (the default with --target gpu "
                                                              "on a machine without a GPU is still to run)")
    ap.add_argument("--cubin", action="store_true", help="also build the cubin variants and run them "
                                                         "(NVSHMEM_TEST_CUBIN_LIBRARY=1)")
    ap.add_argument("--only", help="regular expression: only programs whose kind/name matches")
    ap.add_argument("--mpi", action="store_true", help="also build and run the MPI examples (NVSHMEM_MPI_SUPPORT=1; "
                                                       "needs mpicxx and mpirun)")
    ap.add_argument("--nvcc-flag", action="append", default=[], metavar="FLAG",
                    help="one more flag for every pyshmem-nvcc command (repeat it), e.g. -I for <nvml.h> where "
                         "the CUDA toolkit has none: --nvcc-flag=-I/path/to/nvml/include")
    ap.add_argument("--reuse", action="store_true", help="keep programs already built in --build-dir")
    ap.add_argument("--npes", help="comma-separated PE counts for every program (default: NVIDIA's runner's)")
    ap.add_argument("--max-pes", type=int, default=4, help="largest PE count to run (default 4)")
    ap.add_argument("--all-args", action="store_true", help="run every line of each .args file")
    ap.add_argument("--timeout", type=int, default=600, help="seconds per run (default 600: some examples move "
                                                              "gigabytes, slow on a laptop's few cores)")
    ap.add_argument("--build-timeout", type=int, default=900, help="seconds per build (default 900)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="builds at once")
    ap.add_argument("-v", "--verbose", action="store_true")
    opts = ap.parse_args(argv)
    tree = opts.tree.resolve()
    if not (tree / "perftest").is_dir() and not (tree / "examples").is_dir():
        ap.error(f"{tree} has neither perftest/ nor examples/: give the root of an NVSHMEM source tree")
    npes = [int(x) for x in opts.npes.split(",")] if opts.npes else None
    programs = discover(tree, opts.max_pes, npes, opts.all_args, opts.mpi)
    if opts.only:
        programs = [p for p in programs if re.search(opts.only, p.label)]
    if not programs:
        ap.error("no programs found (check the tree and --only)")
    out = opts.build_dir.resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    build_all(programs, tree, out, opts)
    run_all(programs, out, opts)
    return 0 if report(programs, tree, out, opts, time.monotonic() - t0) else 1


if __name__ == "__main__":
    sys.exit(main())
