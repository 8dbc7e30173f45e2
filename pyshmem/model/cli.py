"""python -m pyshmem.model {predict,scale,list,calibrate,replay,validate}: the model's command line.

  predict COLLECTIVE --topology T [--npes P] [--algo all|a,b] [--sizes 1K:8G] [--json] [--plot PNG]
      a table of time, algbw and busbw (nccl-tests' definitions) per size and
      algorithm, the best algorithm per size and where the best changes (crossovers)
  scale COLLECTIVE --topology dgx-h200 --size 1G [--nodes 1:4096] [--json] [--plot PNG]
      the same for one size over cluster sizes (N nodes of the preset, doubling)
  list
      the algorithm table with each cost formula, and the topology presets
  calibrate [--transport shm|ucx] [--api host|device] [-o machine.json]   (under shmemrun -n 2 or more)
      this machine's α, β (put latency over sizes, robust fit), bandwidth curve, barrier
      round, gap and γ as a topology file; --topology this reads ./machine.json
  replay TRACE_DIR --topology T [--map block|cyclic] [--json]
      a PYSHMEM_TRACE recording priced on T, per phase (split at collectives) and per PE
  validate [--npes 2,4] [--sizes 8:64M] [--json FILE]   (starts the PEs, or under shmemrun)
      measured against predicted on this machine, presets against published figures,
      and last a line `geometric-mean error: X %`
"""

import argparse
import json
import math
import re
import sys

from pyshmem.errors import InvalidArgumentError, ShmemError
from pyshmem.trace_file import TraceError
from pyshmem.model import algorithms, topology
from pyshmem.model.predict import best, predict
from pyshmem.perftest.sizes import size_list

def parse_sizes(text, factor=2):
    """'1K:8G' (multiplying by `factor`) or '8,64,1M' -> sizes (see perftest's size_list)."""
    return size_list(text, factor, "pyshmem.model")


def _human(n):
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def _print_table(rows, out):
    overlap = bool(rows) and rows[0].compute_us is not None
    extra = f" {'compute_us':>12} {'exposed_us':>12}" if overlap else ""
    print(f"{'bytes':>8} {'algo':<14} {'time_us':>12} {'algbw GB/s':>11} {'busbw GB/s':>11}{extra}", file=out)
    for r in rows:
        t = "n/a" if math.isinf(r.time_us) else f"{r.time_us:.2f}"
        extra = f" {r.compute_us:>12.2f} {r.exposed_us:>12.2f}" if overlap else ""
        print(f"{_human(r.bytes):>8} {r.algo:<14} {t:>12} {r.algbw_GBps:>11.2f} {r.busbw_GBps:>11.2f}{extra}",
              file=out)


def _params(items):
    """--param k=v (repeated) -> {k: number}."""
    out = {}
    for item in items or ():
        k, eq, v = item.partition("=")
        try:
            out[k.strip()] = float(v) if "." in v or "e" in v.lower() else int(v)
        except ValueError:
            eq = ""
        if not eq or not k.strip():
            raise InvalidArgumentError(f"pyshmem.model: --param takes NAME=NUMBER, not {item!r}")
    return out


def _what(topo):
    return "α-β-γ model, calibrated figures" if topo.name == "this" or topo.name.endswith(".json") else \
        "α-β-γ model, figures not calibrated"


def _crossovers(chosen):
    lines, last = [], None
    for n in sorted(chosen):
        if last is not None and chosen[n].algo != last:
            lines.append(f"{last} -> {chosen[n].algo} at {_human(n)}")
        last = chosen[n].algo
    return lines


def _plot_or_json(a, rows, out, x, y, title):
    """Draws --plot's PNG (x against y, one line per algorithm) and prints --json's
    records; True when the records were printed (no table then)."""
    if a.plot:
        from pyshmem.model.plot import plot

        plot(rows, a.plot, x, y, title)
    if a.json:
        for r in rows:
            print(json.dumps(r.as_dict()), file=out)
    return a.json


