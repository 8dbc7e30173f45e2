"""1-D heat diffusion with halo exchange: the basic pattern of distributed stencil codes.

What it shows
    The rod of ``--cells`` cells is block-distributed: PE k owns a contiguous
    run of cells (sizes differ by at most one when the division is uneven). To
    update its edge cells, a PE needs one cell from each neighbour, kept in
    "ghost" (halo) cells around its own:

        PE k's local array:  [ghost | c0 c1 ... c(n-1) | ghost]
                               ^ from PE k-1           ^ from PE k+1

    Each step, a PE ``put``s its first cell into its left neighbour's halo and
    its last cell into its right neighbour's halo, waits until its own halo has
    arrived, and applies the explicit heat stencil

        u[i] <- u[i] + alpha * (u[i-1] - 2 u[i] + u[i+1])

    The two ends of the rod are held at fixed temperatures (1.0 left, 0.0
    right). Two ways of waiting are shown (``--sync``):

    * ``barrier``: ``put`` + ``barrier_all`` each step. Simple; every PE waits
      for every other one.
    * ``signal`` (default): ``put_signal`` + ``signal_wait_until``. A PE waits
      only for its two neighbours, which is how such codes scale.

    Both need the halo double-buffered by step parity: a fast neighbour may
    send the halo of step s+1 while this PE still reads the one of step s, but
    cannot send step s+2 before it has this PE's halo of step s+1, which is
    only sent after step s is computed. In signal mode each parity also has its
    own signal, set to the step number, so the signal a PE waits for is the one
    that travelled with the data it reads.

    At the end PE 0 gathers the rod with ``get`` and compares it with the same
    stencil run serially in NumPy. The arithmetic is identical element by
    element, so the results must be bit-identical.

How to run
    shmemrun -n 4 python examples/halo_exchange.py [--cells 120] [--steps 500] [--sync signal|barrier]
    PYTHONPATH=. python -m pyshmem.run -n 3 python examples/halo_exchange.py --sync barrier
"""

import argparse
import sys
import time

import numpy as np

import pyshmem as shmem

ALPHA = 0.25                  # diffusion number; explicit scheme is stable for alpha <= 0.5
LEFT_END, RIGHT_END = 1.0, 0.0  # fixed temperatures just outside the rod
LEFT, RIGHT = 0, 1            # halo slots: the ghost cell on my left / on my right


def initial_rod(cells):
    """Initial temperatures: cold rod with a hot spot in the middle third."""
    u = np.zeros(cells)
    u[cells // 3: 2 * cells // 3] = 0.5
    return u


def step(u):
    """One explicit diffusion step on an array that includes its two ghost cells."""
    u[1:-1] = u[1:-1] + ALPHA * (u[:-2] - 2.0 * u[1:-1] + u[2:])


def serial_reference(cells, steps):
    """The same computation on one rod with no PEs at all."""
    u = np.concatenate([[LEFT_END], initial_rod(cells), [RIGHT_END]])
    for _ in range(steps):
        step(u)
    return u[1:-1]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=120, help="cells in the whole rod (default 120)")
    parser.add_argument("--steps", type=int, default=500, help="time steps (default 500)")
    parser.add_argument("--sync", choices=("signal", "barrier"), default="signal",
                        help="how a PE waits for its halo (default: signal)")
    args = parser.parse_args()

    me, npes = shmem.my_pe(), shmem.n_pes()
    if args.cells < npes:
        if me == 0:
            print(f"need at least one cell per PE ({args.cells} cells, {npes} PEs)")
        return 2

    # Block distribution: PE k owns cells starts[k] .. starts[k+1]-1.
    sizes = [len(part) for part in np.array_split(np.arange(args.cells), npes)]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    n = sizes[me]
    left = me - 1 if me > 0 else None          # no neighbour beyond the ends of the rod
    right = me + 1 if me < npes - 1 else None

    # Local working array: my n cells plus a ghost cell at each end. It is ordinary
    # (private) memory; only what other PEs write into must be symmetric.
    u = np.empty(n + 2)
    u[1:-1] = initial_rod(args.cells)[starts[me]:starts[me + 1]]
    u[0], u[-1] = LEFT_END, RIGHT_END          # stay put on the PEs at the ends

    # Symmetric receive buffers, written by the neighbours: halo[parity, LEFT|RIGHT],
    # and (signal mode) one signal per halo slot and parity. Allocations end with a
    # barrier, so they exist everywhere before the first put.
    halo = shmem.zeros((2, 2))
    arrived = [[shmem.new_signal(), shmem.new_signal()] for _parity in range(2)]

    start = time.perf_counter()
    for s in range(1, args.steps + 1):
        p = s % 2
        # My first cell is my left neighbour's RIGHT ghost; my last cell is my right
        # neighbour's LEFT ghost. Sources are 1-element views of my local array.
        if args.sync == "barrier":
            if left is not None:
                shmem.put(halo[p, RIGHT:RIGHT + 1], u[1:2], left)
            if right is not None:
                shmem.put(halo[p, LEFT:LEFT + 1], u[n:n + 1], right)
            shmem.barrier_all()                # all halos of step s are delivered
        else:
            if left is not None:
                shmem.put_signal(halo[p, RIGHT:RIGHT + 1], u[1:2], left, arrived[p][RIGHT], s, shmem.SIGNAL_SET)
            if right is not None:
                shmem.put_signal(halo[p, LEFT:LEFT + 1], u[n:n + 1], right, arrived[p][LEFT], s, shmem.SIGNAL_SET)
            # Wait for the halos of step s; the data is visible once its signal is.
            if left is not None:
                shmem.signal_wait_until(arrived[p][LEFT], shmem.CMP.EQ, s)
            if right is not None:
                shmem.signal_wait_until(arrived[p][RIGHT], shmem.CMP.EQ, s)
        if left is not None:
            u[0] = halo[p, LEFT]
        if right is not None:
            u[-1] = halo[p, RIGHT]
        step(u)
    elapsed = time.perf_counter() - start

    # Gather: publish my cells in a symmetric array, then PE 0 gets every block.
    # Symmetric allocations have the same size everywhere, so size it for the largest block.
    final = shmem.zeros(max(sizes))
    final[:n] = u[1:-1]
    shmem.barrier_all()                        # every PE's `final` is filled in
    ok = True
    if me == 0:
        rod = np.empty(args.cells)
        for pe in range(npes):
            shmem.get(rod[starts[pe]:starts[pe + 1]], final, pe)   # size = that PE's block
        expected = serial_reference(args.cells, args.steps)
        ok = np.array_equal(rod, expected)
        if ok:
            print(f"heat equation: {args.cells} cells on {npes} PE(s) (blocks of {min(sizes)}..{max(sizes)}), "
                  f"{args.steps} steps, {args.sync} sync: {elapsed * 1e6 / args.steps:.1f} us/step")
            print(f"result is bit-identical to the serial NumPy run; "
                  f"temperatures at 1/4, 1/2, 3/4 of the rod: "
                  f"{rod[args.cells // 4]:.4f} {rod[args.cells // 2]:.4f} {rod[3 * args.cells // 4]:.4f}")
        else:
            worst = int(np.argmax(np.abs(rod - expected)))
            print(f"FAILED: distributed result differs from the serial one, "
                  f"worst at cell {worst}: {float(rod[worst])!r} vs {float(expected[worst])!r}")
    shmem.barrier_all()                        # keep `final` until PE 0 has read it
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
