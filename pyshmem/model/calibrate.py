"""``shmemrun -n N python -m pyshmem.model calibrate``: this machine as a topology file.

Every figure comes from point-to-point transfers and local arithmetic, never from a
collective (so `validate` can compare collectives with what this predicts):

- α and β: PE 0 times blocking put + quiet to PE 1 (perftest's put_latency, checked
  transfers; ``--api device``: from a kernel thread) over sizes 8 B to 2 MiB (or the
  sizes given) and fits them
  (:func:`pyshmem.model.fit.fit_alpha_beta` on each size's median);
- the bandwidth curve: every PE puts the same size to its right-hand neighbour at once
  (then quiet and a barrier), PE 0's median per size: bandwidth per device under the
  contention of all devices copying together, which the pull collectives see
  (``bandwidth_curve``; over UCX, where every peer is remote, ``nic_curve``);
- LogGP's o (``overhead_us``): the time per call of a stream of 8-byte non-blocking
  puts to the calling PE itself (a local copy: the host call's own cost); g
  (``gap_us``): the same stream to PE 1, which pays the transport's issue cost too;
- a barrier round (``sync_latency_us``): a round of flags around a ring of all PEs at
  once (each sets its right-hand neighbour's flag and waits for its own), less o;
- contention (``incast_curve``): PEs 1..k put the largest size into PE 0 at once, for
  k = 1 .. P-1: the bandwidth PE 0 takes in with k writers;
- γ per dtype: a NumPy add of 4 MiB arrays.

With ``--transport ucx`` every peer goes through UCX (``PYSHMEM_REMOTE_ONLY=1``) and
the fit is the network link's too.
"""

import json
import os
import statistics
import time

SIZES = [8 << (2 * k) for k in range(10)]  # 8 B ... 2 MiB, by 4
QUICK_SIZES = [8, 512, 32 << 10]
REDUCE_DTYPES = ("float64", "float32", "int64", "int32")


