"""``shmemrun -n N python -m pyshmem.model calibrate``: this machine as a topology file.

PE 0 times blocking put + quiet to PE 1 (pyshmem.perftest's put_latency, checked
transfers) over sizes 8 B to 4 MiB, fits α and β (:func:`pyshmem.model.fit.fit_alpha_beta`
on each size's median), times a local reduction (NumPy add of 4 MiB float64 arrays)
for γ, and writes a topology whose intra-node link is the fit, with the measurements
and the fit's residual under ``calibration``. With ``--transport ucx`` every peer goes
through UCX (``PYSHMEM_REMOTE_ONLY=1``) and the fit is the network link's too.
"""

import json
import os
import time

SIZES = [8 << (2 * k) for k in range(10)]  # 8 B ... 2 MiB, by 4
QUICK_SIZES = [8, 512, 32 << 10]


def _reduce_GBps(nbytes=4 << 20, reps=20):
    import numpy as np

    a = np.ones(nbytes // 8)
    b = np.ones_like(a)
    out = np.empty_like(a)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        np.add(a, b, out=out)
        best = min(best, time.perf_counter() - t0)
    return 2 * nbytes / best / 1e9  # bytes of input per second


def run(transport="shm", output="machine.json", iters=200, quick=False):
    """Measures and writes the file (PE 0); every PE must call it.

    Args:
        transport: ``shm`` (load/store between the node's PEs) or ``ucx``.
        output: the JSON file PE 0 writes.
        iters: timed iterations per size.
        quick: three sizes and few iterations (the tests' run).

    Returns:
        dict: the topology written (PE 0), None on the other PEs.

    Raises:
        InvalidArgumentError: fewer than 2 PEs, or an unknown transport.
    """
    from pyshmem.errors import InvalidArgumentError

    if transport not in ("shm", "ucx"):
        raise InvalidArgumentError(f"pyshmem.model calibrate: --transport must be shm or ucx, not {transport!r}")
    os.environ["PYSHMEM_REMOTE_ONLY"] = "1" if transport == "ucx" else "0"  # before the runtime starts
    import pyshmem as shmem
    from pyshmem.model.fit import fit_alpha_beta
    from pyshmem.perftest.cli import _parser
    from pyshmem.perftest.p2p import TESTS

    if shmem.n_pes() < 2:
        raise InvalidArgumentError("pyshmem.model calibrate: needs at least 2 PEs (shmemrun -n 2 ...)")
    sizes = QUICK_SIZES if quick else SIZES
    iters = min(iters, 20) if quick else iters
    opts = _parser(TESTS).parse_args(["put_latency", "-b", str(sizes[0]), "-e", str(sizes[-1]), "-n", str(iters),
                                      "-w", str(max(2, iters // 10))])
    rows = TESTS["put_latency"][0](opts, sizes)
    shmem.barrier_all()
    if shmem.my_pe() != 0:
        return None
    points = [(r["bytes"], r["lat_p50_us"] * 1e-6) for r in rows]
    f = fit_alpha_beta(points)
    link = {"bandwidth_GBps": round(1 / f.beta_s_per_byte / 1e9, 3) if f.beta_s_per_byte else 1e6,
            "latency_us": round(f.alpha_s * 1e6, 4)}
    topo = {"name": "this", "nodes": 1, "devices_per_node": shmem.n_pes(), "intra": link, "intra_multicast": False,
            "nic": link, "nics_per_node": 1, "reduce_GBps": round(_reduce_GBps(), 3),
            "calibration": {"transport": transport, "test": "put_latency (blocking put + quiet, PE 0 -> PE 1)",
                            "points": [{"bytes": n, "p50_us": round(t * 1e6, 4)} for n, t in points],
                            "alpha_us": f.alpha_s * 1e6, "beta_GBps": link["bandwidth_GBps"],
                            "residual": f.residual, "outliers": list(f.outliers)}}
    with open(output, "w") as fh:
        json.dump(topo, fh, indent=1)
    print(f"pyshmem.model calibrate: {transport}, {shmem.n_pes()} PEs: alpha {f.alpha_s * 1e6:.3f} us, "
          f"beta {link['bandwidth_GBps']:.2f} GB/s, reduction {topo['reduce_GBps']:.1f} GB/s; fit residual "
          f"{100 * f.residual:.1f} % (median relative error over {f.points} sizes), outliers: "
          f"{', '.join(map(str, f.outliers)) or 'none'}; wrote {output}", flush=True)
    return topo
