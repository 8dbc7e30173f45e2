"""Reductions over the rows and columns of a 2-D grid of PEs (team_split_2d).

A matrix is distributed in blocks over a grid of PEs `--cols` wide: PE i owns block
(i // cols, i % cols). Splitting TEAM_WORLD in two dimensions gives each PE the team
of its grid row and the team of its grid column. Row sums of the matrix are a
sum_reduce over the row team, column maxima a max_reduce over the column team, and an
fcollect over the column team assembles every row sum on every PE. Every PE checks
against NumPy on the whole matrix. Works for any number of PEs: a last, short grid
row has fewer columns.

Shows: pyshmem.team_split_2d, per-team reductions and fcollect, Team.translate_pe,
team-relative PE numbers in a context made from a team.

How to run:
    shmemrun -n 6 python examples/grid_reduce.py --cols 3 --block 8
"""

import argparse
import sys

import numpy as np

import pyshmem as shmem


def block(pe, b):
    """PE pe's block of the matrix (deterministic, so every PE can rebuild the matrix)."""
    rng = np.random.default_rng(pe)
    return rng.integers(-50, 50, (b, b)).astype(np.int64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cols", type=int, default=2, help="grid width (PEs per grid row)")
    ap.add_argument("--block", type=int, default=4, help="rows and columns of each PE's block")
    args = ap.parse_args()
    me, n, b = shmem.my_pe(), shmem.n_pes(), args.block
    cols = min(args.cols, n)
    nrows = (n + cols - 1) // cols

    row_team, col_team = shmem.team_split_2d(shmem.TEAM_WORLD, cols)
    x, y = row_team.my_pe(), col_team.my_pe()
    assert (y, x) == divmod(me, cols), (x, y)

    mine = block(me, b)
    # Symmetric arrays (every PE allocates the same, collectively).
    rsum_in, rsum = shmem.zeros(b, np.int64), shmem.zeros(b, np.int64)
    cmax_in, cmax = shmem.zeros(b, np.int64), shmem.zeros(b, np.int64)
    all_rsums = shmem.zeros(nrows * b, np.int64)

    rsum_in[:] = mine.sum(axis=1)
    shmem.sum_reduce(rsum, rsum_in, team=row_team)   # my grid row's row sums
    cmax_in[:] = mine.max(axis=0)
    shmem.max_reduce(cmax, cmax_in, team=col_team)   # my grid column's column maxima
    # Every row sum of the matrix, in grid-row order: gather over my column (a short
    # last grid row has no PE in some columns; those columns gather fewer rows).
    shmem.fcollect(all_rsums, rsum, team=col_team)

    # The same from the whole matrix.
    grid = [[block(r * cols + c, b) if r * cols + c < n else None for c in range(cols)] for r in range(nrows)]
    want_rsum = np.sum([blk.sum(axis=1) for blk in grid[y] if blk is not None], axis=0)
    want_cmax = np.max([grid[r][x].max(axis=0) for r in range(nrows) if grid[r][x] is not None], axis=0)
    rows_in_col = col_team.n_pes()
    want_all = np.concatenate([np.sum([blk.sum(axis=1) for blk in grid[r] if blk is not None], axis=0)
                               for r in range(rows_in_col)])
    for what, got, want in (("row sums", rsum, want_rsum), ("column maxima", cmax, want_cmax),
                            ("gathered row sums", all_rsums[:rows_in_col * b], want_all)):
        if not np.array_equal(got, want):
            sys.exit(f"PE {me}: {what} differ from NumPy: {got} vs {want}")

    # A context on the row team: PE numbers are the row's. Put my x into slot x of the
    # row's first PE.
    slots = shmem.zeros(cols, np.int64)
    shmem.barrier_all()
    with row_team.create_ctx() as ctx:
        shmem.put(slots[x:x + 1], np.array([me], np.int64), 0, ctx=ctx)
    shmem.barrier_all()
    if x == 0 and list(slots[:row_team.n_pes()]) != [row_team.translate_pe(i) for i in range(row_team.n_pes())]:
        sys.exit(f"PE {me}: team-context puts landed wrong: {slots}")

    for t in (row_team, col_team):
        t.destroy()
    shmem.barrier_all()
    if me == 0:
        print(f"{n} PE(s) as a {nrows}x{cols} grid of {b}x{b} blocks: row sums (row teams), column maxima "
              f"(column teams) and gathered row sums match NumPy")


if __name__ == "__main__":
    main()