def _cmd_predict(a, out):
    topo = topology.load(a.topology)
    algos = None if a.algo == "all" else [x for x in a.algo.split(",") if x]
    rows = predict(a.collective, topo, a.npes, parse_sizes(a.sizes), algos, a.dtype, _params(a.param),
                   a.overlap_flops)
    if _plot_or_json(a, rows, out, "bytes", "busbw_GBps", f"{a.collective} on {topo.name} (model)"):
        return 0
    print(f"# {a.collective} on {topo.name}, {rows[0].npes if rows else a.npes} PEs ({_what(topo)})", file=out)
    _print_table(rows, out)
    chosen = best(rows, exposed=a.overlap_flops is not None)
    print("# best: " + ", ".join(f"{_human(n)} {p.algo}" for n, p in sorted(chosen.items())), file=out)
    for line in _crossovers(chosen) or ["no crossover: one algorithm wins at every size"]:
        print(f"# crossover: {line}", file=out)
    return 0


def _cmd_scale(a, out):
    m = re.match(rf"^({'|'.join(topology.MULTI_NODE)})(x\d+)?$", a.topology)
    if not m:
        raise InvalidArgumentError(f"pyshmem.model scale: --topology must be dgx-h100, dgx-h200 or hgx-h800 (N nodes "
                                   f"of it), not {a.topology!r}")
    try:
        lo, hi = (int(x) for x in a.nodes.split(":", 1)) if ":" in a.nodes else (int(a.nodes),) * 2
    except ValueError:
        raise InvalidArgumentError(f"pyshmem.model scale: --nodes must be N or LO:HI, not {a.nodes!r}") from None
    rows, nodes = [], max(1, lo)
    while nodes <= hi:
        topo = topology.load(f"{m.group(1)}x{nodes}")
        rows += predict(a.collective, topo, None, parse_sizes(a.size)[:1], None, a.dtype, _params(a.param))
        nodes *= 2
    if _plot_or_json(a, rows, out, "npes", "time_us", f"{a.collective} of {a.size} bytes on N x {m.group(1)} (model)"):
        return 0
    print(f"# {a.collective} of {a.size} bytes on N x {m.group(1)} (α-β-γ model, figures not calibrated)", file=out)
    print(f"{'PEs':>7} {'algo':<14} {'time_us':>12} {'busbw GB/s':>11}", file=out)
    for r in rows:
        t = "n/a" if math.isinf(r.time_us) else f"{r.time_us:.2f}"
        print(f"{r.npes:>7} {r.algo:<14} {t:>12} {r.busbw_GBps:>11.2f}", file=out)
    return 0


def _cmd_list(a, out):
    for c in algorithms.collectives():
        print(c, file=out)
        for n in algorithms.names(c):
            alg = algorithms.ALGORITHMS[(c, n)]
            print(f"  {n:<14} {alg.formula}{' [one node only]' if alg.intra_only else ''}", file=out)
        params = dict(kv for n in algorithms.names(c) for kv in algorithms.ALGORITHMS[(c, n)].params)
        for k, v in params.items():
            print(f"  --param {k}={v}: {algorithms.PARAM_HELP.get(k, '')}", file=out)
    print("topologies: " + ", ".join(topology.preset_names()) + ", or a .json file", file=out)
    return 0


