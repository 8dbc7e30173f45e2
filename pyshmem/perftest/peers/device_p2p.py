"""Point-to-point figures of pyshmem's compiled device API, for ``perftest compare``.

    shmemrun -n 2 python device_p2p.py --sizes 8,64,4096 --out r.jsonl

The figures of shmem_p2p.py, timed inside one kernel per figure and size
(``pt_compare`` in pyshmem/perftest/kernels.cu) with the loops of the OpenSHMEM C
peer: on the CPU build (no GPU) the kernel is a host thread, the compiled path of the
CPU backend with no Python in the loop; on a GPU it is a one-thread GPU kernel on
symmetric GPU arrays. ``memcpy_bw`` (CPU build only) is put_bw's loop with a local
memcpy in place of each put: the ceiling a put can reach, measured in the same run.
PE 1 checks the data; PE 0 writes one JSON object per figure.
"""

import statistics
import sys
from pathlib import Path

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pcuda
from peer_common import iterations, parse_args, pattern, received, finish

# figure -> (pt_compare's fig, unit); memcpy_bw is the CPU build's ceiling for put_bw.
_FIGURES = {"put_latency": (0, "us"), "ping_pong": (1, "us"), "put_bw": (2, "GB/s"), "memcpy_bw": (3, "GB/s")}


def main(argv=None):
    a = parse_args(__doc__, argv)
    me = shmem.my_pe()
    if shmem.n_pes() != 2:
        print(f"device_p2p: needs exactly 2 PEs, got {shmem.n_pes()}", file=sys.stderr)
        return 2
    module = pcuda.Module((Path(__file__).resolve().parent.parent / "kernels.cu").read_text(), name="pyshmem_perftest")
    gpu = module.target == "gpu"
    kernel = module.get_kernel("pt_compare")
    sizes = a.sizes
    zeros = pcuda.zeros if gpu else shmem.zeros
    src, dst, flag = zeros(max(sizes), np.uint8), zeros(max(sizes), np.uint8), zeros(1, np.int64)

    def fill(x, values):
        x.copy_from_host(np.ascontiguousarray(values)) if gpu else x.__setitem__(Ellipsis, values)

    results, bad = [], []
    for salt, n in enumerate(sizes):
        pat = pattern(n, salt)
        for figure in a.figures:
            fig, unit = _FIGURES[figure]
            if fig == 3 and gpu:
                continue
            fill(src[:n], pat if me == 0 else np.zeros(n, np.uint8))
            fill(dst[:n], np.zeros(n, np.uint8))
            fill(flag, np.zeros(1, np.int64))
            out = pcuda.zeros(a.batches, np.float64) if gpu else np.zeros(a.batches, np.float64)
            shmem.barrier_all()
            if me == 0 or fig == 1:
                pcuda.launch(kernel, 1, 1, np.int32(fig), dst, src, np.uint64(n), flag, np.int32(1 - me),
                             np.int32(me == 0), np.int32(a.batches), np.int64(iterations(a.iters, n)),
                             np.int32(a.window), out)
            shmem.barrier_all()
            if me == 0:
                values = out.copy_to_host() if gpu else out
                results.append({"figure": figure, "bytes": n, "value": float(statistics.median(values)), "unit": unit})
            got = dst[:n].copy_to_host() if gpu else np.array(dst[:n])
            if me == 1 and fig != 3 and not np.array_equal(received(a, got), pat):
                bad.append(f"{figure} {n} B")
    shmem.barrier_all()
    return finish(a, "device_p2p", me, bad, results)


if __name__ == "__main__":
    sys.exit(main())
