"""PNG plots of perftest results (matplotlib, optional: ``pip install matplotlib``)."""

from pathlib import Path

__all__ = ["plot_compare"]

_TITLES = {"put_latency": "put + quiet latency (µs)", "ping_pong": "ping-pong one-way latency (µs)",
           "put_bw": "put bandwidth (GB/s)"}


def plot_compare(rows, out_dir, labels):
    """Draws latency.png (put_latency, ping_pong) and bandwidth.png (put_bw) into out_dir.

    Log-log, message size on x, one line per system.

    Args:
        rows: result dicts with system, figure, bytes, value.
        out_dir: an existing directory.
        labels: system name -> legend text.

    Returns:
        list[str]: lines to print (the files written, or why there are none).
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ["plots skipped: matplotlib is not installed (pip install matplotlib)"]
    written = []
    for name, figures in (("latency.png", ("put_latency", "ping_pong")), ("bandwidth.png", ("put_bw",))):
        present = [f for f in figures if any(r["figure"] == f for r in rows)]
        if not present:
            continue
        fig, axes = plt.subplots(1, len(present), figsize=(6.5 * len(present), 4.5), squeeze=False)
        for ax, f in zip(axes[0], present):
            for system in dict.fromkeys(r["system"] for r in rows if r["figure"] == f):
                pts = sorted((r["bytes"], r["value"]) for r in rows if r["figure"] == f and r["system"] == system)
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=labels.get(system, system))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_title(_TITLES[f])
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
        fig.tight_layout()
        path = Path(out_dir) / name
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(f"wrote {path}")
    return written
