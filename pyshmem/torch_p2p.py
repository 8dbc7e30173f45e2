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
sides send first (a ring of isends, two isends to one peer, batch_isend_irecv with the
sends listed before the receives) complete whatever the message sizes, and an isend
progresses while its sender computes or sits in a collective, as with torch's own
backends. The work handle of a queued send completes when its last piece is in the
slot. Receives are eager: an irecv receives before it returns, so a rank whose irecv
comes before its own sends waits there for its peer (list sends first).
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
        self.header = shmem.zeros((max(1, n), 3), np.int64)  # [receiver] -> (bytes, tag, group) of my slot for it
        self.ready = shmem.zeros(max(1, n), np.int64)  # [sender] -> pieces it has put in its slot for me
        self.done = shmem.zeros(max(1, n), np.int64)  # [receiver] -> pieces of mine it has taken
        self.sent = [0] * n
        self.received = [0] * n
        self._lock = threading.Lock()  # sent/slots/header of a peer: the caller's thread or the outbox's
        self._outbox = collections.defaultdict(collections.deque)  # dst -> [_Queued], in send order
        self._wake = threading.Condition(self._lock)
        self._thread = None
        self._inbox = collections.defaultdict(collections.deque)  # src -> posted Receive, in post order
        self._rlock = threading.Lock()  # received[] and the inboxes

    # ---- sending ----------------------------------------------------------------------

    def send(self, data, dst, tag, group):
        """Sends `data` (a contiguous uint8 view) to world PE `dst` on `group` (an id
        every member gives the same group: -1 for the default one, see
        torch_backend).

        Returns:
            None when the message is in the peer's slot already; else a threading.Event
            set when the outbox has posted its last piece (`data` must stay unchanged
            until then, as for any isend).
        """
        with self._lock:
            if not self._outbox[dst] and data.nbytes <= self.slot_bytes and self._slot_free(dst):
                self._post(data, dst, data.nbytes, tag, group)
                return None
            job = _Queued(data, dst, tag, group, self.slot_bytes)
            self._outbox[dst].append(job)
            if self._thread is None:
                self._thread = threading.Thread(target=self._drain, name="pyshmem-torch-outbox", daemon=True)
                self._thread.start()
            self._wake.notify()
        return job.posted

    def _slot_free(self, dst):
        # The receiver has taken every piece this PE put in its slot for dst.
        return shmem.test(self.done[dst:dst + 1], shmem.CMP_GE, self.sent[dst])

    def _post(self, piece, dst, first_bytes, tag, group):
        """Copies one piece into dst's slot and signals it (the lock held). `first_bytes`:
        the message's size for its first piece, -1 for the later ones."""
        self.slots[dst * self.slot_bytes:dst * self.slot_bytes + piece.nbytes] = piece
        self.header[dst] = (first_bytes, tag, group)
        self.sent[dst] += 1
        shmem.quiet()
        shmem.atomic_set(self.ready[shmem.my_pe():shmem.my_pe() + 1], self.sent[dst], dst)

    def _drain(self):
        """The outbox thread: posts queued pieces as receivers free their slots, the
        oldest message per peer first; sleeps (growing to 200 us) while none can move,
        and on the condition while the outbox is empty. An error (the runtime finalized
        under a send nobody received) fails every queued send with it."""
        try:
            self._drain_forever()
        except Exception as exc:  # noqa: BLE001 - handed to every queued send's wait()
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
                        self._post(piece, dst, job.data.nbytes if job.first else -1, job.tag, job.group)
                        job.first = False
                        moved = True
                        if job.finished():
                            jobs.popleft()
                            job.posted.set()
            if moved:
                idle = 0
            else:
                idle += 1
                time.sleep(0 if idle < 50 else min(1e-3, 1e-6 * idle))

    # ---- receiving --------------------------------------------------------------------

    def recv(self, out, src, tag, group, what):
        """Posts a receive into `out` (a contiguous uint8 view) from world PE `src` on
        `group`; nothing moves until :meth:`complete` (the backend completes each at
        once: receives are eager).

        Returns:
            Receive: the posted receive (its `done`, and `error` once completed).
        """
        r = Receive(out, src, tag, group, what)
        with self._rlock:
            self._inbox[src].append(r)
        return r

    def complete(self, r):
        """Receives every message from r.src posted up to `r`, in order (messages between
        two ranks are matched in order, on every group they share).

        Raises:
            RuntimeError: the message for `r` (or an earlier receive from that rank)
                differs in size, tag or group.
        """
        with self._rlock:
            while not r.done:
                head = self._inbox[r.src].popleft()
                try:
                    self._take(head)
                except RuntimeError as exc:
                    head.error = exc
                    raise
                finally:
                    head.done = True
        if r.error is not None:
            raise r.error

    def _take(self, r):
        me, src, out = shmem.my_pe(), r.src, r.out
        head = np.zeros(3, np.int64)
        for k, start in enumerate(range(0, max(1, out.nbytes), self.slot_bytes)):
            self.received[src] += 1
            shmem.wait_until(self.ready[src:src + 1], shmem.CMP_GE, self.received[src])
            shmem.get(head, self.header[me], src)
            if k == 0 and (head[0] != out.nbytes or head[1] != r.tag or head[2] != r.group):
                shmem.atomic_set(self.done[me:me + 1], self.received[src], src)  # the pair goes on
                raise RuntimeError(f"{r.what}: the next message from rank {src} has {head[0]} bytes, tag {head[1]}"
                                   f"{_on(head[2])}, but this recv expects {out.nbytes} bytes, tag {r.tag}"
                                   f"{_on(r.group)}; sends and recvs between two ranks must match in order (on "
                                   "every group they share), size and tag")
            piece = out[start:start + self.slot_bytes]
            if piece.nbytes:
                shmem.get(piece, self.slots[me * self.slot_bytes:me * self.slot_bytes + piece.nbytes], src)
            shmem.atomic_set(self.done[me:me + 1], self.received[src], src)


def _on(group):
    if group == -1:
        return " on the default group"
    return f" on subgroup slot {group}" if group >= 0 else f" on group of every rank #{-group}"


class Receive:
    """A posted receive: where its message goes and, once completed, any error."""

    def __init__(self, out, src, tag, group, what):
        self.out, self.src, self.tag, self.group, self.what = out, src, tag, group, what
        self.done = False
        self.error = None


class _Queued:
    """A message waiting in the outbox: its data, the pieces posted so far, and the
    event its work handle waits on."""

    def __init__(self, data, dst, tag, group, slot_bytes):
        self.data, self.dst, self.tag, self.group = data, dst, tag, group
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


__all__ = ["Mailboxes", "Receive"]