def _parser():
    p = argparse.ArgumentParser(prog="python -m pyshmem.model", description="pyshmem's communication cost model")
    sub = p.add_subparsers(dest="command", required=True)
    pr = sub.add_parser("predict", help="price a collective's algorithms over sizes")
    pr.add_argument("collective", choices=algorithms.collectives())
    pr.add_argument("--topology", required=True)
    pr.add_argument("--npes", type=int, default=None, help="ranks (default: every device of the topology)")
    pr.add_argument("--algo", default="all", help="'all' or a comma-separated list")
    pr.add_argument("--sizes", default="8:1G", help="'1K:8G' (doubling) or '8,64,1M'")
    pr.add_argument("--json", action="store_true", help="one JSON record per line")
    pr.add_argument("--plot", metavar="PNG", help="also draw busbw against size, one line per algorithm")
    pr.add_argument("--overlap-flops", type=float, default=None, metavar="F",
                    help="compute (FLOPs per device) the communication hides behind: adds compute_us, exposed_us")
    for q in (pr, sc := sub.add_parser("scale", help="one size over cluster sizes")):
        q.add_argument("--dtype", default="float32", help="element type (the reduction cost γ is per type)")
        q.add_argument("--param", action="append", metavar="NAME=NUMBER",
                       help="a workload parameter (see `list`), repeatable")
    sc.add_argument("collective", choices=algorithms.collectives())
    sc.add_argument("--topology", default="dgx-h200")
    sc.add_argument("--size", default="1G")
    sc.add_argument("--nodes", default="1:4096", help="'1:4096' (doubling) nodes of 8 devices")
    sc.add_argument("--json", action="store_true")
    sc.add_argument("--plot", metavar="PNG", help="also draw time against GPUs, one line per algorithm")
    sub.add_parser("list", help="the algorithm table and the presets")
    ca = sub.add_parser("calibrate", help="under shmemrun: fit this machine's α, β, γ into a topology file")
    ca.add_argument("--transport", choices=("shm", "ucx"), default="shm")
    ca.add_argument("--api", choices=("host", "device"), default="host",
                    help="fit the host API's put or the device API's (a kernel thread's; with ucx: the proxy's path)")
    ca.add_argument("-o", "--output", default="machine.json")
    ca.add_argument("-n", "--iters", type=int, default=200, help="timed iterations per size")
    ca.add_argument("--quick", action="store_true", help="three sizes, few iterations")
    va = sub.add_parser("validate", help="measure pyshmem's collectives here and compare with the model, and the "
                                         "presets with published figures")
    va.add_argument("--npes", default="2,4", help="PE counts to start (ignored under shmemrun)")
    va.add_argument("--sizes", default="8:64M", help="'8:64M' (by 4) or '8,1K,1M'")
    va.add_argument("-n", "--iters", type=int, default=30, help="timed iterations per size")
    va.add_argument("--transport", choices=("shm", "ucx"), default="shm")
    va.add_argument("--json", metavar="FILE", help="also write every case as a JSON line")
    va.add_argument("--no-published", action="store_true", help="leave out the published-figures table")
    va.add_argument("--worker", metavar="PATH", help=argparse.SUPPRESS)  # one PE count's run, under shmemrun
    rp = sub.add_parser("replay", help="price a PYSHMEM_TRACE recording on another topology, per phase and per PE")
    rp.add_argument("trace_dir")
    rp.add_argument("--topology", required=True)
    rp.add_argument("--map", choices=("block", "cyclic"), default="block", help="PE i to node i // d, or i %% nodes")
    rp.add_argument("--json", action="store_true")
    return p


def main(argv=None, out=None):
    """Runs the command line; returns the exit status (2: bad input)."""
    out = out or sys.stdout
    a = _parser().parse_args(argv)
    try:
        if a.command == "calibrate":
            from pyshmem.model.calibrate import run

            run(a.transport, a.output, a.iters, a.quick, a.api)
            return 0
        if a.command == "replay":
            from pyshmem.model import replay

            return replay.main(a.trace_dir, a.topology, a.map, out, a.json)
        if a.command == "validate":
            from pyshmem.model import validate

            if a.worker:
                validate.worker(parse_sizes(a.sizes, 4), a.iters, a.transport, a.worker)
                return 0
            try:
                npes = [int(x) for x in a.npes.split(",") if x]
            except ValueError:
                raise InvalidArgumentError(f"pyshmem.model validate: --npes must be like 2,4, not {a.npes!r}") from None
            return validate.run(npes, a.sizes, a.iters, a.transport, a.json, out, not a.no_published)
        return {"predict": _cmd_predict, "scale": _cmd_scale, "list": _cmd_list}[a.command](a, out)
    except (ShmemError, NotImplementedError, TraceError) as e:
        print(str(e), file=sys.stderr)  # errors name pyshmem.model and the call
        return 2
