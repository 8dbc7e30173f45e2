"""Robust α-β fits of (message size, time) points: what calibration turns measurements into."""

import dataclasses
import statistics


@dataclasses.dataclass(frozen=True)
class Fit:
    """time(n) = alpha_s + n * beta_s_per_byte, fitted robustly.

    Fields:
        alpha_s, beta_s_per_byte: the fit (alpha clamped at 0).
        residual: the median relative error |fit - measured| / measured over the points.
        outliers: the sizes whose relative error exceeds 3 median absolute deviations
            of the relative errors (and 25 %), reported rather than fitted to.
        points: how many points were fitted.
    """

    alpha_s: float
    beta_s_per_byte: float
    residual: float
    outliers: tuple
    points: int

    def predict(self, nbytes):
        """The fitted time of an `nbytes` message, in seconds."""
        return self.alpha_s + nbytes * self.beta_s_per_byte


def fit_alpha_beta(points):
    """Theil-Sen fit of time against size: the slope is the median of the slopes between
    every pair of sizes, the intercept the median of time - slope * size, so a few
    disturbed points (a descheduled PE, a page fault) do not move it.

    Args:
        points: (bytes, seconds) pairs, at least two distinct sizes; use each size's
            median time.

    Returns:
        Fit.

    Raises:
        ValueError: fewer than two distinct sizes, or a non-positive time.
    """
    pts = sorted((float(n), float(t)) for n, t in points)
    if len({n for n, _ in pts}) < 2:
        raise ValueError("pyshmem.model: an α-β fit needs times at two or more message sizes")
    if any(t <= 0 for _, t in pts):
        raise ValueError("pyshmem.model: an α-β fit needs positive times")
    slopes = [(t2 - t1) / (n2 - n1) for i, (n1, t1) in enumerate(pts) for n2, t2 in pts[i + 1:] if n2 != n1]
    beta = max(0.0, statistics.median(slopes))
    alpha = max(0.0, statistics.median(t - beta * n for n, t in pts))
    rel = [abs(alpha + beta * n - t) / t for n, t in pts]
    med = statistics.median(rel)
    mad = statistics.median(abs(r - med) for r in rel)
    limit = max(0.25, med + 3 * mad)
    outliers = tuple(int(n) for (n, _), r in zip(pts, rel) if r > limit)
    return Fit(alpha, beta, med, outliers, len(pts))
