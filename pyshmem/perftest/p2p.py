"""Point-to-point perftests of the host API: latency, bandwidth, atomics, ping-pong.

PE 0 drives and PE 1 is the peer (other PEs idle at the barriers), as in NVSHMEM's
perftest. Every test checks what arrived after timing, so a wrong transfer fails the
run (PerftestError) instead of printing a fast number.
"""

import time

import numpy as np

import pyshmem as shmem
from pyshmem.perftest.report import Row, latency_stats

__all__ = ["PerftestError", "TESTS"]


class PerftestError(AssertionError):
    """A transfer delivered wrong data (the run must fail, not report a figure)."""


def _pattern(nbytes, salt):
    return ((np.arange(nbytes, dtype=np.uint32) * 131 + salt * 7 + 1) & 0xFF).astype(np.uint8)


def received(opts, arr):
    """What a check compares: the data itself, or with --inject-error a copy whose first
    element has a high bit flipped (the suite's own test that a wrong transfer fails the
    run; a high bit, so that float comparisons with a tolerance see it too)."""
    arr = np.array(arr, copy=True)
    if getattr(opts, "inject_error", False) and arr.size:
        arr.reshape(-1)[:1].view(np.uint8)[-1] ^= 0x40
    return arr


def _check(ok, opts, what):
    if not ok:
        raise PerftestError(f"perftest {opts.test} on PE {shmem.my_pe()}: {what}")


def _lat_row(opts, nbytes, times, **extra):
    us = np.asarray(times) * 1e6
    return Row(test=opts.test, api="host", npes=shmem.n_pes(), bytes=int(nbytes), iters=len(times),
               **latency_stats(us), **extra)


class _Buffers:
    """Symmetric source/destination bytes of the largest size, and a flag word."""

    def __init__(self, opts):
        self.src = shmem.zeros(opts.max_size, np.uint8)
        self.dst = shmem.zeros(opts.max_size, np.uint8)
        self.flag = shmem.zeros(1, np.int64)
        self.sig = shmem.new_signal()

    def free(self):
        shmem.barrier_all()
        shmem.del_signal(self.sig)
        for a in (self.flag, self.dst, self.src):
            shmem.free(a)


def _rma_latency(opts, sizes, kind):
    """put_latency / get_latency: blocking put + quiet (get) of each size, PE 0 -> PE 1."""
    b, me, rows = _Buffers(opts), shmem.my_pe(), []
    for salt, n in enumerate(sizes):
        pat = _pattern(n, salt)
        # put: PE 0's source -> PE 1's destination; get: PE 1's source -> PE 0's destination.
        sender = 0 if kind == "put" else 1
        if me == sender:
            b.src[:n] = pat
        elif me == 1 - sender:
            b.dst[:n] = 0
        shmem.barrier_all()
        times = []
        if me == 0:
            for i in range(opts.warmup + opts.iters):
                t0 = time.perf_counter()
                if kind == "put":
                    shmem.put(b.dst[:n], b.src[:n], 1)
                    shmem.quiet()
                else:
                    shmem.get(b.dst[:n], b.src[:n], 1)
                if i >= opts.warmup:
                    times.append(time.perf_counter() - t0)
        shmem.barrier_all()
        if kind == "put" and me == 1:
            _check(np.array_equal(received(opts, b.dst[:n]), pat), opts, f"{n}-byte put delivered wrong data")
        if kind == "get" and me == 0:
            _check(np.array_equal(received(opts, b.dst[:n]), pat), opts, f"{n}-byte get returned wrong data")
        if me == 0:
            rows.append(_lat_row(opts, n, times))
    b.free()
    return rows


def put_latency(opts, sizes):
    return _rma_latency(opts, sizes, "put")


def get_latency(opts, sizes):
    return _rma_latency(opts, sizes, "get")


def _element_latency(opts, kind):
    """p_latency / g_latency: one element of each dtype size (sizes are element sizes)."""
    me, rows = shmem.my_pe(), []
    for dtype in (np.int32, np.int64):
        x = shmem.zeros(1, dtype)
        out = np.zeros(1, dtype)
        val = np.array([0x5A5A5A5A], dtype)
        if me == 1:
            x[0] = val[0]
        shmem.barrier_all()
        times = []
        if me == 0:
            for i in range(opts.warmup + opts.iters):
                t0 = time.perf_counter()
                if kind == "p":
                    shmem.put(x, val, 1)
                    shmem.quiet()
                else:
                    shmem.get(out, x, 1)
                if i >= opts.warmup:
                    times.append(time.perf_counter() - t0)
            if kind == "g":
                got = received(opts, out)[0]
                _check(got == val[0], opts, f"g of a {np.dtype(dtype)} returned {got}, expected {val[0]}")
        shmem.barrier_all()
        if kind == "p" and me == 1:
            got = received(opts, x)[0]
            _check(got == val[0], opts, f"p of a {np.dtype(dtype)} delivered {got}, expected {val[0]}")
        if me == 0:
            rows.append(_lat_row(opts, np.dtype(dtype).itemsize, times, dtype=np.dtype(dtype).name))
        shmem.barrier_all()
        shmem.free(x)
    return rows


