"""Point-to-point messages of the torch.distributed backend (send/recv, isend/irecv,
batch_isend_irecv): per-pair mailboxes in the symmetric heap (pyshmem/torch_staging.py
allocates them with the other staging buffers).

A sender has a slot of ``slot_bytes`` per peer, a header (bytes, tag) per peer, and a
``done`` word per peer that the receiver advances when it has taken a piece; the
receiver has a ``ready`` word per sender that the sender advances when a piece is in
its slot. The receiver pulls each piece from the sender's slot with ``get``. Messages
larger than a slot go in slot-sized pieces, each after the receiver took the previous.

A send never waits for its receiver: when the slot is free and the message fits, it is
copied there and signalled at once (the buffer is free when ``send`` returns);
otherwise it joins this PE's outbox, which a background thread drains in order per
peer, posting each piece as the receiver frees the slot. So exchanges in which both
sides send first (a ring of isends, two isends to one peer, a pipeline stage's
batch_isend_irecv) complete whatever the message sizes, and an isend progresses while
its sender computes or sits in a collective, as with torch's own backends. The work
handle of a queued send completes when its last piece is in the slot.
"""

import collections
import threading
import time

import numpy as np

import pyshmem as shmem


class Mailboxes:
    """This PE's point-to-point slots and sequence numbers (collective to create)."""

    def __init__(self, n, total):
        self.slot_bytes = max(64, total // max(1, n) // 64 * 64)
        self.slots = shmem.zeros(max(1, n) * self.slot_bytes, np.uint8)
        self.header = shmem.zeros((max(1, n), 2), np.int64)  # [receiver] -> (bytes, tag) of my slot for it
        self.ready = shmem.zeros(max(1, n), np.int64)  # [sender] -> pieces it has put in its slot for me
        self.done = shmem.zeros(max(1, n), np.int64)  # [receiver] -> pieces of mine it has taken
        self.sent = [0] * n
        self.received = [0] * n
        self._lock = threading.Lock()  # sent/slots/header of a peer: the caller's thread or the outbox's
        self._outbox = collections.defaultdict(collections.deque)  # dst -> [_Queued], in send order
        self._wake = threading.Condition(self._lock)
        self._thread = None

    # ---- sending ----------------------------------------------------------------------

    def send(self, data, dst, tag):
        """Sends `data` (a contiguous uint8 view) to world PE `dst`.

        Returns:
            None when the message is in the peer's slot already; else a threading.Event
            set when the outbox has posted its last piece (`data` must stay unchanged
            until then, as for any isend).
        """
        with self._lock:
            if not self._outbox[dst] and data.nbytes <= self.slot_bytes and self._slot_free(dst):
                self._post(data, dst, data.nbytes, tag)
                return None
            job = _Queued(data, dst, tag, self.slot_bytes)
            self._outbox[dst].append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, name="pyshmem-torch-outbox", daemon=True)
                self._thread.start()
            self._wake.notify()
        return job.posted

    def _slot_free(self, dst):
        # The receiver has taken every piece this PE put in its slot for dst.
        return shmem.test(self.done[dst:dst + 1], shmem.CMP_GE, self.sent[dst])

    def _post(self, piece, dst, first_bytes, tag):
        """Copies one piece into dst's slot and signals it (the lock held). `first_bytes`:
        the message's size for its first piece, -1 for the later ones."""
        self.slots[dst * self.slot_bytes:dst * self.slot_bytes + piece.nbytes] = piece
        self.header[dst] = (first_bytes, tag)
        self.sent[dst] += 1
        shmem.quiet()
        shmem.atomic_set(self.ready[shmem.my_pe():shmem.my_pe() + 1], self.sent[dst], dst)

    def _drain(self):
        """The outbox thread: posts queued pieces as receivers free their slots, the
        oldest message per peer first; sleeps (growing to 200 us) while none can move,
        and on the condition while the outbox is empty. A pyshmem error (the runtime
        finalized under a send nobody received) fails every queued send with it."""
        try:
            self._drain_forever()
        except shmem.ShmemError as exc:
            with self._lock:
                for jobs in self._outbox.values():
                    for job in jobs:
                        job.posted.error = exc
                        job.posted.set()
                    jobs.clear()
                self._thread = None

    def _drain_forever(self):
        idle = 0
        while True:
            with self._lock:
                while not any(self._outbox.values()):
                    idle = 0
                    self._wake.wait()
                moved = False
                for dst, jobs in self._outbox.items():
                    if jobs and self._slot_free(dst):
                        job = jobs[0]
                        piece = job.next_piece()
                        self._post(piece, dst, job.data.nbytes if job.first else -1, job.tag)
                        job.first = False
                        moved = True
                        if job.finished():
                            jobs.popleft()
                            job.posted.set()
            if moved:
                idle = 0
            else:
                idle += 1
                time.sleep(0 if idle < 50 else min(200e-6, 1e-6 * idle))

    # ---- receiving --------------------------------------------------------------------

    def recv(self, out, src, tag, what):
        """Receives into `out` (a contiguous uint8 view) from world PE `src`; the message
        must have `tag` and out's size.

        Raises:
            RuntimeError: naming `what`, when the message's size or tag differ.
        """
        me = shmem.my_pe()
        head = np.zeros(2, np.int64)
        for k, start in enumerate(range(0, max(1, out.nbytes), self.slot_bytes)):
            self.received[src] += 1
            shmem.wait_until(self.ready[src:src + 1], shmem.CMP_GE, self.received[src])
            shmem.get(head, self.header[me], src)
            if k == 0 and (head[0] != out.nbytes or head[1] != tag):
                raise RuntimeError(f"{what}: the message from rank {src} has {head[0]} bytes and tag {head[1]}, "
                                   f"but this recv expects {out.nbytes} bytes and tag {tag}; sends and recvs between "
                                   "two ranks must match in order, size and tag")
            piece = out[start:start + self.slot_bytes]
            if piece.nbytes:
                shmem.get(piece, self.slots[me * self.slot_bytes:me * self.slot_bytes + piece.nbytes], src)
            shmem.atomic_set(self.done[me:me + 1], self.received[src], src)


class _Queued:
    """A message waiting in the outbox: its data, the pieces posted so far, and the
    event its work handle waits on."""

    def __init__(self, data, dst, tag, slot_bytes):
        self.data, self.dst, self.tag = data, dst, tag
        self.step = slot_bytes
        self.offset = 0
        self.first = True
        self.posted = threading.Event()
        self.posted.error = None  # the outbox's pyshmem error, if it failed

    def next_piece(self):
        piece = self.data[self.offset:self.offset + self.step]
        self.offset += self.step
        return piece

    def finished(self):
        return self.offset >= max(1, self.data.nbytes)


__all__ = ["Mailboxes"]
