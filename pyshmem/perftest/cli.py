"""Command line of ``python -m pyshmem.perftest`` (options mirror NVSHMEM's perftest)."""

import argparse
import os
import sys

from pyshmem.collective import OP
from pyshmem.perftest.sizes import parse_size, sizes_of

__all__ = ["main", "parse_size", "sizes_of"]


def _parser(names):
    ap = argparse.ArgumentParser(prog="python -m pyshmem.perftest",
                                 description="NVSHMEM-style benchmarks of pyshmem (run under shmemrun).",
                                 epilog="Also, from a shell (not under shmemrun): 'python -m pyshmem.perftest compare "
                                        "--help' runs pyshmem next to shmem4py, OSHMEM C, mpi4py RMA, ucx_perftest and "
                                        "memcpy; 'python -m pyshmem.perftest gpu --help' the GPU section.")
    ap.add_argument("test", choices=sorted(names), help="the benchmark")
    ap.add_argument("-b", "--min-size", type=parse_size, default=8, help="smallest message (bytes; K/M suffixes)")
    ap.add_argument("-e", "--max-size", type=parse_size, default=1 << 20, help="largest message")
    ap.add_argument("-f", "--step-factor", type=int, default=2, help="size multiplier between rows")
    ap.add_argument("-n", "--iters", type=int, default=100, help="timed iterations per size")
    ap.add_argument("-w", "--warmup", type=int, default=10, help="untimed iterations per size")
    ap.add_argument("-a", "--atomic", default="fetch_add", help="atomic_latency/atomic_bw operation")
    ap.add_argument("-o", "--op", default="sum", choices=[op.value for op in OP],
                    help="reduction operator")
    ap.add_argument("-d", "--dtype", default="int64", help="element type of collectives (NumPy name)")
    ap.add_argument("--root", type=int, default=0, help="bcast root")
    ap.add_argument("--bidir", action="store_true", help="put_bw/get_bw in both directions at once")
    ap.add_argument("--api", choices=("host", "device"), default="host")
    ap.add_argument("--scope", choices=("thread", "warp", "block"), help="device API cooperation level")
    ap.add_argument("--transport", choices=("auto", "loadstore", "ucx"), default="auto",
                    help="ucx: every peer through UCX (PYSHMEM_REMOTE_ONLY=1); loadstore: refuse UCX-forcing")
    ap.add_argument("--inject-error", action="store_true", help=argparse.SUPPRESS)  # the suite's self-test
    out = ap.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON object per row")
    out.add_argument("--csv", action="store_true", help="CSV with a header line")
    return ap


def main(argv=None):
    """Runs one perftest on every PE; PE 0 prints the result. ``compare ...`` runs
    pyshmem.perftest.compare (from a shell, not under shmemrun).

    Returns:
        int: 0, or 1 when a transfer delivered wrong data (the error is printed).
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["compare"]:
        from pyshmem.perftest.compare import main as compare

        return compare(argv[1:])
    if argv[:1] in (["gpu"], ["--gpu"]):
        from pyshmem.perftest.gpu import main as gpu_section

        return gpu_section(argv[1:])
    from pyshmem.perftest.coll import TESTS as COLL
    from pyshmem.perftest.p2p import TESTS as P2P, PerftestError

    tests = {**P2P, **COLL}
    opts = _parser(tests).parse_args(argv)
    if opts.scope and opts.api != "device":
        print("perftest: --scope applies to --api device only", file=sys.stderr)
        return 2
    if opts.iters < 1 or opts.warmup < 0 or opts.min_size > opts.max_size:
        print("perftest: need -n >= 1, -w >= 0 and -b <= -e", file=sys.stderr)
        return 2
    # Before the runtime starts (on the first pyshmem call): every PE parses the same argv.
    if opts.transport == "ucx":
        os.environ["PYSHMEM_REMOTE_ONLY"] = "1"
    elif opts.transport == "loadstore":
        os.environ["PYSHMEM_REMOTE_ONLY"] = "0"
    import pyshmem as shmem

    fn, kind, needs_two = tests[opts.test]
    if needs_two and shmem.n_pes() < 2:
        if shmem.my_pe() == 0:
            print(f"perftest {opts.test}: needs at least 2 PEs (shmemrun -n 2 ...)", file=sys.stderr)
        return 2
    sizes = sizes_of(opts.min_size, opts.max_size, opts.step_factor)
    try:
        if opts.api == "device":
            from pyshmem.perftest.device import run

            rows = run(opts, sizes)
        else:
            rows = fn(opts, sizes)
    except PerftestError as exc:
        print(str(exc), file=sys.stderr, flush=True)
        return 1
    except ValueError as exc:  # an option value the test cannot take (-a, -d, -o)
        if shmem.my_pe() == 0:
            print(f"perftest: {exc}", file=sys.stderr, flush=True)
        return 2
    shmem.barrier_all()
    if shmem.my_pe() == 0:
        from pyshmem.perftest.report import render

        fmt = "json" if opts.json else "csv" if opts.csv else "table"
        api = "host API" if opts.api == "host" else f"device API, {opts.scope or 'thread'} scope"
        title = (f"{opts.test} ({api}, {shmem.n_pes()} PEs, {opts.iters} iterations"
                 f"{', ' + opts.atomic if 'atomic' in opts.test else ''}"
                 f"{', ' + opts.op + ' ' + opts.dtype if opts.test == 'reduction' else ''})")
        print(render(rows, kind, fmt, title), flush=True)
    return 0
