"""Point-to-point figures of a shmem4py-style module, for ``perftest compare``.

    shmemrun -n 2 python shmem_p2p.py --module pyshmem  --sizes 8,64,4096 --out r.jsonl
    oshrun -np 2 --mca osc ^rdma python shmem_p2p.py --module shmem4py --sizes 8,64,4096 --out r.jsonl

The same code runs against pyshmem and shmem4py (pyshmem's host API is shmem4py's),
so the figures differ only by the runtime underneath. Run as a file, not as part of
the pyshmem package, so that the shmem4py run never imports pyshmem. PE 0 drives and
PE 1 is the peer; PE 0 writes one JSON object per figure ({"figure", "bytes", "value",
"unit"}, as every system of pyshmem/perftest/compare.py does): put_latency (blocking put + quiet, µs), ping_pong (one
way: put + wait_until answered the same way, half a round trip, µs) and put_bw (a
window of put_nbi + quiet, GB/s). Each is the median over batches of the batch mean;
every transfer's data is checked after timing (PE 1 exits with status 1 when wrong).
"""

import importlib
import statistics
import sys
import time

import numpy as np
from peer_common import iterations, parse_args, pattern, received, finish


def main(argv=None):
    a = parse_args(__doc__, argv, lambda ap: ap.add_argument("--module", choices=("pyshmem", "shmem4py"),
                                                             required=True))
    shmem = importlib.import_module("shmem4py.shmem" if a.module == "shmem4py" else "pyshmem")
    me = shmem.my_pe()
    if shmem.n_pes() != 2:
        print(f"shmem_p2p: needs exactly 2 PEs, got {shmem.n_pes()}", file=sys.stderr)
        return 2
    sizes = a.sizes
    biggest = max(sizes)
    src = shmem.zeros(biggest, dtype=np.uint8)
    dst = shmem.zeros(biggest, dtype=np.uint8)
    flag = shmem.zeros(1, dtype=np.int64)
    results, bad = [], []

    def record(figure, nbytes, value, unit):
        results.append({"figure": figure, "bytes": nbytes, "value": value, "unit": unit})

    for salt, n in enumerate(sizes):
        pat = pattern(n, salt)
        for figure in a.figures:
            src[:n] = pat if me == 0 else 0
            dst[:n] = 0
            flag[0] = 0
            shmem.barrier_all()
            k = iterations(a.iters, n)
            samples = []
            if figure == "put_latency" and me == 0:
                put, quiet, d, s = shmem.put, shmem.quiet, dst[:n], src[:n]
                for b in range(a.batches + 1):  # batch 0 warms up
                    t0 = time.perf_counter()
                    for _ in range(k):
                        put(d, s, 1)
                        quiet()
                    if b:
                        samples.append((time.perf_counter() - t0) / k * 1e6)
                record(figure, n, statistics.median(samples), "us")
            elif figure == "put_bw" and me == 0:
                put_nbi, quiet, d, s = shmem.put_nbi, shmem.quiet, dst[:n], src[:n]
                reps = max(1, k // a.window)
                for b in range(a.batches + 1):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        for _ in range(a.window):
                            put_nbi(d, s, 1)
                        quiet()
                    if b:
                        samples.append(n * a.window * reps / (time.perf_counter() - t0) / 1e9)
                record(figure, n, statistics.median(samples), "GB/s")
            elif figure == "ping_pong":
                # Round i: PE 0 puts the payload and then i into PE 1's flag (fence between),
                # PE 1 waits for i and answers the same way.
                put, fence, wait, ge = shmem.put, shmem.fence, shmem.wait_until, shmem.CMP.GE
                d, s, peer = dst[:n], src[:n] if me == 0 else dst[:n], 1 - me
                val = np.zeros(1, np.int64)
                i = 0
                for b in range(a.batches + 1):
                    t0 = time.perf_counter()
                    for _ in range(k):
                        i += 1
                        val[0] = i
                        if me == 1:
                            wait(flag, ge, i)
                        put(d, s, peer)  # PE 1 sends back what it received
                        fence()
                        put(flag, val, peer)
                        if me == 0:
                            wait(flag, ge, i)
                    if b:
                        samples.append((time.perf_counter() - t0) / k / 2 * 1e6)
                if me == 0:
                    record(figure, n, statistics.median(samples), "us")
            shmem.barrier_all()
            if me == 1 and not np.array_equal(received(a, dst[:n]), pat):
                bad.append(f"{figure} {n} B")
    shmem.barrier_all()
    for x in (flag, dst, src):
        shmem.free(x)
    return finish(a, f"shmem_p2p ({a.module})", me, bad, results)


if __name__ == "__main__":
    sys.exit(main())
