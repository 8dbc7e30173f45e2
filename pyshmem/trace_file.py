"""The file PYSHMEM_TRACE writes per PE (csrc/core/trace.h), read back.

Layout (little-endian): an 80-byte header (64 bytes in version 1, which has no clock
estimate), then ``names`` NUL-padded 48-byte event names, then min(count, capacity)
40-byte events, oldest first. Used by
:mod:`pyshmem.trace` (the timeline) and :mod:`pyshmem.trace_phases` (a round trip's
phases).
"""

import struct
from pathlib import Path

import numpy as np

__all__ = ["EVENT", "TraceError", "read", "load_raw"]

HEADER = struct.Struct("<8sIiiIQQqQQ")  # version 1's 64 bytes, which version 2 starts with
CLOCK = struct.Struct("<qq")  # version 2: clock offset and uncertainty (ns), -1: not estimated
EVENT = np.dtype([("t0", "<i8"), ("t1", "<i8"), ("bytes", "<u8"), ("name", "<u4"), ("peer", "<i4"),
                  ("kind", "<u2"), ("thread", "<u2"), ("pad", "<u4")])
NAME_BYTES = 48


class TraceError(ValueError):
    """The directory holds no trace, or a file is not one."""


def read(path):
    """One PE's trace file.

    Args:
        path: a ``trace-pe<k>.bin`` file.

    Returns:
        dict: pe, npes, names (the name table), events (NumPy records of EVENT, t0/t1
        in ns of the PE's CLOCK_MONOTONIC), count (events recorded), capacity (events
        kept), t_sync (CLOCK_MONOTONIC when init's final barrier returned), node (hash
        of the node's id: equal values share a clock), clock_offset_ns and
        clock_uncertainty_ns (this PE's clock minus PE 0's, estimated at init; None
        when not estimated).

    Raises:
        TraceError: the file is not a pyshmem trace.
    """
    path = Path(path)
    data = path.read_bytes()
    if len(data) < HEADER.size:
        raise TraceError(f"{path}: {len(data)} bytes, not a pyshmem trace (a PE still running, or killed?)")
    magic, version, pe, npes, names, count, capacity, t_sync, node, _ = HEADER.unpack_from(data)
    if magic != b"PYSHTRC1" or version not in (1, 2):
        raise TraceError(f"{path}: not a pyshmem trace file (magic {magic!r}, version {version})")
    off = HEADER.size
    offset = uncertainty = None
    if version == 2:
        if len(data) < off + CLOCK.size:
            raise TraceError(f"{path}: a version 2 trace cut short in its header")
        offset, uncertainty = CLOCK.unpack_from(data, off)
        off += CLOCK.size
        if uncertainty < 0:
            offset = uncertainty = None
    table = [data[off + i * NAME_BYTES: off + (i + 1) * NAME_BYTES].split(b"\0")[0].decode(errors="replace")
             for i in range(names)]
    off += names * NAME_BYTES
    n = min(count, capacity)
    events = np.frombuffer(data, dtype=EVENT, count=n, offset=off) if n else np.zeros(0, EVENT)
    return {"pe": pe, "npes": npes, "names": table, "events": events, "count": count, "capacity": capacity,
            "t_sync": t_sync, "node": node, "clock_offset_ns": offset, "clock_uncertainty_ns": uncertainty}


def load_raw(directory):
    """Every PE's trace of a run, each with its own clock's timestamps.

    Args:
        directory: the PYSHMEM_TRACE directory.

    Returns:
        list[dict]: per PE (ascending), as :func:`read` returns it.

    Raises:
        TraceError: no trace files, or a file that is not one.
    """
    files = sorted(Path(directory).glob("trace-pe*.bin"), key=lambda p: int(p.stem[len("trace-pe"):]))
    if not files:
        raise TraceError(f"{directory}: no trace-pe<k>.bin files; run the job with PYSHMEM_TRACE={directory}")
    return [read(f) for f in files]
