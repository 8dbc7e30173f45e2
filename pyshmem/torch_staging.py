"""The symmetric buffers of the torch.distributed backend (pyshmem/torch_backend.py)
and the member-only operations built on them: a group barrier, a pull exchange, and
point-to-point messages.

torch creates a subgroup's backend only on the subgroup's members, while a pyshmem team
split is collective over its parent; so subgroups (and uneven all-to-alls) run on
one-sided operations among their members, over buffers every PE allocated once, when
the default group was created:

- ``inbuf``/``outbuf``: PYSHMEM_TORCH_STAGING_SIZE bytes, halved. A member copies its
  input into its own ``inbuf`` only; the others read it with ``get`` between two group
  barriers, so a PE's ``inbuf`` is never written while someone still reads it, whatever
  mix of groups the PEs run (each runs its operations in program order).
- ``meta``: one int64 per PE that a member publishes for the others (its offsets in an
  uneven all-to-all).
- ``counters``: one barrier counter per group slot. A member adds 1 to every member's
  counter of the group's slot, then waits for its own to reach the total its groups
  on that slot have added so far (a slot is used by one live group at a time on each
  member, and is handed to a later group once that one is gone: see
  :func:`agree_slot`).
- point-to-point: per-pair mailboxes, pyshmem/torch_p2p.py.
"""

import numpy as np

import pyshmem as shmem
from pyshmem._lib import lib as _lib
from pyshmem.errors import HeapExhaustedError
from pyshmem.perftest.sizes import parse_size
from pyshmem.runtime import env_setting
from pyshmem.torch_p2p import Mailboxes

MAX_GROUP_SLOTS = 256


