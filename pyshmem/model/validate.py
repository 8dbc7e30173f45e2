"""``python -m pyshmem.model validate``: the model's predictions beside measurements of
pyshmem's own collectives and point-to-point transfers on this machine, and beside
published figures of other machines (:mod:`pyshmem.model.published`).

Per PE count the run first calibrates (:func:`pyshmem.model.calibrate.measure`: put
latency, the bandwidth curve of all PEs copying at once, a two-PE barrier round, γ;
point-to-point and arithmetic only), then measures with pyshmem.perftest: barrier,
broadcast, fcollect, alltoall, sum reduction (float32) and get latency at each size,
and prices each with the algorithm pyshmem runs (:mod:`pyshmem.model.pyshmem_algos`).
The error of a case is |ln(predicted / measured)|, printed as a percentage
(exp(error) - 1), and the summary is their geometric mean: exp(mean |ln(p/m)|) - 1, so
a prediction twice too high and one twice too low count alike. Runs with more PEs
than CPUs are reported on their own line and left out of the mean: their times are
the OS scheduler's (descheduled waiters, the runtime's backoff), which the model does
not have.
"""

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

from pyshmem.errors import InvalidArgumentError, ShmemError
from pyshmem.model.pyshmem_algos import pyshmem_allreduce

# perftest test -> (model collective, algorithm for n bytes, perftest bytes -> model bytes)
CASES = {
    "barrier": ("barrier", lambda n: "dissemination", lambda b, p: 0),
    "bcast": ("broadcast", lambda n: "pull", lambda b, p: b),
    "fcollect": ("allgather", lambda n: "pull", lambda b, p: b * p),  # model: the whole output
    "alltoall": ("alltoall", lambda n: "pull", lambda b, p: b * p),  # model: what a rank sends in all
    "reduction": ("allreduce", pyshmem_allreduce, lambda b, p: b),
    "get_latency": ("sendrecv", lambda n: "direct", lambda b, p: b),
}


def error_of(predicted, measured):
    """|ln(predicted / measured)|: the symmetric relative error of one case."""
    return abs(math.log(predicted / measured))


def geomean_error_pct(errors):
    """exp(mean of the |ln| errors) - 1, in percent (0 for no cases)."""
    return (math.exp(statistics.fmean(errors)) - 1) * 100 if errors else 0.0


