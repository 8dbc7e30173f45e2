"""Signal handling of the shmemrun supervisor (pyshmem/run.py): SIGINT/SIGTERM (end the
job) and SIGUSR1 (dump every PE's Python stack) are queued for forwarding to the PEs,
and SIGCHLD wakes the supervisor's wait."""

from __future__ import annotations

import os
import select
import signal
import threading
import time

_POLL_S = 0.02  # poll interval when SIGCHLD wake-ups are unavailable (as in run.py)


class Signals:
    """Queue SIGINT/SIGTERM/SIGUSR1 and wake the supervisor on SIGCHLD.

    Signal handlers can only be installed from the main thread; elsewhere
    (e.g. ``launch`` called from a worker thread) this degrades to polling.
    """

    def __init__(self) -> None:
        self.active = threading.current_thread() is threading.main_thread()
        self.pending: list[int] = []
        self._saved: dict[int, object] = {}
        self._saved_wakeup = -1
        self._rfd = self._wfd = -1

    def __enter__(self) -> "Signals":
        if self.active:
            self._rfd, self._wfd = os.pipe()
            os.set_blocking(self._rfd, False)
            os.set_blocking(self._wfd, False)
            self._saved_wakeup = signal.set_wakeup_fd(
                self._wfd, warn_on_full_buffer=False)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGCHLD):
                self._saved[sig] = signal.signal(sig, self._handler)
        return self

    def __exit__(self, *exc) -> None:
        if self.active:
            for sig, old in self._saved.items():
                signal.signal(sig, old if old is not None else signal.SIG_DFL)
            signal.set_wakeup_fd(self._saved_wakeup)
            os.close(self._rfd)
            os.close(self._wfd)

    def _handler(self, signum, frame) -> None:
        if signum != signal.SIGCHLD:  # SIGCHLD only needs to wake wait()
            self.pending.append(signum)

    def take(self) -> list[int]:
        """Return and clear the signals received since the last call."""
        # pop, don't clear: a handler may append meanwhile
        return [self.pending.pop(0) for _ in range(len(self.pending))]

    def wait(self, seconds: float) -> None:
        """Sleep up to ``seconds``, returning early on any handled signal."""
        if not self.active:
            time.sleep(max(0.0, min(seconds, _POLL_S)))
            return
        ready, _, _ = select.select([self._rfd], [], [], max(0.0, seconds))
        if ready:
            try:
                while os.read(self._rfd, 512):
                    pass
            except BlockingIOError:
                pass


__all__ = ["Signals"]
