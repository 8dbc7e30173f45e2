"""``--api device``: the device API timed inside kernels (pyshmem/perftest/kernels.cu).

Without a GPU the kernels are the CPU build (each block a host thread: the compiled
path of the CPU backend, no Python in the loop); with the cuda backend they are GPU
kernels on symmetric GPU arrays. Data is checked afterwards as in the host tests.
"""

from pathlib import Path

import numpy as np

import pyshmem as shmem
from pyshmem.collective import reduce_defined
from pyshmem.perftest.p2p import PerftestError, _pattern, received
from pyshmem.perftest.report import Row, latency_stats

__all__ = ["run"]

_THREADS = {"thread": 1, "warp": 32, "block": 128}
_SCOPE = {"thread": 0, "warp": 1, "block": 2}
_BUS = {"bcast": lambda n: 1.0, "fcollect": lambda n: (n - 1) / n, "alltoall": lambda n: (n - 1) / n,
        "reduction": lambda n: 2 * (n - 1) / n}


class _Env:
    """The kernels and buffers of this PE (GPU arrays on a GPU, symmetric NumPy otherwise)."""

    def __init__(self, opts, nbytes, extra_source=""):
        import pyshmem.cuda as pcuda

        self.pcuda = pcuda
        source = (Path(__file__).with_name("kernels.cu")).read_text() + extra_source
        self.module = pcuda.Module(source, name="pyshmem_perftest")
        self.gpu = self.module.target == "gpu"
        self.src = self.zeros(nbytes, np.uint8)
        self.dst = self.zeros(nbytes, np.uint8)
        self.flag = self.zeros(1, np.int64)
        self.threads = _THREADS[opts.scope or "thread"]
        self.scope = np.int32(_SCOPE[opts.scope or "thread"])

    def zeros(self, n, dtype):
        return self.pcuda.zeros(n, dtype) if self.gpu else shmem.zeros(n, dtype)

    def out(self, n):
        return self.pcuda.zeros(n, np.float64) if self.gpu else np.zeros(n, np.float64)

    def host(self, x):
        return x.copy_to_host() if self.gpu else np.array(x)

    def fill(self, x, values):
        if self.gpu:
            x.copy_from_host(np.ascontiguousarray(values))
        else:
            x[...] = values

    def launch(self, name, *args):
        self.pcuda.launch(self.module.get_kernel(name), 1, self.threads, *args)


def _check(ok, opts, what):
    if not ok:
        raise PerftestError(f"perftest {opts.test} (--api device) on PE {shmem.my_pe()}: {what}")


def _lat_row(opts, env, nbytes, ns, **extra):
    us = np.asarray(ns) / 1e3
    return Row(test=opts.test, api="device", scope=opts.scope or "thread", target="gpu" if env.gpu else "cpu",
               npes=shmem.n_pes(), bytes=int(nbytes), iters=len(us), **latency_stats(us), **extra)


def _p2p(opts, sizes, env):
    me, rows = shmem.my_pe(), []
    kinds = {"put_latency": 0, "get_latency": 1, "p_latency": 2, "g_latency": 3}
    element = opts.test in ("p_latency", "g_latency")
    for salt, n in enumerate([8] if element else sizes):
        pat = _pattern(n, salt)
        # put/p: PE 0 -> PE 1's dst; get/g: PE 1's src -> PE 0's dst.
        sender = 0 if opts.test in ("put_latency", "p_latency", "put_bw") else 1
        if me == sender or (opts.test == "put_ping_pong" and me < 2):
            env.fill(env.src[:n], pat)
        env.fill(env.dst[:n], np.zeros(n, np.uint8))
        env.fill(env.flag, np.zeros(1, np.int64))
        shmem.barrier_all()
        out = env.out(max(1, opts.iters))
        if opts.test == "put_ping_pong":
            if me < 2:
                env.launch("pt_ping_pong", env.dst, env.src, np.uint64(n), env.flag, np.int32(1 - me),
                           np.int32(me == 0), np.int32(opts.warmup), np.int32(opts.iters), env.scope, out)
        elif me == 0:
            if opts.test in ("put_bw", "get_bw"):
                env.launch("pt_bandwidth", np.int32(opts.test == "get_bw"), env.dst, env.src, np.uint64(n),
                           np.int32(1), np.int32(opts.iters), env.scope, out)
            else:
                env.launch("pt_latency", np.int32(kinds[opts.test]), env.dst, env.src, np.uint64(n), np.int32(1),
                           np.int32(opts.warmup), np.int32(opts.iters), env.scope, out)
        shmem.barrier_all()
        receiver = 1 if sender == 0 else 0
        if opts.test == "put_ping_pong" and me < 2:
            got = received(opts, env.host(env.dst[:n]))
            _check(np.array_equal(got, pat), opts, f"{n}-byte ping-pong payload arrived wrong")
        elif me == receiver:
            got = received(opts, env.host(env.dst[:n]))
            _check(np.array_equal(got, pat), opts, f"{n}-byte {opts.test.split('_')[0]} moved wrong data")
        if me == 0:
            ns = env.host(out)
            if opts.test in ("put_bw", "get_bw"):
                secs = float(ns[0]) / 1e9
                rows.append(Row(test=opts.test, api="device", scope=opts.scope or "thread",
                                target="gpu" if env.gpu else "cpu", npes=shmem.n_pes(), bytes=n, iters=opts.iters,
                                bw_gbps=n * opts.iters / secs / 1e9, msg_rate_mps=opts.iters / secs / 1e6))
            else:
                rows.append(_lat_row(opts, env, n, ns))
    return rows