def p_latency(opts, sizes):
    return _element_latency(opts, "p")


def g_latency(opts, sizes):
    return _element_latency(opts, "g")


def _bandwidth(opts, sizes, kind):
    """put_bw / get_bw: `iters` non-blocking transfers of each size, then one quiet.
    With --bidir PE 1 does the same toward PE 0 at the same time."""
    b, me, rows = _Buffers(opts), shmem.my_pe(), []
    active = me == 0 or (opts.bidir and me == 1)
    peer = 1 - me if me < 2 else None
    for salt, n in enumerate(sizes):
        pat = _pattern(n, salt + me)
        b.src[:n] = pat
        b.dst[:n] = 0
        shmem.barrier_all()
        elapsed = None
        if active:
            for rep in range(2):  # warm-up pass, then the timed one
                t0 = time.perf_counter()
                for _ in range(opts.iters):
                    if kind == "put":
                        shmem.put_nbi(b.dst[:n], b.src[:n], peer)
                    else:
                        shmem.get_nbi(b.dst[:n], b.src[:n], peer)
                shmem.quiet()
                elapsed = time.perf_counter() - t0
        shmem.barrier_all()
        # put: the peer checks what it received; get: the getter checks what it fetched.
        receiver = (me == 1 or (opts.bidir and me == 0)) if kind == "put" else active
        if receiver and me < 2:
            want = _pattern(n, salt + (1 - me))
            _check(np.array_equal(received(opts, b.dst[:n]), want), opts, f"{n}-byte {kind}s delivered wrong data")
        if me == 0:
            moved = n * opts.iters * (2 if opts.bidir else 1)
            rows.append(Row(test=opts.test, api="host", npes=shmem.n_pes(), bytes=n, iters=opts.iters,
                            bw_gbps=moved / elapsed / 1e9, msg_rate_mps=opts.iters / elapsed / 1e6,
                            bidir=bool(opts.bidir)))
    b.free()
    return rows


def put_bw(opts, sizes):
    return _bandwidth(opts, sizes, "put")


def get_bw(opts, sizes):
    return _bandwidth(opts, sizes, "get")


# fetching?, call(target, value, pe) -> result; expected final value after k calls from 0
_AMOS = {
    "fetch_add": (True, lambda t, pe: shmem.atomic_fetch_add(t, 1, pe), lambda k: k),
    "add": (False, lambda t, pe: shmem.atomic_add(t, 1, pe), lambda k: k),
    "fetch_inc": (True, lambda t, pe: shmem.atomic_fetch_inc(t, pe), lambda k: k),
    "inc": (False, lambda t, pe: shmem.atomic_inc(t, pe), lambda k: k),
    "cswap": (True, lambda t, pe: shmem.atomic_compare_swap(t, 0, 0, pe), lambda k: 0),
    "swap": (True, lambda t, pe: shmem.atomic_swap(t, 5, pe), lambda k: 5 if k else 0),
    "set": (False, lambda t, pe: shmem.atomic_set(t, 9, pe), lambda k: 9 if k else 0),
    "fetch": (True, lambda t, pe: shmem.atomic_fetch(t, pe), lambda k: 0),
    "fetch_xor": (True, lambda t, pe: shmem.atomic_fetch_xor(t, 1, pe), lambda k: k % 2),
    "xor": (False, lambda t, pe: shmem.atomic_xor(t, 1, pe), lambda k: k % 2),
    "fetch_or": (True, lambda t, pe: shmem.atomic_fetch_or(t, 3, pe), lambda k: 3 if k else 0),
    "fetch_and": (True, lambda t, pe: shmem.atomic_fetch_and(t, 0, pe), lambda k: 0),
}


