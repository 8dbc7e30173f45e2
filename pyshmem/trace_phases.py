"""Where a ping-pong's time goes, phase by phase, from a PYSHMEM_TRACE recording.

``python -m pyshmem trace DIR --phases`` reads a trace of two PEs that take turns
sending to each other (perftest's ``signal_ping_pong``, ``put_ping_pong``, from the
host or the device API) and splits every one-way trip, from the first operation PE A
issues in its turn to the first one PE B issues in the next, into

- ``issue -> proxy start``: a device-API request waiting for the proxy thread to take
  it from the FIFO (device API only);
- ``send -> applied at target``: from the start of the transport call (the proxy's
  execution of the request; for the host API, the call's own span, binding included)
  to the target's first progress call after it that handled work: the operation
  inside pyshmem and UCX, the wire, and the target's progress (UCX over tcp writes the
  target's memory and runs emulated atomics only when the target progresses);
- ``applied -> target issues``: the target noticing the arrival (its wait's next poll)
  and issuing its answer (for a kernel, its wait's backoff; for the host API, Python).

Where the target recorded no progress event in the trip (a transport that writes the
target's memory itself, such as shared memory), the last two phases are one,
``send -> target issues``. The transport call's own duration (start to return, which
may end after the target answered: a put's completion can wait for an ack) is given
beside them.

It needs the instants that PYSHMEM_TRACE records for this (core/trace.h: a CPU-build
kernel's device-API operation, a progress call that handled work) and one clock for
both PEs: PEs of one machine (network namespaces included) share CLOCK_MONOTONIC, so
the raw timestamps are used, not ones aligned on init's barrier.
"""

import numpy as np

from .trace_file import TraceError, load_raw

__all__ = ["PHASES", "one_way_trips", "phase_table", "load_raw"]

_RMA, _AMO, _SIGNAL, _PROXY, _DEVICE, _PROGRESS = 1, 2, 3, 6, 7, 8
PHASES = ("issue -> proxy start", "send -> applied at target", "applied -> target issues", "send -> target issues",
          "transport call (start -> return)")


def _issues(p, other):
    """The events of every operation toward `other` issued by the PE's own threads, and
    whether they are CPU-build kernel instants (used when there are any) rather than
    host API spans: (events, device)."""
    ev = p["events"]
    dev = ev[(ev["kind"] == _DEVICE) & (ev["peer"] == other)]
    if len(dev):
        return dev, True
    host = ev[np.isin(ev["kind"], (_RMA, _AMO, _SIGNAL)) & (ev["peer"] == other)]
    return host, False


def one_way_trips(pes):
    """Splits each one-way trip of a two-PE ping-pong into :data:`PHASES`.

    Args:
        pes: the two PEs' traces as ``pyshmem.trace_file.read`` returns them (raw clocks).

    Returns:
        list[dict]: per trip: ``from`` (PE), ``total_us`` and one entry per phase in µs
        (None where the trip has no event for it: no proxy on the host API; the split
        at the target's progress, or the unsplit phase, whichever the trip lacks).

    Raises:
        TraceError: not two PEs, or no operations between them.
    """
    if len(pes) != 2:
        raise TraceError(f"--phases needs a trace of 2 PEs taking turns, not {len(pes)}")
    issued = {}
    for p in pes:
        other = pes[1 - pes.index(p)]["pe"]
        ev, device = _issues(p, other)
        issued[p["pe"]] = (ev, device)
    if any(len(ev) == 0 for ev, _ in issued.values()):
        raise TraceError("--phases: each PE must issue operations to the other (a ping-pong)")
    # Every operation of both PEs in time order; a turn is a run of one PE's operations.
    marks = sorted((int(e["t0"]), int(e["t1"]), pe) for pe, (ev, _) in issued.items() for e in ev)
    turns = []  # [pe, first issue, last return]
    for t0, t1, pe in marks:
        if turns and turns[-1][0] == pe:
            turns[-1][2] = max(turns[-1][2], t1)
        else:
            turns.append([pe, t0, t1])
    by_pe = {p["pe"]: p["events"] for p in pes}
    out = []
    for (pe, start, ret), (target, next_start, _) in zip(turns, turns[1:]):
        ev = by_pe[pe]
        proxy = ev[(ev["kind"] == _PROXY) & (ev["t0"] >= start) & (ev["t0"] < next_start)]
        trip = dict.fromkeys(PHASES)
        trip.update({"from": pe, "total_us": (next_start - start) / 1e3})
        if issued[pe][1] and len(proxy):
            sent = int(proxy["t0"].min())
            trip[PHASES[0]] = (sent - start) / 1e3
            trip[PHASES[4]] = (int(proxy["t1"].max()) - sent) / 1e3
        else:
            sent = start
            trip[PHASES[4]] = (ret - start) / 1e3
        tev = by_pe[target]
        applied = tev["t0"][(tev["kind"] == _PROGRESS) & (tev["t0"] >= sent) & (tev["t0"] <= next_start)]
        if len(applied):
            at = int(applied.min())
            trip[PHASES[1]] = (at - sent) / 1e3
            trip[PHASES[2]] = (next_start - at) / 1e3
        else:
            trip[PHASES[3]] = (next_start - sent) / 1e3
        out.append(trip)
    return out


def phase_table(pes, skip=0.1):
    """Markdown: the median and p90 of each phase over the trips, the first `skip`
    fraction of trips (the warm-up) left out.

    Args:
        pes: as for :func:`one_way_trips`.
        skip: fraction of the trips to drop from the start.

    Returns:
        str: the table, one row per phase and one for the whole trip.
    """
    trips = one_way_trips(pes)
    trips = trips[int(len(trips) * skip):] or trips
    lines = [f"one-way trips: {len(trips)}", "| phase | median µs | p90 µs | trips with it |", "|---|---|---|---|"]
    for name in PHASES + ("total_us",):
        vals = np.array([t[name] for t in trips if t[name] is not None], dtype=float)
        label = "one way, total" if name == "total_us" else name
        if len(vals):
            lines.append(f"| {label} | {np.median(vals):.2f} | {np.percentile(vals, 90):.2f} | {len(vals)} |")
        else:
            lines.append(f"| {label} | - | - | 0 |")
    return "\n".join(lines)
