"""python -m pyshmem.model {predict,scale,list}: the model's command line.

  predict COLLECTIVE --topology T [--npes P] [--algo all|a,b] [--sizes 1K:8G] [--json] [--plot PNG]
      a table of time, algbw and busbw (nccl-tests' definitions) per size and
      algorithm, the best algorithm per size and where the best changes (crossovers)
  scale COLLECTIVE --topology dgx-h200 --size 1G [--nodes 1:4096] [--json] [--plot PNG]
      the same for one size over cluster sizes (N nodes of the preset, doubling)
  list
      the algorithm table with each cost formula, and the topology presets
  calibrate [--transport shm|ucx] [-o machine.json]   (under shmemrun -n 2 or more)
      this machine's α, β (put latency over sizes, robust fit) and γ as a topology file;
      --topology this reads ./machine.json
"""

import argparse
import json
import math
import re
import sys

from pyshmem.errors import InvalidArgumentError, ShmemError
from pyshmem.model import algorithms, topology
from pyshmem.model.predict import best, predict
from pyshmem.perftest.sizes import parse_size, sizes_of

NOT_BUILT = {"replay": "predicting a PYSHMEM_TRACE recording on another topology",
             "validate": "comparing predictions with this machine's measurements and published figures"}


def _size_range(text):
    """'1K:8G' (doubling) or '8,64,1M' -> sizes."""
    if ":" in text:
        lo, hi = (parse_size(x) for x in text.split(":", 1))
        return sizes_of(lo, hi, 2)
    return [parse_size(x) for x in text.split(",") if x]


def _human(n):
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def _print_table(rows, out):
    print(f"{'bytes':>8} {'algo':<14} {'time_us':>12} {'algbw GB/s':>11} {'busbw GB/s':>11}", file=out)
    for r in rows:
        t = "n/a" if math.isinf(r.time_us) else f"{r.time_us:.2f}"
        print(f"{_human(r.bytes):>8} {r.algo:<14} {t:>12} {r.algbw_GBps:>11.2f} {r.busbw_GBps:>11.2f}", file=out)


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
    rows = predict(a.collective, topo, a.npes, _size_range(a.sizes), algos)
    if _plot_or_json(a, rows, out, "bytes", "busbw_GBps", f"{a.collective} on {topo.name} (model)"):
        return 0
    print(f"# {a.collective} on {topo.name}, {rows[0].npes if rows else a.npes} PEs (α-β-γ model, "
          "figures not calibrated)", file=out)
    _print_table(rows, out)
    chosen = best(rows)
    print("# best: " + ", ".join(f"{_human(n)} {p.algo}" for n, p in sorted(chosen.items())), file=out)
    for line in _crossovers(chosen) or ["no crossover: one algorithm wins at every size"]:
        print(f"# crossover: {line}", file=out)
    return 0


def _cmd_scale(a, out):
    m = re.match(r"^(dgx-h100|dgx-h200)(x\d+)?$", a.topology)
    if not m:
        raise InvalidArgumentError(f"pyshmem.model scale: --topology must be dgx-h100 or dgx-h200 (N nodes of it), "
                                   f"not {a.topology!r}")
    try:
        lo, hi = (int(x) for x in a.nodes.split(":", 1)) if ":" in a.nodes else (int(a.nodes),) * 2
    except ValueError:
        raise InvalidArgumentError(f"pyshmem.model scale: --nodes must be N or LO:HI, not {a.nodes!r}") from None
    rows, nodes = [], max(1, lo)
    while nodes <= hi:
        topo = topology.load(f"{m.group(1)}x{nodes}")
        rows += predict(a.collective, topo, None, [parse_size(a.size)])
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
    sc = sub.add_parser("scale", help="one size over cluster sizes")
    sc.add_argument("collective", choices=algorithms.collectives())
    sc.add_argument("--topology", default="dgx-h200")
    sc.add_argument("--size", default="1G")
    sc.add_argument("--nodes", default="1:4096", help="'1:4096' (doubling) nodes of 8 devices")
    sc.add_argument("--json", action="store_true")
    sc.add_argument("--plot", metavar="PNG", help="also draw time against GPUs, one line per algorithm")
    sub.add_parser("list", help="the algorithm table and the presets")
    ca = sub.add_parser("calibrate", help="under shmemrun: fit this machine's α, β, γ into a topology file")
    ca.add_argument("--transport", choices=("shm", "ucx"), default="shm")
    ca.add_argument("-o", "--output", default="machine.json")
    ca.add_argument("-n", "--iters", type=int, default=200, help="timed iterations per size")
    ca.add_argument("--quick", action="store_true", help="three sizes, few iterations")
    for name, what in NOT_BUILT.items():
        sub.add_parser(name, help=f"not built yet: {what}")
    return p


def main(argv=None, out=None):
    """Runs the command line; returns the exit status (2: bad input or not built)."""
    out = out or sys.stdout
    a = _parser().parse_args(argv)
    if a.command in NOT_BUILT:
        print(f"python -m pyshmem.model {a.command}: not built yet ({NOT_BUILT[a.command]}); "
              "see the feature-status table in docs/design.md", file=sys.stderr)
        return 2
    try:
        if a.command == "calibrate":
            from pyshmem.model.calibrate import run

            run(a.transport, a.output, a.iters, a.quick)
            return 0
        return {"predict": _cmd_predict, "scale": _cmd_scale, "list": _cmd_list}[a.command](a, out)
    except (ShmemError, NotImplementedError) as e:
        print(str(e), file=sys.stderr)  # errors name pyshmem.model and the call
        return 2
