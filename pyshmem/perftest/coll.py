"""Collective perftests of the host API: barrier, sync, bcast, fcollect, alltoall, reduction.

Every PE runs the loop; PE 0 reports the mean/min/max of one call (after a barrier
that lines the PEs up), and algbw/busbw in nccl-tests' convention: algbw = bytes per
PE / time; busbw = algbw x (n-1)/n for fcollect/alltoall, x 2(n-1)/n for reductions,
x 1 for bcast. Results are checked against NumPy after timing.
"""

import time

import numpy as np

import pyshmem as shmem
from pyshmem.perftest.p2p import PerftestError, received
from pyshmem.perftest.report import Row, latency_stats

__all__ = ["TESTS"]

_BUS = {"bcast": lambda n: 1.0, "fcollect": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
        "reduction": lambda n: 2 * (n - 1) / n}


def _fail(opts, what):
    raise PerftestError(f"perftest {opts.test} on PE {shmem.my_pe()}: {what}")


def _timed(opts, fn):
    for _ in range(opts.warmup):
        fn()
    times = []
    for _ in range(opts.iters):
        shmem.sync_all()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return np.asarray(times) * 1e6


def _row(opts, nbytes, us, bus=None):
    me_n = shmem.n_pes()
    r = Row(test=opts.test, api="host", npes=me_n, bytes=int(nbytes), iters=len(us), **latency_stats(us))
    if bus is not None and nbytes:
        algbw = nbytes / (us.mean() * 1e-6) / 1e9
        r.update(algbw_gbps=algbw, busbw_gbps=algbw * bus(me_n))
    return r


def barrier(opts, sizes):
    us = _timed(opts, shmem.barrier_all)
    return [_row(opts, 0, us)] if shmem.my_pe() == 0 else []


def sync(opts, sizes):
    us = _timed(opts, shmem.sync_all)
    return [_row(opts, 0, us)] if shmem.my_pe() == 0 else []


def _dtype(opts):
    try:
        return np.dtype(opts.dtype)
    except TypeError:
        raise ValueError(f"perftest {opts.test}: -d {opts.dtype!r} is not a NumPy dtype") from None


def _values(dtype, count, pe, salt):
    v = (np.arange(count) * 3 + pe * 5 + salt) % 7 + 1
    return v.astype(dtype)


def _data_collective(opts, sizes):
    me, n = shmem.my_pe(), shmem.n_pes()
    dtype = _dtype(opts)
    item = dtype.itemsize
    max_count = max(1, opts.max_size // item)
    src = shmem.zeros(max_count * n, dtype)
    dst = shmem.zeros(max_count * n, dtype)
    rows = []
    for salt, nbytes in enumerate(sizes):
        count = max(1, nbytes // item)
        if opts.test == "alltoall":
            src[:count * n] = _values(dtype, count * n, me, salt)
            us = _timed(opts, lambda: shmem.alltoall(dst, src, count))
            want = np.concatenate([_values(dtype, count * n, p, salt)[me * count:(me + 1) * count] for p in range(n)])
            ok = np.array_equal(received(opts, dst[:count * n]), want)
        elif opts.test == "fcollect":
            src[:count] = _values(dtype, count, me, salt)
            us = _timed(opts, lambda: shmem.fcollect(dst, src, count))
            ok = np.array_equal(received(opts, dst[:count * n]), np.concatenate([_values(dtype, count, p, salt) for p in range(n)]))
        elif opts.test == "bcast":
            src[:count] = _values(dtype, count, me, salt)
            us = _timed(opts, lambda: shmem.broadcast(dst, src, opts.root, count))
            ok = np.array_equal(received(opts, dst[:count]), _values(dtype, count, opts.root, salt))
        else:  # reduction
            src[:count] = _values(dtype, count, me, salt)
            us = _timed(opts, lambda: shmem.reduce(dst, src, opts.op, count))
            import functools

            ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
                     "or": np.bitwise_or, "xor": np.bitwise_xor}[opts.op]
            with np.errstate(over="ignore"):
                want = functools.reduce(ufunc, [_values(dtype, count, p, salt) for p in range(n)])
            got = received(opts, dst[:count])
            ok = np.allclose(got, want) if dtype.kind in "fc" else np.array_equal(got, want)
        if not ok:
            _fail(opts, f"{count} x {dtype} gave a result that differs from NumPy's")
        if me == 0:
            rows.append(_row(opts, count * item, us, _BUS[opts.test]))
            if opts.test == "reduction":
                rows[-1].update(op=opts.op, dtype=dtype.name)
    shmem.barrier_all()
    shmem.free(dst)
    shmem.free(src)
    return rows


TESTS = {
    "barrier": (barrier, "collective", False),
    "sync": (sync, "collective", False),
    "bcast": (_data_collective, "collective", False),
    "fcollect": (_data_collective, "collective", False),
    "alltoall": (_data_collective, "collective", False),
    "reduction": (_data_collective, "collective", False),
}