def _reduction(opts, sizes):
    """reduction --api device: -o op over -d dtype elements, checked against NumPy's
    left fold over the PEs in order (the order the device reduction combines in)."""
    from pyshmem._gpu_coll import _REDUCE_TYPES

    dtype = np.dtype(opts.dtype)
    if dtype.name not in _REDUCE_TYPES or not dtype.isnative:
        raise ValueError(f"perftest reduction: -d {opts.dtype} is not a reduction type; use one of "
                         f"{', '.join(_REDUCE_TYPES)}")
    if not reduce_defined(opts.op, dtype):
        raise ValueError(f"perftest reduction: -o {opts.op} is not defined for {dtype}")
    name, ctype = dtype.name, _REDUCE_TYPES[dtype.name]
    env = _Env(opts, 8, f"PT_REDUCE({opts.op}_reduce, {name}, {ctype})\n")
    kernel = f"pt_reduce_{opts.op}_reduce_{name}"
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum, "and": np.bitwise_and,
             "or": np.bitwise_or, "xor": np.bitwise_xor}[opts.op]
    me, npes, rows = shmem.my_pe(), shmem.n_pes(), []
    most = max(1, max(sizes) // dtype.itemsize)
    src, dst = env.zeros(most, dtype), env.zeros(most, dtype)  # collective allocations, once
    for salt, nbytes in enumerate(sizes):
        count = max(1, nbytes // dtype.itemsize)
        theirs = {p: ((np.arange(count) % 7) + p + salt + 1).astype(dtype) for p in range(npes)}
        env.fill(src[:count], theirs[me])
        shmem.barrier_all()
        out = env.out(opts.iters)
        env.pcuda.launch(env.module.get_kernel(kernel), 1, 128, dst, src, np.uint64(count), np.int32(opts.warmup),
                         np.int32(opts.iters), out)
        want = theirs[0]
        for p in range(1, npes):
            want = ufunc(want, theirs[p])
        _check(np.array_equal(received(opts, env.host(dst[:count])), want), opts,
               f"{opts.op}_reduce of {count} {dtype} differs from NumPy's")
        if me == 0:
            row = _lat_row(opts, env, count * dtype.itemsize, env.host(out))
            algbw = count * dtype.itemsize / (row["lat_avg_us"] * 1e-6) / 1e9
            rows.append(Row(row, algbw_gbps=algbw, busbw_gbps=algbw * _BUS["reduction"](npes)))
        shmem.barrier_all()
    return rows


def _collective(opts, sizes, env):
    me, npes, rows = shmem.my_pe(), shmem.n_pes(), []
    ops = {"barrier": 0, "sync": 1, "bcast": 2, "fcollect": 3, "alltoall": 4}
    src = env.zeros(max(1, max(sizes) // 8) * npes, np.int64)  # collective allocations, once
    dst = env.zeros(max(1, max(sizes) // 8) * npes, np.int64)
    for salt, nbytes in enumerate([0] if opts.test in ("barrier", "sync") else sizes):
        count = max(1, nbytes // 8)
        per = count * 8
        vals = (np.arange(count * (npes if opts.test == "alltoall" else 1)) + 1000 * me + salt).astype(np.int64)
        env.fill(src[:vals.size], vals)
        shmem.barrier_all()
        out = env.out(opts.iters)
        env.launch("pt_collective", np.int32(ops[opts.test]), dst, src, np.uint64(per), np.int32(opts.root),
                   np.int32(opts.warmup), np.int32(opts.iters), np.int32(0), out)
        got = received(opts, env.host(dst[:count * npes])) if nbytes else None
        theirs = {p: (np.arange(vals.size) + 1000 * p + salt).astype(np.int64) for p in range(npes)}
        if opts.test == "bcast":
            _check(np.array_equal(got[:count], theirs[opts.root][:count]), opts, "broadcast result differs")
        elif opts.test == "fcollect":
            _check(np.array_equal(got, np.concatenate([theirs[p][:count] for p in range(npes)])), opts,
                   "fcollect result differs")
        elif opts.test == "alltoall":
            want = np.concatenate([theirs[p][me * count:(me + 1) * count] for p in range(npes)])
            _check(np.array_equal(got, want), opts, "alltoall result differs")
        if me == 0:
            row = _lat_row(opts, env, per if nbytes else 0, env.host(out))
            if nbytes and opts.test in _BUS:
                algbw = per / (row["lat_avg_us"] * 1e-6) / 1e9
                row.update(algbw_gbps=algbw, busbw_gbps=algbw * _BUS[opts.test](npes))
            rows.append(row)
        shmem.barrier_all()
    return rows


_ATOMIC_CODES = ("fetch_add", "add", "fetch_inc", "inc", "cswap", "swap", "set", "fetch", "fetch_xor", "xor",
                 "fetch_or", "fetch_and")


def _atomic(opts, env):
    """atomic_latency / atomic_bw: -a on an int64 at PE 1, timed in pt_atomic."""
    from pyshmem.perftest.p2p import _AMOS

    if opts.atomic not in _ATOMIC_CODES:
        raise ValueError(f"perftest {opts.test}: -a {opts.atomic!r} is not one of {', '.join(_ATOMIC_CODES)}")
    me, bw = shmem.my_pe(), opts.test == "atomic_bw"
    target = env.zeros(1, np.int64)
    shmem.barrier_all()
    out = env.out(max(1, opts.iters))
    if me == 0:
        env.launch("pt_atomic", np.int32(_ATOMIC_CODES.index(opts.atomic)), target, np.int32(1),
                   np.int32(opts.warmup), np.int32(opts.iters), np.int32(bw), out)
    shmem.barrier_all()
    if me == 1:
        got, want = int(received(opts, env.host(target))[0]), _AMOS[opts.atomic][2](opts.iters)
        _check(got == want, opts, f"after {opts.iters} atomic {opts.atomic}s the target holds {got}, expected {want}")
    if me != 0:
        return []
    ns = env.host(out)
    if bw:
        secs = float(ns[0]) / 1e9
        return [Row(test=opts.test, api="device", scope="thread", target="gpu" if env.gpu else "cpu",
                    npes=shmem.n_pes(), bytes=8, iters=opts.iters, op=opts.atomic,
                    bw_gbps=8 * opts.iters / secs / 1e9, msg_rate_mps=opts.iters / secs / 1e6)]
    return [_lat_row(opts, env, 8, ns, op=opts.atomic)]


def _signal_ping_pong(opts, sizes, env):
    me, rows = shmem.my_pe(), []
    sig = env.zeros(1, np.uint64)
    for salt, n in enumerate([0] if opts.test == "signal_ping_pong" else sizes):
        pat = _pattern(n, salt)
        if me < 2:
            env.fill(env.src[:n], pat)
        env.fill(env.dst[:n], np.zeros(n, np.uint8))
        env.fill(sig, np.zeros(1, np.uint64))
        shmem.barrier_all()
        out = env.out(max(1, opts.iters))
        if me < 2:
            env.launch("pt_signal_ping_pong", env.dst, env.src, np.uint64(n), sig, np.int32(1 - me),
                       np.int32(me == 0), np.int32(opts.warmup), np.int32(opts.iters), env.scope, out)
        shmem.barrier_all()
        if me < 2:
            last = int(received(opts, env.host(sig))[0])
            _check(last == opts.warmup + opts.iters, opts,
                   f"the last round seen is {last}, expected {opts.warmup + opts.iters}")
            _check(np.array_equal(env.host(env.dst[:n]), pat), opts, f"{n}-byte payload arrived wrong")
        if me == 0:
            rows.append(_lat_row(opts, env, n, env.host(out)))
    return rows


_P2P = ("put_latency", "get_latency", "p_latency", "g_latency", "put_bw", "get_bw", "put_ping_pong",
        "atomic_latency", "atomic_bw", "signal_ping_pong", "put_signal_ping_pong")


def run(opts, sizes):
    """Runs opts.test with the device API; returns PE 0's rows.

    Every perftest has a device form (the command line admits only perftest names).

    Raises:
        PerftestError: a transfer moved wrong data.
        ValueError: an option the test cannot take (-a, -o, -d).
    """
    if opts.test == "reduction":
        return _reduction(opts, sizes)
    env = _Env(opts, max(sizes))
    if opts.test in ("atomic_latency", "atomic_bw"):
        return _atomic(opts, env)
    if opts.test in ("signal_ping_pong", "put_signal_ping_pong"):
        return _signal_ping_pong(opts, sizes, env)
    return _p2p(opts, sizes, env) if opts.test in _P2P else _collective(opts, sizes, env)
