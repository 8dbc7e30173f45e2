"""pyshmem's own host collectives in the algorithm table, so that `validate` can set the
model's prediction beside a measurement of the same algorithm.

The host collectives pull (csrc/coll/, docs/design.md "Teams and collectives"): a team
barrier, every member copies what it needs out of the others' symmetric buffers (a
memcpy from the mapped segment on one node, a transport get across nodes), a second
barrier; reductions combine every source directly below PYSHMEM_REDUCE_RSAG_MIN
(64 KiB) and reduce-scatter + all-gather (three barriers) from there. Every member
copies at once, so a copy's β is the topology's ``bandwidth_curve`` at that copy's size
when calibration measured one (per-device bandwidth with every device copying at once),
else the link's β (:func:`link_at`). B is a barrier: ⌈log2 P⌉ rounds (:func:`sync_round`)
with no host call between them; o (``overhead_us``) is the one host call.
"""

from pyshmem.model.algorithms import algorithm, gamma, link_at, log2ceil, sync_round

RSAG_MIN = 64 << 10  # PYSHMEM_REDUCE_RSAG_MIN's default (csrc/core/env_vars.def)


def _copies(t, p, block, count, local=0):
    """Seconds for `count` copies of `block` bytes by one member, all members at once,
    `local` of them out of its own memory: α only for a copy that crosses the network
    (a transport get), none in a node (a memcpy out of the mapped segment)."""
    a, b = link_at(t, p, block)
    remote = p > t.devices_per_node
    return count * block * b + (count - local) * (a if remote else 0.0)


def _reads(t, p, block, count):
    """Seconds to fetch `count` remote sources of `block` bytes for combining: across
    nodes a transport get each; in a node nothing beyond γ (the combine loads them)."""
    return _copies(t, p, block, count) if p > t.devices_per_node else 0.0


def barrier_time(t, p):
    """Seconds of one team barrier of `p` members inside a call (dissemination rounds)."""
    return log2ceil(p) * sync_round(t, p)


def _call(t):
    return t.overhead_us * 1e-6  # LogGP's o: the host call itself


@algorithm("broadcast", "pull", "o + 2B + n·β(n): every member copies the root's n bytes at once")
def _broadcast_pull(t, p, n, dtype="float32"):
    return _call(t) + 2 * barrier_time(t, p) + _copies(t, p, n, 1) if p > 1 else 0.0


@algorithm("allgather", "pull", "o + 2B + P·(n/P)·β(n/P): each member copies every block, its own too "
           "(+ (P-1)α across nodes)")
def _allgather_pull(t, p, n, dtype="float32"):
    return _call(t) + 2 * barrier_time(t, p) + _copies(t, p, n / p, p, local=1) if p > 1 else 0.0


@algorithm("alltoall", "pull", "o + 2B + P·(n/P)·β(n/P): each member copies its block out of every source "
           "(+ (P-1)α across nodes)")
def _alltoall_pull(t, p, n, dtype="float32"):
    return _call(t) + 2 * barrier_time(t, p) + _copies(t, p, n / p, p, local=1) if p > 1 else 0.0


@algorithm("allreduce", "pull_direct", "o + 2B + n·β(n) + (P-1)·nγ: each member copies one source and combines "
           "the other P-1 into it (across nodes fetching each: + (P-1)(α + nβ)); pyshmem below 64 KiB")
def _allreduce_pull_direct(t, p, n, dtype="float32"):
    if p <= 1:
        return 0.0
    return (_call(t) + 2 * barrier_time(t, p) + _copies(t, p, n, 1) + _reads(t, p, n, p - 1)
            + (p - 1) * n * gamma(t, dtype))


@algorithm("allreduce", "pull_rsag", "o + 3B + (P+1)·(n/P)·β(n/P) + (P-1)·(n/P)·γ: member i reduces range i "
           "into scratch, copies it to its dest, then copies the other P-1 ranges (across nodes fetching the "
           "ranges it combines: + (P-1)(α + (n/P)β)); pyshmem from 64 KiB")
def _allreduce_pull_rsag(t, p, n, dtype="float32"):
    if p <= 1:
        return 0.0
    block = n / p
    return (_call(t) + 3 * barrier_time(t, p) + _copies(t, p, block, p + 1, local=2) + _reads(t, p, block, p - 1)
            + (p - 1) * block * gamma(t, dtype))


def pyshmem_allreduce(n):
    """The algorithm name pyshmem's ``sum_reduce`` uses for `n` bytes (default settings)."""
    return "pull_rsag" if n >= RSAG_MIN else "pull_direct"