def _atomic(opts, sizes, bw):
    """atomic_latency / atomic_bw on an int64 at PE 1: -a picks the operation."""
    if opts.atomic not in _AMOS:
        raise ValueError(f"perftest {opts.test}: -a {opts.atomic!r} is not one of {', '.join(_AMOS)}")
    fetching, call, final = _AMOS[opts.atomic]
    me = shmem.my_pe()
    t = shmem.zeros(1, np.int64)
    shmem.barrier_all()
    times, elapsed = [], None
    if me == 0:
        for i in range(opts.warmup):
            call(t, 1)
        shmem.quiet()
        shmem.atomic_set(t, 0, 1)  # start the checked sequence from 0
        if bw and not fetching:
            t0 = time.perf_counter()
            for _ in range(opts.iters):
                call(t, 1)
            shmem.quiet()
            elapsed = time.perf_counter() - t0
        else:
            for _ in range(opts.iters):
                t0 = time.perf_counter()
                call(t, 1)
                times.append(time.perf_counter() - t0)
            elapsed = sum(times)
        shmem.quiet()
    shmem.barrier_all()
    if me == 1:
        got = int(received(opts, t)[0])
        _check(got == final(opts.iters), opts,
               f"after {opts.iters} atomic {opts.atomic}s the target holds {got}, expected {final(opts.iters)}")
    rows = []
    if me == 0:
        if bw:
            rows.append(Row(test=opts.test, api="host", npes=shmem.n_pes(), bytes=8, iters=opts.iters, op=opts.atomic,
                            bw_gbps=8 * opts.iters / elapsed / 1e9, msg_rate_mps=opts.iters / elapsed / 1e6))
        else:
            rows.append(_lat_row(opts, 8, times, op=opts.atomic))
    shmem.barrier_all()
    shmem.free(t)
    return rows


def atomic_latency(opts, sizes):
    return _atomic(opts, sizes, bw=False)


def atomic_bw(opts, sizes):
    return _atomic(opts, sizes, bw=True)


def _ping_pong(opts, sizes, kind):
    """put_ping_pong (put + fence + flag put), signal_ping_pong (signal only),
    put_signal_ping_pong (put_signal): PE 0 and PE 1 answer each other; one-way latency
    is half the round trip."""
    b, me, rows = _Buffers(opts), shmem.my_pe(), []
    for salt, n in enumerate(sizes if kind != "signal" else sizes[:1]):
        n = 0 if kind == "signal" else n
        b.src[:n] = _pattern(n, salt + me)
        b.flag[0] = 0  # rounds count from 1 again for every size
        b.sig[0] = 0
        shmem.barrier_all()
        times = []
        if me < 2:
            peer = 1 - me
            for i in range(1, opts.warmup + opts.iters + 1):
                t0 = time.perf_counter()
                if me == 0:
                    _send(b, n, i, peer, kind)
                    _wait(b, i, kind)
                else:
                    _wait(b, i, kind)
                    _send(b, n, i, peer, kind)
                if i > opts.warmup:
                    times.append((time.perf_counter() - t0) / 2)
            rounds = opts.warmup + opts.iters
            last = int(received(opts, b.flag if kind == "put" else b.sig)[0])
            _check(last == rounds, opts, f"the last round seen is {last}, expected {rounds}")
            if n:
                _check(np.array_equal(received(opts, b.dst[:n]), _pattern(n, salt + peer)), opts,
                       f"{n}-byte ping-pong payload arrived wrong")
        shmem.barrier_all()
        if me == 0:
            rows.append(_lat_row(opts, n, times))
        if kind == "signal":
            break
    b.free()
    return rows


def _send(b, n, i, peer, kind):
    if kind == "put":
        if n:
            shmem.put(b.dst[:n], b.src[:n], peer)
        shmem.fence()  # the payload before the flag
        shmem.atomic_set(b.flag, i, peer)
    else:  # signal / put_signal: the signal carries the round
        shmem.put_signal(b.dst[:n], b.src[:n], peer, b.sig, i, shmem.SIGNAL_SET)


def _wait(b, i, kind):
    if kind == "put":
        shmem.wait_until(b.flag, shmem.CMP_GE, i)
    else:
        shmem.signal_wait_until(b.sig, shmem.CMP_GE, i)


def put_ping_pong(opts, sizes):
    return _ping_pong(opts, sizes, "put")


def signal_ping_pong(opts, sizes):
    return _ping_pong(opts, sizes, "signal")


def put_signal_ping_pong(opts, sizes):
    return _ping_pong(opts, sizes, "put_signal")


# name -> (function, kind of table, needs 2 PEs)
TESTS = {
    "put_latency": (put_latency, "latency", True),
    "get_latency": (get_latency, "latency", True),
    "p_latency": (p_latency, "latency", True),
    "g_latency": (g_latency, "latency", True),
    "put_bw": (put_bw, "bandwidth", True),
    "get_bw": (get_bw, "bandwidth", True),
    "atomic_latency": (atomic_latency, "latency", True),
    "atomic_bw": (atomic_bw, "bandwidth", True),
    "put_ping_pong": (put_ping_pong, "latency", True),
    "signal_ping_pong": (signal_ping_pong, "latency", True),
    "put_signal_ping_pong": (put_signal_ping_pong, "latency", True),
}
