"""``python -m pyshmem trace DIR``: the communication timeline of a PYSHMEM_TRACE run.

Run a job with ``PYSHMEM_TRACE=DIR`` (created when missing): every PE writes
``DIR/trace-pe<k>.bin`` (csrc/core/trace.h) at finalize, at a global exit and on
SIGTERM. This module merges them into

- ``trace.json``: Chrome trace / Perfetto format (open in ui.perfetto.dev or
  chrome://tracing): one process lane per PE (a track per thread: the PE's own and the
  proxy's), every call, wait, collective and proxy operation a slice, coloured by kind,
  with peer and bytes in its args; puts, gets, atomics and signals carry a flow arrow to
  a marker on the target PE's lane;
- ``timeline.png``: the same lanes drawn with matplotlib (when installed): a span
  inside another (a wait in a collective) on the row below it, short operations drawn
  at a minimum width, a legend of the kinds drawn;
- a summary printed as text: time in waits and collectives per PE, bytes per peer.

Both files go into DIR unless ``-o`` names another directory.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from .trace_file import EVENT as _EVENT, TraceError, load_raw

__all__ = ["load", "chrome_trace", "summary", "boxes", "figure", "plot", "main"]

KINDS = {1: "rma", 2: "atomic", 3: "signal", 4: "wait", 5: "collective", 6: "proxy", 7: "device", 8: "progress"}
_COLORS = {"collective": "#2ca02c", "wait": "#d62728", "rma": "#1f77b4", "atomic": "#9467bd",
           "signal": "#17becf", "proxy": "#ff7f0e", "device": "#8c564b", "progress": "#bcbd22",
           "other": "#7f7f7f"}
def load(directory):
    """Reads every PE's trace file of a run.

    Args:
        directory: the PYSHMEM_TRACE directory.

    Returns:
        list[dict]: per PE (ascending): pe, npes, names, events (NumPy records with t0/t1
        in ns on a clock shared by all PEs), count, capacity, clock (how the PE's clock
        was put on PE 0's: see :func:`clock_shift`).

    Raises:
        TraceError: no trace files, or a file that is not one.
    """
    pes = load_raw(directory)
    ref = pes[0]
    for p in pes:
        shift, p["clock"] = clock_shift(p, ref)
        if shift:
            ev = p["events"].copy()
            ev["t0"] += shift
            ev["t1"] += shift
            p["events"] = ev
    return pes


def clock_shift(p, ref):
    """(ns to add to PE `p`'s timestamps, how it was found) to put them on PE `ref`'s clock.

    PEs of PE 0's node share its CLOCK_MONOTONIC (shift 0, ``"same clock"``); others
    use the init-time round-trip estimate (``"estimated: +X us ± U us"``) or, in traces
    without one, init's final barrier (``"init barrier"``: the barrier's skew is the error).
    """
    if p["node"] == ref["node"]:
        return 0, "same clock"
    if p.get("clock_offset_ns") is not None:
        return -p["clock_offset_ns"], (f"estimated: {p['clock_offset_ns'] / 1e3:+.3f} us ± "
                                       f"{p['clock_uncertainty_ns'] / 1e3:.3f} us against PE 0")
    return ref["t_sync"] - p["t_sync"], "init barrier"


def _origin(pes):
    starts = [int(p["events"]["t0"].min()) for p in pes if len(p["events"])]
    return min(starts) if starts else 0


def chrome_trace(pes):
    """The Chrome-trace dict (``{"traceEvents": [...]}``) of loaded traces."""
    t0 = _origin(pes)
    out, flow = [], 0
    for p in pes:
        pe = p["pe"]
        out.append({"ph": "M", "name": "process_name", "pid": pe, "args": {"name": f"PE {pe}"}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": pe, "args": {"sort_index": pe}})
        for e in p["events"]:
            kind = KINDS.get(int(e["kind"]), "other")
            ts = (int(e["t0"]) - t0) / 1e3
            ev = {"ph": "X", "name": p["names"][e["name"]] if e["name"] < len(p["names"]) else "?", "cat": kind,
                  "pid": pe, "tid": int(e["thread"]), "ts": ts, "dur": max(0.0, (int(e["t1"]) - int(e["t0"])) / 1e3),
                  "args": {"bytes": int(e["bytes"])}}
            if int(e["peer"]) >= 0:
                ev["args"]["peer"] = int(e["peer"])
            out.append(ev)
            if kind in ("rma", "atomic", "signal", "proxy") and 0 <= int(e["peer"]) != pe:
                flow += 1
                ev["args"]["flow"] = flow
                # The arrow: from this slice to a marker on the target PE's lane.
                out.append({"ph": "s", "id": flow, "name": ev["name"], "cat": kind, "pid": pe,
                            "tid": int(e["thread"]), "ts": ts})
                out.append({"ph": "i", "s": "t", "name": f"{ev['name']} from PE {pe}", "cat": kind,
                            "pid": int(e["peer"]), "tid": 0, "ts": ts,
                            "args": {"from": pe, "bytes": int(e["bytes"]), "flow": flow}})
                out.append({"ph": "f", "bp": "e", "id": flow, "name": ev["name"], "cat": kind,
                            "pid": int(e["peer"]), "tid": 0, "ts": ts})
    return {"traceEvents": out, "displayTimeUnit": "ns"}


def summary(pes):
    """Text: per PE its traced span, time in waits and collectives, and bytes per peer."""
    lines = ["| PE | events (kept/recorded) | span (ms) | in waits (ms) | in collectives (ms) | bytes to each PE |",
             "|---|---|---|---|---|---|"]
    for p in pes:
        ev = p["events"]
        dur = (ev["t1"] - ev["t0"]).astype(np.float64) / 1e6
        span = (int(ev["t1"].max()) - int(ev["t0"].min())) / 1e6 if len(ev) else 0.0
        moving = np.isin(ev["kind"], (1, 2, 3, 6)) & (ev["peer"] >= 0)
        per_peer = {int(q): int(ev["bytes"][moving & (ev["peer"] == q)].sum()) for q in np.unique(ev["peer"][moving])}
        lines.append(f"| {p['pe']} | {len(ev)}/{p['count']} | {span:.3f} | {dur[ev['kind'] == 4].sum():.3f} | "
                     f"{dur[ev['kind'] == 5].sum():.3f} | "
                     + (", ".join(f"PE {q}: {b}" for q, b in sorted(per_peer.items())) or "-") + " |")
    own = [p for p in pes if p.get("clock", "same clock") != "same clock"]
    for p in own:
        lines.append(f"PE {p['pe']}'s clock: {p['clock']}")
    dropped = [p["pe"] for p in pes if p["count"] > p["capacity"]]
    if dropped:
        lines.append(f"PEs {dropped} recorded more events than PYSHMEM_TRACE_EVENTS: only the newest are kept.")
    return "\n".join(lines)


MIN_WIDTH = 0.004  # the narrowest box, as a fraction of the time axis (~4 pixels)


def _rows(t0, t1):
    """Sub-lane of each span of one thread: the lowest row free at its start, so a span
    nested in another (a wait inside a collective) sits on the row below it and no two
    boxes of a row overlap. `t1` is the drawn end (minimum width included)."""
    order = np.lexsort((-(t1 - t0), t0))  # by start, the longer (enclosing) span first
    ends, rows = [], np.zeros(len(t0), np.int64)
    active = []  # (drawn end, row) of the spans still open at the current start
    for i in order:
        active = [(end, r) for end, r in active if end > t0[i]]
        # Below every span that encloses this one, even when a higher row is free again.
        low = max((r + 1 for end, r in active if end >= t1[i]), default=0)
        row = next((r for r in range(low, len(ends)) if ends[r] <= t0[i]), max(low, len(ends)))
        while row >= len(ends):
            ends.append(0)
        ends[row] = t1[i]
        rows[i] = row
        active.append((t1[i], row))
    return rows


def boxes(pes):
    """What :func:`plot` draws: one box per event, nested spans on sub-lanes.

    Args:
        pes: traces from :func:`load`.

    Returns:
        tuple: (list of dicts with pe, thread, row, kind, name, x and width in ms
        (width at least the minimum), y and height in lane units; the minimum width in ms).
    """
    t_origin = _origin(pes)
    ends = [int(p["events"]["t1"].max()) for p in pes if len(p["events"])]
    span_ms = max((max(ends) - t_origin) / 1e6, 1e-6) if ends else 1.0
    min_w = span_ms * MIN_WIDTH
    out = []
    for p in pes:
        ev = p["events"]
        per_thread = []
        for th in np.unique(ev["thread"]):
            idx = np.flatnonzero(ev["thread"] == th)
            x = (ev["t0"][idx] - t_origin).astype(np.float64) / 1e6
            w = np.maximum((ev["t1"][idx] - ev["t0"][idx]).astype(np.float64) / 1e6, min_w)
            per_thread.append((int(th), idx, x, w, _rows(x, x + w)))
        nrows = sum(int(r.max()) + 1 for *_, r in per_thread) or 1
        height = 0.8 / nrows
        base = 0
        for th, idx, x, w, rows in per_thread:
            for i, xi, wi, r in zip(idx, x, w, rows):
                kind = KINDS.get(int(ev["kind"][i]), "other")
                out.append({"pe": p["pe"], "thread": th, "row": base + int(r), "kind": kind,
                            "name": p["names"][ev["name"][i]] if ev["name"][i] < len(p["names"]) else "?",
                            "x": float(xi), "width": float(wi), "y": p["pe"] - 0.4 + (base + int(r)) * height,
                            "height": height})
            base += int(rows.max()) + 1
    return out, min_w


def figure(pes):
    """The timeline as a matplotlib Figure (see :func:`plot`); None without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Patch
    except ImportError:
        return None
    drawn, min_w = boxes(pes)
    fig, ax = plt.subplots(figsize=(12, 1.2 + 0.9 * len(pes)))
    groups = {}
    for b in drawn:
        groups.setdefault((b["kind"], b["y"], b["height"]), []).append((b["x"], b["width"]))
    for (kind, y, h), bars in groups.items():
        ax.broken_barh(bars, (y + 0.05 * h, 0.9 * h), facecolors=_COLORS[kind], edgecolors="none")
    ax.set_yticks([p["pe"] for p in pes], [f"PE {p['pe']}" for p in pes])
    ax.set_ylim(max(p["pe"] for p in pes) + 0.5 if pes else 0.5, -0.5)
    unit = f"{min_w * 1e3:.3g} us" if min_w < 1 else f"{min_w:.3g} ms"
    ax.set_xlabel(f"time (ms); a span inside another is drawn on the row below it; operations shorter than "
                  f"{unit} are drawn {unit} wide")
    present = [k for k in _COLORS if any(b["kind"] == k for b in drawn)]
    ax.legend(handles=[Patch(color=_COLORS[k], label=k) for k in present], loc="upper left",
              bbox_to_anchor=(0, 1.0), fontsize=8, ncol=max(1, len(present)), frameon=False,
              borderaxespad=-2.2)
    ax.set_title("pyshmem communication timeline", pad=22)
    fig.tight_layout()
    return fig


def plot(pes, path):
    """Draws the timeline PNG: a lane per PE, split in rows per thread and nesting depth.

    Args:
        pes: traces from :func:`load`.
        path: the PNG to write.

    Returns:
        bool: False when matplotlib is not installed (nothing written).
    """
    fig = figure(pes)
    if fig is None:
        return False
    import matplotlib.pyplot as plt

    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv=None):
    """``python -m pyshmem trace DIR [-o OUT] [--phases]``.

    Returns:
        int: 0; 2 when DIR holds no trace.
    """
    ap = argparse.ArgumentParser(prog="python -m pyshmem trace", description=__doc__.splitlines()[0])
    ap.add_argument("directory", help="the PYSHMEM_TRACE directory of a finished run")
    ap.add_argument("-o", "--out", help="directory for trace.json and timeline.png (default: DIR)")
    ap.add_argument("--phases", action="store_true",
                    help="a two-PE ping-pong's one-way trips split into phases (pyshmem/trace_phases.py), "
                         "printed instead of writing the timeline")
    a = ap.parse_args(argv)
    if a.phases:
        from . import trace_phases

        try:
            print(trace_phases.phase_table(trace_phases.load_raw(a.directory)))
        except TraceError as exc:
            print(f"pyshmem trace: {exc}", file=sys.stderr)
            return 2
        return 0
    try:
        pes = load(a.directory)
    except TraceError as exc:
        print(f"pyshmem trace: {exc}", file=sys.stderr)
        return 2
    out = Path(a.out or a.directory)
    out.mkdir(parents=True, exist_ok=True)
    (out / "trace.json").write_text(json.dumps(chrome_trace(pes)))
    print(f"wrote {out / 'trace.json'} (open it in ui.perfetto.dev or chrome://tracing)")
    if plot(pes, out / "timeline.png"):
        print(f"wrote {out / 'timeline.png'}")
    else:
        print("timeline.png skipped: matplotlib is not installed (pip install matplotlib)")
    print(summary(pes))
    return 0
