"""Output forwarding of the shmemrun launcher (pyshmem/run.py): whole lines only.

Every PE's stdout and stderr is a pipe; one thread reads them all and writes what each
PE printed onto the launcher's stdout and stderr a whole line at a time (with
``--tag-output`` each line prefixed ``[pe K] ``), as mpirun and srun do, so lines that
several PEs print at the same moment never mix, with or without tags, for PEs on this
host and on others (a remote PE's output comes through its remote-start command). Bytes
pass through unchanged (binary, invalid UTF-8); a last line without newline gets one
when the PE closes the pipe; a line longer than ``MAX_LINE`` is forwarded in pieces of
that size, each ended by a newline (so memory stays bounded).

A Python stack dump (faulthandler, which pyshmem registers on SIGUSR1: shmemrun's
``--timeout``, a SIGUSR1 to shmemrun, PYSHMEM_TIMEOUT) is forwarded as one block after a
line ``shmemrun: PE K's Python stack:``, so the stacks of several PEs stay apart and
name their PE also without tags.
"""

from __future__ import annotations

import os
import re
import selectors
import sys
import threading
import time

OUTPUT_LOCK = threading.Lock()  # one writer at a time on the launcher's streams
MAX_LINE = 1 << 20
_READ = 1 << 16
_STACK_GAP_S = 0.2  # a stack block ends when its PE prints nothing else for this long
# faulthandler's lines: a thread's header, then its frames (a blank line between threads)
_STACK_START = re.compile(rb"(?:(?:Current thread|Thread) 0x[0-9a-f]+|Stack) .*\(most recent call first\):")
_STACK_LINE = re.compile(rb"  File .*|  <no Python frame>|  \.\.\.|  Garbage-collecting|")


def say(msg: str) -> None:
    """Print one launcher message line on stderr (never inside a PE's line)."""
    with OUTPUT_LOCK:
        try:
            print(f"shmemrun: {msg}", file=sys.stderr, flush=True)
        except (OSError, ValueError):
            pass


def write(stream, data: bytes) -> None:
    """Write whole lines onto a launcher stream, binary-safe and locked."""
    with OUTPUT_LOCK:
        try:
            stream.flush()  # keep order with text already written to it
            binary = getattr(stream, "buffer", None)
            if binary is not None:
                binary.write(data)
                binary.flush()
            else:  # e.g. a notebook stream without .buffer
                stream.write(data.decode(errors="replace"))
                stream.flush()
        except (OSError, ValueError):
            pass  # our stream is gone (EPIPE/closed): keep draining the PE


class _Pipe:
    """One PE's stdout or stderr: bytes in, whole lines out."""

    def __init__(self, pe: int, stream, tag: bool) -> None:
        self.pe, self.stream, self.tag = pe, stream, tag
        self.prefix = f"[pe {pe}] ".encode() if tag else b""
        self.partial = b""  # the start of a line still to come
        self.stack: list[bytes] = []  # a stack dump being gathered
        self.stack_until = 0.0

    def feed(self, data: bytes, now: float) -> None:
        *lines, self.partial = (self.partial + data).split(b"\n")
        while len(self.partial) >= MAX_LINE:
            lines.append(self.partial[:MAX_LINE])
            self.partial = self.partial[MAX_LINE:]
        out: list[bytes] = []
        for line in lines:
            if self.stack and _STACK_LINE.fullmatch(line) or _STACK_START.fullmatch(line):
                self.stack.append(line)
                self.stack_until = now + _STACK_GAP_S
                continue
            out += self._take_stack()
            out.append(line)
        self._emit(out)

    def tick(self, now: float) -> None:
        """Ends a stack block that has had no new line for _STACK_GAP_S."""
        if self.stack and now >= self.stack_until:
            self._emit(self._take_stack())

    def close(self) -> None:
        self._emit(self._take_stack() + ([self.partial] if self.partial else []))
        self.partial = b""

    def _take_stack(self) -> list[bytes]:
        block, self.stack = self.stack, []
        if block and not self.tag:  # tags name the PE already
            block.insert(0, f"shmemrun: PE {self.pe}'s Python stack:".encode())
        return block

    def _emit(self, lines: list[bytes]) -> None:
        if lines:
            write(self.stream, b"".join(self.prefix + line + b"\n" for line in lines))


class Forwarder:
    """Forwards the stdout and stderr pipes of every PE (Popen objects) in one thread."""

    def __init__(self, procs, tag: bool) -> None:
        self._sel = selectors.DefaultSelector()
        for pe, proc in enumerate(procs):
            for pipe, stream in ((proc.stdout, sys.stdout), (proc.stderr, sys.stderr)):
                os.set_blocking(pipe.fileno(), False)
                self._sel.register(pipe, selectors.EVENT_READ, _Pipe(pe, stream, tag))
        self._thread = threading.Thread(target=self._run, daemon=True, name="shmemrun-output")
        self._thread.start()

    def join(self, timeout: float) -> None:
        """Waits until every pipe is closed (at most `timeout` s: a PE's lingering child
        may hold one open)."""
        self._thread.join(timeout)

    def _run(self) -> None:
        while self._sel.get_map():
            pipes = [key.data for key in self._sel.get_map().values()]
            ends = [p.stack_until for p in pipes if p.stack]
            timeout = max(0.0, min(ends) - time.monotonic()) if ends else None
            for key, _ in self._sel.select(timeout):
                try:
                    data = os.read(key.fd, _READ)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if data:
                    key.data.feed(data, time.monotonic())
                else:  # the PE closed it (exited)
                    self._sel.unregister(key.fileobj)
                    key.fileobj.close()
                    key.data.close()
            now = time.monotonic()
            for pipe in pipes:
                pipe.tick(now)


__all__ = ["MAX_LINE", "OUTPUT_LOCK", "Forwarder", "say", "write"]
