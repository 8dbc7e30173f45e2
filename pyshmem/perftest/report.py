"""Result rows of a perftest and how they are printed: a table, JSON lines or CSV."""

import csv
import io
import json

import numpy as np

__all__ = ["Row", "latency_stats", "render"]


class Row(dict):
    """One measured point: test, size (bytes), and latency (avg/min/max µs) or bandwidth.

    Keys: ``test``, ``api``, ``npes``, ``bytes``, ``iters`` and either ``lat_avg_us``,
    ``lat_p50_us``, ``lat_p99_us``, ``lat_min_us``, ``lat_max_us`` (latency tests; see
    :func:`latency_stats`) or ``bw_gbps`` (bandwidth tests);
    collectives add ``algbw_gbps`` and ``busbw_gbps``; atomics ``op``/``dtype``.
    """


def latency_stats(us):
    """The latency keys of a Row from per-iteration latencies.

    Args:
        us: a NumPy array of per-iteration latencies in microseconds (at least one).

    Returns:
        dict: ``lat_avg_us``, ``lat_p50_us`` (median), ``lat_p99_us`` (99th percentile,
        linear interpolation), ``lat_min_us``, ``lat_max_us``, as floats.
    """
    p50, p99 = np.percentile(us, [50, 99])
    return dict(lat_avg_us=float(us.mean()), lat_p50_us=float(p50), lat_p99_us=float(p99),
                lat_min_us=float(us.min()), lat_max_us=float(us.max()))


_COLUMNS = {
    "latency": [("bytes", "size (B)"), ("lat_avg_us", "avg (us)"), ("lat_p50_us", "p50 (us)"),
                ("lat_p99_us", "p99 (us)"), ("lat_min_us", "min (us)"), ("lat_max_us", "max (us)")],
    "bandwidth": [("bytes", "size (B)"), ("bw_gbps", "bandwidth (GB/s)"), ("msg_rate_mps", "rate (M ops/s)")],
    "collective": [("bytes", "size (B)"), ("lat_avg_us", "avg (us)"), ("lat_p50_us", "p50 (us)"),
                   ("lat_min_us", "min (us)"), ("lat_max_us", "max (us)"), ("algbw_gbps", "algbw (GB/s)"),
                   ("busbw_gbps", "busbw (GB/s)")],
}


def _cell(v):
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1 else f"{v:.3f}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


def render(rows, kind, fmt, title):
    """Formats rows for printing.

    Args:
        rows: Row objects of one test.
        kind: "latency", "bandwidth" or "collective" (which columns the table has).
        fmt: "table", "json" (one object per line) or "csv".
        title: the table's heading line.

    Returns:
        str: the text to print.
    """
    if fmt == "json":
        return "\n".join(json.dumps(r, sort_keys=True) for r in rows)
    if fmt == "csv":
        buf = io.StringIO()
        keys = sorted({k for r in rows for k in r})
        w = csv.DictWriter(buf, fieldnames=keys, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
        return buf.getvalue().rstrip("\n")
    cols = [(k, h) for k, h in _COLUMNS[kind] if any(k in r for r in rows)]
    table = [[h for _, h in cols]] + [[_cell(r.get(k, "")) for k, _ in cols] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(cols))]
    lines = [f"# {title}"]
    for i, line in enumerate(table):
        lines.append("  ".join(c.rjust(w) for c, w in zip(line, widths)))
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)