class Staging:
    """The backend's symmetric buffers (collective to create: every PE, once)."""

    def __init__(self, timeout_s=0):
        self.timeout = timeout_s  # the default group's timeout= (a send's wait bound; 0: none)
        n = shmem.n_pes()
        total = parse_size(env_setting("PYSHMEM_TORCH_STAGING_SIZE") or "8M")
        self.half = max(64, total // 2 // 64 * 64)
        try:
            self.buf = shmem.zeros(2 * self.half, np.uint8)
            self._allocate_rest(n, total)
        except HeapExhaustedError as exc:
            raise HeapExhaustedError(f"pyshmem backend: its staging buffers (twice PYSHMEM_TORCH_STAGING_SIZE, "
                                     f"{2 * total} bytes) do not fit in the symmetric heap: {exc}; or lower "
                                     "PYSHMEM_TORCH_STAGING_SIZE") from None

    def _allocate_rest(self, n, total):
        self.inbuf, self.outbuf = self.buf[:self.half], self.buf[self.half:]
        self._typed = {}
        self.meta = shmem.zeros(max(1, n), np.int64)
        self.counters = shmem.zeros(MAX_GROUP_SLOTS, np.int64)
        # (v, -v) of each of up to four values the ranks must agree on (agree)
        self.agree_in = shmem.zeros(8, np.int64)
        self.agree_out = shmem.zeros(8, np.int64)
        self.expected = [0] * MAX_GROUP_SLOTS  # increments my counter of each slot has had due
        self.mail = Mailboxes(n, total)  # send/recv (pyshmem/torch_p2p.py)

    def typed(self, dtype):
        """(inbuf, outbuf) as whole arrays of NumPy `dtype` (cached)."""
        views = self._typed.get(dtype)
        if views is None:
            count = self.half // dtype.itemsize
            views = self._typed[dtype] = (self.inbuf[:count * dtype.itemsize].view(dtype),
                                          self.outbuf[:count * dtype.itemsize].view(dtype))
        return views

    # ---- member-only barrier and pull exchange ------------------------------------

    def agree(self, values):
        """For each of `values` (at most four ints, -1 for "none"; the same count on
        every rank), whether every PE passed the same value >= 0: one max-reduction of
        (v, -v) pairs over TEAM_WORLD (collective), so every PE gets the same answers."""
        k = 2 * len(values)
        self.agree_in[:k] = [x for v in values for x in (v, -v)]
        shmem.max_reduce(self.agree_out[:k], self.agree_in[:k])
        top = self.agree_out
        return [v >= 0 and int(top[2 * i]) == -int(top[2 * i + 1]) == v for i, v in enumerate(values)]

    def barrier(self, pes, slot):
        """Every PE of `pes` (world PEs, this one among them) reaches this point of
        group slot `slot` before any leaves it; their earlier writes to their own
        buffers are visible to the others' gets after it."""
        if len(pes) == 1:
            return
        self.expected[slot] += len(pes)
        cell = self.counters[slot:slot + 1]
        shmem.quiet()
        for pe in pes:
            shmem.atomic_add(cell, 1, pe)
        shmem.wait_until(cell, shmem.CMP_GE, self.expected[slot])

    def stage(self, data):
        """Copies `data` (a contiguous uint8 NumPy view) into this PE's inbuf."""
        if data.nbytes > self.half:
            raise OverflowError(data.nbytes)
        self.inbuf[:data.nbytes] = data

    def pull(self, out, pe, offset):
        """out (contiguous uint8 view) <- PE `pe`'s inbuf[offset:offset + out.nbytes]."""
        if out.nbytes:
            if pe == shmem.my_pe():
                out[:] = self.inbuf[offset:offset + out.nbytes]
            else:
                shmem.get(out, self.inbuf[offset:offset + out.nbytes], pe)

    def publish(self, values):
        """Puts `values` (ints, one per PE index) into this PE's meta for peers to read."""
        self.meta[:len(values)] = values

    def peer_meta(self, pe, index):
        """PE `pe`'s published value `index`."""
        if pe == shmem.my_pe():
            return int(self.meta[index])
        cell = np.zeros(1, np.int64)
        shmem.get(cell, self.meta[index:index + 1], pe)
        return int(cell[0])

    # ---- point to point ----------------------------------------------------------


_live_slots = {}  # slot -> weakref of the live group using it on this PE


def heap_offsets(views):
    """The symmetric-heap offset of each of `views` (NumPy views of this PE's tensors),
    -1 for one outside the heap; all -1 when two of them overlap (pyshmem's collectives
    take distinct source and target)."""
    spans = [(v.__array_interface__["data"][0], v.nbytes) for v in views]
    apart = all(a + n <= b or b + m <= a for i, (a, n) in enumerate(spans) for b, m in spans[i + 1:])
    base = _lib.heap_range()[0]
    return [a - base if apart and _lib.is_symmetric(a, n) else -1 for a, n in spans]


def agree_slot(store, rank, size, group, what):
    """The lowest counter slot free on every member of a new group, agreed through the
    group's store (torch gives each group its own key prefix): each member publishes
    which slots its live groups hold and takes the first one free everywhere, so every
    member gets the same answer. `group` is registered for it until it is collected.

    Raises:
        RuntimeError: no slot is free on every member (the same on every member).
    """
    import weakref

    mine = "".join("1" if (ref := _live_slots.get(s)) is not None and ref() is not None else "0"
                   for s in range(MAX_GROUP_SLOTS))
    store.set(f"pyshmem/slots/{rank}", mine)
    used = [mine if r == rank else store.get(f"pyshmem/slots/{r}").decode() for r in range(size)]
    free = [s for s in range(MAX_GROUP_SLOTS) if all(u[s] == "0" for u in used)]
    if not free:
        raise RuntimeError(f"{what}: every one of the {MAX_GROUP_SLOTS} barrier slots is held by a live group on "
                           "some member; destroy groups you no longer use (dist.destroy_process_group(group))")
    slot = free[0]
    _live_slots[slot] = weakref.ref(group)
    weakref.finalize(group, _live_slots.pop, slot, None)
    return slot


__all__ = ["Staging", "agree_slot", "heap_offsets", "MAX_GROUP_SLOTS"]