def worker(sizes, iters, transport, output):
    """Calibrates, measures and predicts under shmemrun; PE 0 writes `output` (JSON).

    Args:
        sizes: the message sizes (perftest's bytes per PE or per block).
        iters: timed iterations per size.
        transport: ``shm`` or ``ucx``.
        output: the file PE 0 writes ({npes, topology, cases}); None: return only.

    Returns:
        dict on PE 0, None elsewhere.
    """
    from pyshmem.model.calibrate import measure

    calib = sorted({8 << (3 * k) for k in range(12) if 8 << (3 * k) <= max(sizes)} | {max(sizes)})
    topo_d = measure(transport, calib, iters)
    import pyshmem as shmem
    from pyshmem.model import from_dict
    from pyshmem.model.algorithms import ALGORITHMS
    from pyshmem.perftest.cli import _parser
    from pyshmem.perftest.coll import TESTS as COLL
    from pyshmem.perftest.p2p import TESTS as P2P

    tests = {**P2P, **COLL}
    lo, hi = str(min(sizes)), str(max(sizes))
    measured = {}
    for test in CASES:
        opts = _parser(tests).parse_args([test, "-b", lo, "-e", hi, "-n", str(iters), "-w", str(max(2, iters // 10)),
                                          "-d", "float32", "-o", "sum"])
        measured[test] = tests[test][0](opts, sizes)
    shmem.barrier_all()
    if shmem.my_pe() != 0:
        return None
    p = shmem.n_pes()
    topo = from_dict(topo_d)
    cases = []
    for test, rows in measured.items():
        collective, algo_of, to_model = CASES[test]
        for r in rows:
            n = to_model(r["bytes"], p)
            algo = algo_of(n)
            pred = ALGORITHMS[(collective, algo)].cost(topo, p, n, "float32") * 1e6
            meas = r["lat_p50_us"]
            cases.append({"test": test, "collective": collective, "algo": algo, "npes": p, "bytes": r["bytes"],
                          "measured_us": meas, "predicted_us": pred, "error_pct": (math.exp(error_of(pred, meas)) - 1)
                          * 100, "oversubscribed": p > _cpus()})
    result = {"npes": p, "transport": transport, "topology": topo_d, "cases": cases}
    if output:
        with open(output, "w") as fh:
            json.dump(result, fh)
    return result


def _cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _launched():
    return "PYSHMEM_PE" in os.environ and "PYSHMEM_NPES" in os.environ  # shmemrun sets both for every PE


def _sizes(text):
    from pyshmem.perftest.sizes import size_list

    return size_list(text, 4, "pyshmem.model validate")


def run(npes, sizes, iters, transport, json_out, out, published=True):
    """The command: one shmemrun per PE count (or this job's PEs when run under
    shmemrun), then the table, the published comparison and the geometric-mean line.

    Args:
        npes: PE counts (ignored under shmemrun: the job's own).
        sizes: size text ('8:64M' by 4, or '8,1K').
        iters: timed iterations per size.
        transport: ``shm`` or ``ucx``.
        json_out: also write every case as one JSON line to this file (None: no).
        out: where the table goes.
        published: also compare presets with published figures.

    Returns:
        int: exit status (0).

    Raises:
        InvalidArgumentError: bad sizes, PE counts or iterations.
        ShmemError: a run failed (its output is in the message).
    """
    size_list = _sizes(sizes)
    if not size_list or size_list[0] <= 0:
        raise InvalidArgumentError(f"pyshmem.model validate: --sizes must be positive sizes, not {sizes!r}")
    if iters < 1:
        raise InvalidArgumentError(f"pyshmem.model validate: --iters must be at least 1, not {iters}")
    if _launched():
        res = worker(size_list, iters, transport, None)
        if res is None:
            return 0
        results = [res]
    else:
        if not npes or any(p < 2 for p in npes):
            raise InvalidArgumentError(f"pyshmem.model validate: --npes must be PE counts of 2 or more, not {npes}")
        results = [_launch(p, sizes, iters, transport) for p in npes]
    cases = [c for r in results for c in r["cases"]]
    _print(results, cases, out)
    if published:
        from pyshmem.model.published import compare, print_table

        print_table(compare(), out)
    over = [error_of(c["predicted_us"], c["measured_us"]) for c in cases if c["oversubscribed"]]
    if over:
        print(f"oversubscribed runs (more PEs than the {_cpus()} CPUs here; the model has no OS scheduler, so they "
              f"are not in the line below): geometric-mean error {geomean_error_pct(over):.1f} % over {len(over)} "
              "cases", file=out)
    counted = [error_of(c["predicted_us"], c["measured_us"]) for c in cases if not c["oversubscribed"]]
    worst = max((c for c in cases if not c["oversubscribed"]), key=lambda c: c["error_pct"], default=None)
    if worst:
        print(f"worst case: {worst['test']} {worst['bytes']} B on {worst['npes']} PEs: measured "
              f"{worst['measured_us']:.2f} us, predicted {worst['predicted_us']:.2f} us ({worst['error_pct']:.0f} %)",
              file=out)
    if json_out:
        with open(json_out, "w") as fh:
            for c in cases:
                fh.write(json.dumps(c) + "\n")
    note = ""
    if not counted:  # nothing else to report: the oversubscribed figure, said so
        counted, note = over, " (every run oversubscribed: the scheduler's times, not the model's domain)"
    print(f"geometric-mean error: {geomean_error_pct(counted):.1f} % over {len(counted)} cases on this machine{note}",
          file=out, flush=True)
    return 0


def _launch(p, sizes, iters, transport):
    size_max = max(_sizes(sizes))
    env = dict(os.environ)
    need = 3 * size_max * p + (64 << 20)  # perftest's src and dst of P blocks, and slack
    env["PYSHMEM_SYMMETRIC_SIZE"] = str(max(need, 1 << 30))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "validate.json")
        cmd = [sys.executable, "-m", "pyshmem.run", "-n", str(p), sys.executable, "-m", "pyshmem.model", "validate",
               "--worker", path, "--sizes", sizes, "--iters", str(iters), "--transport", transport]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if proc.returncode != 0 or not os.path.exists(path):
            raise ShmemError(f"pyshmem.model validate: the run on {p} PEs failed (exit {proc.returncode}):\n"
                             f"{proc.stdout}{proc.stderr}")
        with open(path) as fh:
            return json.load(fh)


def _print(results, cases, out):
    for r in results:
        t = r["topology"]
        print(f"# {r['npes']} PEs, {r['transport']}: calibrated α {t['intra']['latency_us']:.3f} us, β "
              f"{t['intra']['bandwidth_GBps']:.1f} GB/s, barrier round {t['sync_latency_us']:.3f} us, γ "
              f"{t['reduce_GBps']['float32']:.1f} GB/s (float32), o {t['overhead_us']:.3f} us, bandwidth curve at "
              f"{len(t.get('bandwidth_curve') or t.get('nic_curve') or [])} sizes", file=out)
    print(f"{'test':<12} {'PEs':>3} {'bytes':>9} {'algo':<14} {'measured_us':>12} {'predicted_us':>12} "
          f"{'error':>7}", file=out)
    for c in cases:
        note = "  (oversubscribed)" if c["oversubscribed"] else ""
        print(f"{c['test']:<12} {c['npes']:>3} {c['bytes']:>9} {c['algo']:<14} {c['measured_us']:>12.2f} "
              f"{c['predicted_us']:>12.2f} {c['error_pct']:>6.0f}%{note}", file=out)
