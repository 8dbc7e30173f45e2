"""Point-to-point figures of MPI one-sided communication (mpi4py), for ``perftest compare``.

    mpiexec -n 2 python mpi_rma.py --sizes 8,64,4096 --out r.jsonl

The figures of shmem_p2p.py in MPI's passive-target RMA (``Win.Lock_all`` once):
put_latency = ``Put`` + ``Flush`` (MPI's put + quiet), ping_pong = ``Put`` of the
payload, ``Flush``, ``Put`` of the round number, ``Flush``, answered the same way
(the waiting rank polls its own window with ``Win.Sync``), half a round trip;
put_bw = a window of ``Put`` + one ``Flush``. Medians over batches of the batch mean;
rank 1 checks the data. Rank 0 writes one JSON object per figure.
"""

import statistics
import sys
import time

import numpy as np
from mpi4py import MPI
from peer_common import iterations, parse_args, pattern, received, finish


def main(argv=None):
    a = parse_args(__doc__, argv)
    comm = MPI.COMM_WORLD
    me = comm.Get_rank()
    if comm.Get_size() != 2:
        print(f"mpi_rma: needs exactly 2 ranks, got {comm.Get_size()}", file=sys.stderr)
        return 2
    sizes = a.sizes
    biggest = max(sizes)
    # One window: [flag (8 bytes) | destination bytes]; the source is private memory.
    win = MPI.Win.Allocate(8 + biggest, 1, comm=comm)
    mem = np.frombuffer(win.tomemory(), dtype=np.uint8)
    flag = mem[:8].view(np.int64)
    dst = mem[8:]
    src = np.zeros(biggest, np.uint8)
    peer = 1 - me
    win.Lock_all()
    results, bad = [], []
    for salt, n in enumerate(sizes):
        pat = pattern(n, salt)
        for figure in a.figures:
            src[:n] = pat if me == 0 else 0
            dst[:n] = 0
            flag[0] = 0
            win.Sync()
            comm.Barrier()
            k = iterations(a.iters, n)
            samples = []
            s = src[:n]
            if figure == "put_latency" and me == 0:
                for b in range(a.batches + 1):
                    t0 = time.perf_counter()
                    for _ in range(k):
                        win.Put(s, peer, 8)
                        win.Flush(peer)
                    if b:
                        samples.append((time.perf_counter() - t0) / k * 1e6)
            elif figure == "put_bw" and me == 0:
                reps = max(1, k // a.window)
                for b in range(a.batches + 1):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        for _ in range(a.window):
                            win.Put(s, peer, 8)
                        win.Flush(peer)
                    if b:
                        samples.append(n * a.window * reps / (time.perf_counter() - t0) / 1e9)
            elif figure == "ping_pong":
                val = np.zeros(1, np.int64)
                payload = s if me == 0 else dst[:n]
                i = 0
                for b in range(a.batches + 1):
                    t0 = time.perf_counter()
                    for _ in range(k):
                        i += 1
                        val[0] = i
                        if me == 1:
                            while flag[0] < i:
                                win.Sync()
                        win.Put(payload, peer, 8)
                        win.Flush(peer)
                        win.Put(val, peer, 0)
                        win.Flush(peer)
                        if me == 0:
                            while flag[0] < i:
                                win.Sync()
                    if b:
                        samples.append((time.perf_counter() - t0) / k / 2 * 1e6)
            if me == 0:
                results.append({"figure": figure, "bytes": n, "value": statistics.median(samples),
                                "unit": "GB/s" if figure == "put_bw" else "us"})
            win.Sync()
            comm.Barrier()
            win.Sync()
            if me == 1 and not np.array_equal(received(a, dst[:n]), pat):
                bad.append(f"{figure} {n} B")
    win.Unlock_all()
    win.Free()
    return finish(a, "mpi_rma", me, bad, results)


if __name__ == "__main__":
    sys.exit(main())
