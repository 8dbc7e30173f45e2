"""torch.distributed collectives: the "pyshmem" backend side by side with gloo, in one
run, and DDP step time on a small model.

Each rank process has pyshmem as its default group and a gloo group over the same
ranks; for every op and size the two run alternately (a few calls each, repeated), so
both see the same machine minute. A figure is the median over repeats of the mean time
per call on rank 0, after a barrier on the group measured. Sizes are bytes per rank
(all_reduce/broadcast: the tensor; all_gather_into_tensor: the input; all_to_all_single:
the whole input, split evenly), float32 elements. Every op also runs on symmetric
tensors (pyshmem.torch.empty; input and output for all-gather and all-to-all): the
"symmetric" column, in place from the backend's IN_PLACE_MIN.

Usage (from the repository root; it starts torchrun itself):
    python benchmarks/bench_torch_dist.py                  # 2 and 4 ranks, 8 B .. 64 MiB
    python benchmarks/bench_torch_dist.py --ranks 2 --sizes 8,1K,4M --quick
Prints a Markdown table (gloo/pyshmem ratios) and writes --json (default
benchmarks/results/torch_dist.json); --plot draws time against size per op.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OPS = ("all_reduce", "all_gather_into_tensor", "all_to_all_single", "broadcast")
SIZES = (8, 64, 512, 4 << 10, 32 << 10, 64 << 10, 256 << 10, 2 << 20, 4 << 20, 16 << 20, 64 << 20)


def _worker(sizes, repeats, budget):
    import torch
    import torch.distributed as dist

    import pyshmem.torch  # registers the backend

    dist.init_process_group("pyshmem")
    me, p = dist.get_rank(), dist.get_world_size()
    groups = {"pyshmem": None, "gloo": dist.new_group(backend="gloo")}
    rows = []
    for size in sizes:
        n = max(1, size // 4)
        n = -(-n // p) * p  # all_to_all_single splits evenly
        x = torch.rand(n)
        sym = pyshmem.torch.empty((n,))
        sym.copy_(x)
        calls = {"all_reduce": lambda g: dist.all_reduce(x, group=g),
                 "broadcast": lambda g: dist.broadcast(x, 0, group=g),
                 "all_gather_into_tensor": lambda g, out=torch.empty(p * n): dist.all_gather_into_tensor(out, x, group=g),
                 "all_to_all_single": lambda g, out=torch.empty(n): dist.all_to_all_single(out, x, group=g)}
        iters = max(2, min(200, budget // (size * p + 20000)))
        sym_gather, sym_a2a = pyshmem.torch.empty((p * n,)), pyshmem.torch.empty((n,))
        on_sym = {"all_reduce": lambda g: dist.all_reduce(sym), "broadcast": lambda g: dist.broadcast(sym, 0),
                  "all_gather_into_tensor": lambda g: dist.all_gather_into_tensor(sym_gather, sym),
                  "all_to_all_single": lambda g: dist.all_to_all_single(sym_a2a, sym)}
        for op in OPS:
            variants = {k: (g, calls[op]) for k, g in groups.items()}
            if op in on_sym:
                variants["pyshmem_sym"] = (None, on_sym[op])
            times = {k: [] for k in variants}
            for _ in range(repeats):
                for name, (g, call) in variants.items():
                    call(g)  # warm
                    dist.barrier(group=g)
                    t0 = time.perf_counter()
                    for _ in range(iters):
                        call(g)
                    times[name].append((time.perf_counter() - t0) / iters)
            if me == 0:
                rows.append({"op": op, "bytes": size, "ranks": p, **{f"{k}_us": statistics.median(v) * 1e6
                                                                     for k, v in times.items()}})
        for t in (sym_a2a, sym_gather, sym):
            pyshmem.torch.free(t)
    ddp = _ddp_step_us(groups["gloo"], repeats)  # its models die on return, on every rank at once
    dist.barrier()
    if me == 0:
        rows.append({"op": "ddp_step", "ranks": p, **ddp})
        print("ROWS " + json.dumps(rows), flush=True)
    del groups, g  # the gloo group goes before the default group does
    dist.barrier()
    dist.destroy_process_group()


def _ddp_step_us(gloo, repeats):
    """{bytes, pyshmem_us, gloo_us}: median DDP step (forward, backward, SGD) of a small
    model (as tests/pe/programs/torch_ddp.py) with either backend."""
    import torch
    from torch.nn.parallel import DistributedDataParallel as DDP

    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256))

    nets = {"pyshmem": DDP(model()), "gloo": DDP(model(), process_group=gloo)}
    opt = {k: torch.optim.SGD(m.parameters(), lr=0.01) for k, m in nets.items()}
    steps = {k: [] for k in nets}
    xb, yb = torch.randn(32, 256), torch.randn(32, 256)
    for _ in range(repeats * 5):
        for k, net in nets.items():
            t0 = time.perf_counter()
            opt[k].zero_grad()
            torch.nn.functional.mse_loss(net(xb), yb).backward()
            opt[k].step()
            steps[k].append(time.perf_counter() - t0)
    return {"bytes": sum(q.numel() * 4 for q in nets["gloo"].parameters()),
            **{f"{k}_us": statistics.median(v[2:]) * 1e6 for k, v in steps.items()}}


def _human(n):
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n} B"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2,4", help="rank counts, comma-separated")
    parser.add_argument("--sizes", default=None, help="bytes per rank: 8,1K,4M or 8:64M (x8)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="few repeats and a small time budget (the tests' run)")
    parser.add_argument("--json", default=str(HERE / "results" / "torch_dist.json"))
    parser.add_argument("--plot", default=None, help="PNG: time vs size, one panel per op")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from pyshmem.perftest.sizes import size_list

    sizes = size_list(args.sizes, 8, "bench_torch_dist") if args.sizes else list(SIZES)
    repeats = 2 if args.quick else args.repeats
    budget = 2 << 20 if args.quick else 64 << 20
    if args.worker:
        return _worker(sizes, repeats, budget)
    rows = []
    for ranks in [int(r) for r in args.ranks.split(",")]:
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                   OMP_NUM_THREADS="1")
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(ranks),
               __file__, "--worker", "--sizes", ",".join(map(str, sizes)), "--repeats", str(args.repeats)]
        if args.quick:
            cmd.append("--quick")
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=str(REPO), timeout=3600)
        line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("ROWS ")), None)
        if proc.returncode != 0 or line is None:
            sys.exit(f"bench_torch_dist: {ranks} ranks failed (exit {proc.returncode}):\n{proc.stdout[-3000:]}"
                     f"\n{proc.stderr[-3000:]}")
        rows += json.loads(line[5:])
    print("| op | ranks | bytes | gloo (µs) | pyshmem (µs) | gloo / pyshmem | pyshmem, symmetric tensor (µs) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        sym = f"{r['pyshmem_sym_us']:.1f}" if "pyshmem_sym_us" in r else "-"
        print(f"| {r['op']} | {r['ranks']} | {_human(r['bytes'])} | {r['gloo_us']:.1f} | {r['pyshmem_us']:.1f} | "
              f"{r['gloo_us'] / r['pyshmem_us']:.1f}x | {sym} |")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(rows, indent=1))
    if args.plot:
        _plot(rows, args.plot)


def _plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(OPS), figsize=(4 * len(OPS), 3.6), sharey=True)
    for ax, op in zip(axes, OPS):
        for shade, ranks in enumerate(sorted({r["ranks"] for r in rows})):
            mine = [r for r in rows if r["op"] == op and r["ranks"] == ranks]
            colors = {"pyshmem": f"C{3 * shade}", "gloo": f"C{3 * shade + 1}", "pyshmem_sym": f"C{3 * shade + 2}"}
            for backend, style in (("pyshmem", "-o"), ("gloo", "--s"), ("pyshmem_sym", ":^")):
                have = [r for r in mine if f"{backend}_us" in r]
                if have:
                    ax.plot([r["bytes"] for r in have], [r[f"{backend}_us"] for r in have], style, ms=3,
                            color=colors[backend], label=f"{backend.replace('_sym', ', symmetric')}, {ranks} ranks")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(op)
        ax.set_xlabel("bytes per rank")
    axes[0].set_ylabel("µs per call (median)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