def _reduce_GBps(nbytes=4 << 20, reps=20):
    """{dtype: GB/s of input} of a NumPy add of two `nbytes` arrays, best of `reps`, and
    ``default`` (float32's)."""
    import numpy as np

    out = {}
    for name in REDUCE_DTYPES:
        a = np.ones(nbytes // np.dtype(name).itemsize, dtype=name)
        b = np.ones_like(a)
        dst = np.empty_like(a)
        best = float("inf")
        for _ in range(reps):
            t0 = time.perf_counter()
            np.add(a, b, out=dst)
            best = min(best, time.perf_counter() - t0)
        out[name] = round(2 * nbytes / best / 1e9, 3)  # bytes of input per second
    out["default"] = out["float32"]
    return out


def _curve(shmem, sizes, iters):
    """[[bytes, GB/s], ...]: PE 0's median bandwidth while every PE puts to its right-hand
    neighbour at once (the last byte of each transfer checked on the receiver), with the
    time at the smallest size (the host call and the quiet, under the same contention)
    taken off: the copy's own rate, which a collective's copies inside one call run at."""
    import numpy as np

    me, n = shmem.my_pe(), shmem.n_pes()
    src = shmem.zeros(max(sizes), np.uint8)
    dst = shmem.zeros(max(sizes), np.uint8)
    right = (me + 1) % n
    medians = []
    for k, size in enumerate(sizes):
        src[:size] = (k + me) % 251 + 1
        times = []
        for i in range(max(3, iters // 4) + 2):
            shmem.barrier_all()
            t0 = time.perf_counter()
            shmem.put(dst[:size], src[:size], right)
            shmem.quiet()
            if i >= 2:
                times.append(time.perf_counter() - t0)
        shmem.barrier_all()
        left = (me - 1) % n
        if dst[size - 1] != (k + left) % 251 + 1:
            from pyshmem.errors import ShmemError

            raise ShmemError(f"pyshmem.model calibrate: a {size}-byte put from PE {left} to PE {me} arrived wrong")
        medians.append(statistics.median(times))
    shmem.free(dst)
    shmem.free(src)
    return [[size, round(size / max(1e-9, t - medians[0]) / 1e9, 4)] for size, t in zip(sizes, medians)]


def _incast(shmem, size, iters):
    """[[k, GB/s], ...] for k = 1 .. P-1 (PE 0's figures): PEs 1..k each put `size` bytes
    into their own slice of PE 0's buffer at once (put + quiet after a barrier; the
    slices' last bytes checked on PE 0); k·size over the slowest sender's median time
    is what PE 0 takes in with k writers: contention at one receiver."""
    import numpy as np

    me, n = shmem.my_pe(), shmem.n_pes()
    src = shmem.zeros(size, np.uint8)
    dst = shmem.zeros(n * size, np.uint8)
    slot = shmem.zeros(n, np.float64)  # each sender's median, put into PE 0's
    mine = np.zeros(1, np.float64)
    curve = []
    for k in range(1, n):
        src[:] = (k + me) % 251 + 1
        times = []
        for i in range(max(3, iters // 4) + 2):
            shmem.barrier_all()
            if 1 <= me <= k:
                t0 = time.perf_counter()
                shmem.put(dst[me * size:(me + 1) * size], src, 0)
                shmem.quiet()
                if i >= 2:
                    times.append(time.perf_counter() - t0)
        if 1 <= me <= k:
            mine[0] = statistics.median(times)
            shmem.put(slot[me:me + 1], mine, 0)
            shmem.quiet()
        shmem.barrier_all()
        if me == 0:
            for j in range(1, k + 1):
                if dst[(j + 1) * size - 1] != (k + j) % 251 + 1:
                    from pyshmem.errors import ShmemError

                    raise ShmemError(f"pyshmem.model calibrate: a {size}-byte put from PE {j} to PE 0 arrived wrong")
            curve.append([k, round(k * size / max(1e-9, float(slot[1:k + 1].max())) / 1e9, 4)])
    shmem.barrier_all()
    for buf in (slot, dst, src):
        shmem.free(buf)
    return curve


def _sync_round_us(shmem, iters):
    """Median time (PE 0's) of one round of flags around a ring, every PE at once: each
    sets a flag on its right-hand neighbour and waits for its left-hand one's. One
    dissemination round, with the contention of all PEs active at once (on a host with
    fewer CPUs than PEs it includes their descheduling) but no collective call."""
    import numpy as np

    me, n = shmem.my_pe(), shmem.n_pes()
    flag = shmem.zeros(1, np.int64)
    right = (me + 1) % n
    times = []
    shmem.barrier_all()
    for i in range(1, iters + 11):
        t0 = time.perf_counter()
        shmem.atomic_set(flag, i, right)
        shmem.wait_until(flag, shmem.CMP_GE, i)
        if i > 10:
            times.append(time.perf_counter() - t0)
    shmem.barrier_all()
    shmem.free(flag)
    return statistics.median(times) * 1e6


def _gap_us(shmem, target=1, count=2000):
    """Microseconds per message of `count` 8-byte put_nbi from PE 0 to PE `target`, then
    one quiet (to PE 0 itself: a local copy, so the host call's own cost)."""
    import numpy as np

    buf = shmem.zeros(8, np.uint8)
    best = float("inf")
    if shmem.my_pe() == 0:
        view = buf[:8]
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(count):
                shmem.put_nbi(view, view, target)
            shmem.quiet()
            best = min(best, time.perf_counter() - t0)
    shmem.barrier_all()
    shmem.free(buf)
    return best / count * 1e6


def measure(transport="shm", sizes=None, iters=200, quick=False, api="host"):
    """Measures this machine; every PE must call it (the runtime must not be started yet
    when `transport` matters, as it sets PYSHMEM_REMOTE_ONLY before init).

    Args:
        transport: ``shm`` (load/store between the node's PEs) or ``ucx``.
        api: ``host`` (the link is the host API's put + quiet) or ``device`` (the device
            API's put + quiet from a kernel thread, perftest's ``--api device``: on the
            CPU build with ``ucx`` that is the proxy's path; o is 0 there, g the
            inverse of the device API's 8-byte put message rate).
        sizes: the sizes to fit and to measure the bandwidth curve at (default 8 B - 2 MiB).
        iters: timed iterations per size.
        quick: three sizes and few iterations (the tests' run).

    Returns:
        dict: the topology (Topology's fields plus ``calibration``) on PE 0, None elsewhere.

    Raises:
        InvalidArgumentError: fewer than 2 PEs, or an unknown transport or api.
    """
    from pyshmem.errors import InvalidArgumentError

    if transport not in ("shm", "ucx"):
        raise InvalidArgumentError(f"pyshmem.model calibrate: --transport must be shm or ucx, not {transport!r}")
    if api not in ("host", "device"):
        raise InvalidArgumentError(f"pyshmem.model calibrate: --api must be host or device, not {api!r}")
    os.environ["PYSHMEM_REMOTE_ONLY"] = "1" if transport == "ucx" else "0"  # before the runtime starts
    import pyshmem as shmem
    from pyshmem.model.fit import fit_alpha_beta
    from pyshmem.perftest.cli import _parser
    from pyshmem.perftest.p2p import TESTS

    if shmem.n_pes() < 2:
        raise InvalidArgumentError("pyshmem.model calibrate: needs at least 2 PEs (shmemrun -n 2 ...)")
    sizes = sorted(sizes or (QUICK_SIZES if quick else SIZES))
    iters = min(iters, 20) if quick else iters

    def opts(test, lo=sizes[0], hi=sizes[-1]):
        return _parser(TESTS).parse_args([test, "-b", str(lo), "-e", str(hi), "-n", str(iters), "-w",
                                          str(max(2, iters // 10)), "--api", api])

    # The host-side figures first: kernel threads a device run leaves idle for a while
    # still take CPU time from a ring of flags on a host with few CPUs.
    sync_us = _sync_round_us(shmem, max(iters, 200))
    curve = _curve(shmem, sizes, iters)
    incast = _incast(shmem, sizes[-1], iters)
    gap = _gap_us(shmem)
    call = _gap_us(shmem, 0)
    if api == "device":
        from pyshmem.perftest.device import run as device_run

        rows = device_run(opts("put_latency"), sizes)
        rate = device_run(opts("put_bw", 8, 8), [8])
    else:
        rows = TESTS["put_latency"][0](opts("put_latency"), sizes)
    shmem.barrier_all()
    overhead, host_o = call, call
    if api == "device" and shmem.my_pe() == 0:
        gap, overhead = 1.0 / rate[0]["msg_rate_mps"], 0.0  # a kernel thread's stream; no host call
    if shmem.my_pe() != 0:
        return None
    points = [(r["bytes"], r["lat_p50_us"] * 1e-6) for r in rows]
    f = fit_alpha_beta(points)
    link = {"bandwidth_GBps": round(1 / f.beta_s_per_byte / 1e9, 3) if f.beta_s_per_byte else 1e6,
            "latency_us": round(f.alpha_s * 1e6, 4)}
    # Over UCX every peer is remote: each PE is a node of its own with the fitted NIC.
    nodes, per_node = (shmem.n_pes(), 1) if transport == "ucx" else (1, shmem.n_pes())
    return {"name": "this", "nodes": nodes, "devices_per_node": per_node, "intra": link, "intra_multicast": False,
            "nic": link, "nics_per_node": 1, "reduce_GBps": _reduce_GBps(),
            "sync_latency_us": round(max(0.001, sync_us - host_o), 4), "gap_us": round(gap, 4),
            "overhead_us": round(overhead, 4), ("nic_curve" if transport == "ucx" else "bandwidth_curve"): curve,
            "incast_curve": incast,
            "calibration": {"transport": transport, "api": api,
                            "test": f"put_latency --api {api} (blocking put + quiet, PE 0 -> PE 1)",
                            "points": [{"bytes": n, "p50_us": round(t * 1e6, 4)} for n, t in points],
                            "alpha_us": f.alpha_s * 1e6, "beta_GBps": link["bandwidth_GBps"],
                            "residual": f.residual, "outliers": list(f.outliers),
                            "sync": "flags around a ring of all PEs at once (one round), PE 0's median, less o",
                            "bandwidth_curve": "every PE puts to its right-hand neighbour at once; PE 0's median",
                            "incast_curve": f"PEs 1..k put {sizes[-1]} bytes each into PE 0 at once; k x size over "
                                            "the slowest sender's median"}}


def run(transport="shm", output="machine.json", iters=200, quick=False, api="host"):
    """Measures (:func:`measure`) and writes the file (PE 0); every PE must call it.

    Args:
        transport: ``shm`` or ``ucx``.
        api: ``host`` or ``device`` (see :func:`measure`).
        output: the JSON file PE 0 writes.
        iters: timed iterations per size.
        quick: three sizes and few iterations (the tests' run).

    Returns:
        dict: the topology written (PE 0), None on the other PEs.

    Raises:
        InvalidArgumentError: fewer than 2 PEs, or an unknown transport.
    """
    topo = measure(transport, None, iters, quick, api)
    if topo is None:
        return None
    with open(output, "w") as fh:
        json.dump(topo, fh, indent=1)
    cal = topo["calibration"]
    print(f"pyshmem.model calibrate: {transport}, {api} API, {topo['nodes'] * topo['devices_per_node']} PEs: alpha {cal['alpha_us']:.3f} us, "
          f"beta {cal['beta_GBps']:.2f} GB/s, reduction {topo['reduce_GBps']['float32']:.1f} GB/s (float32), "
          f"barrier round {topo['sync_latency_us']:.3f} us, gap {topo['gap_us']:.3f} us; fit residual "
          f"{100 * cal['residual']:.1f} % (median relative error over {len(cal['points'])} sizes), outliers: "
          f"{', '.join(map(str, cal['outliers'])) or 'none'}; wrote {output}", flush=True)
    return topo
