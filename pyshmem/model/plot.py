"""PNG plots of pyshmem.model predictions (matplotlib, optional: ``pip install matplotlib``)."""

import math

from pyshmem.errors import ShmemNotImplementedError


def plot(rows, path, x, y, title):
    """One line per algorithm of `rows` (Prediction records), log-x (and log-y for time).

    Args:
        rows: Predictions.
        path: the PNG to write.
        x: ``"bytes"`` or ``"npes"``.
        y: ``"busbw_GBps"`` or ``"time_us"``.
        title: the figure's title.

    Raises:
        ShmemNotImplementedError: matplotlib is not installed (says how to get it).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise ShmemNotImplementedError("pyshmem.model --plot needs matplotlib (pip install matplotlib)") from None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for algo in dict.fromkeys(r.algo for r in rows):
        pts = sorted((getattr(r, x), getattr(r, y)) for r in rows if r.algo == algo and not math.isinf(r.time_us))
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=algo)
    ax.set_xscale("log", base=2)
    if y == "time_us":
        ax.set_yscale("log")
    ax.set_xlabel({"bytes": "message size (bytes)", "npes": "GPUs"}[x])
    ax.set_ylabel({"busbw_GBps": "bus bandwidth (GB/s)", "time_us": "time (µs)"}[y])
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
