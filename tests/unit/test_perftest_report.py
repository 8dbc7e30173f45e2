"""perftest's result rows: the latency statistics every latency test reports."""

import numpy as np

from pyshmem.perftest.report import Row, latency_stats, render


def test_latency_stats_are_the_distribution_of_the_iterations():
    us = np.arange(1, 101, dtype=np.float64)  # 1..100 us
    s = latency_stats(us)
    assert s == {"lat_avg_us": 50.5, "lat_p50_us": 50.5, "lat_p99_us": 99.01, "lat_min_us": 1.0, "lat_max_us": 100.0}
    one = latency_stats(np.array([7.0]))
    assert set(one.values()) == {7.0}
    # a tail the average hides shows in p99 and max, not in the median
    tail = latency_stats(np.r_[np.full(990, 10.0), np.full(10, 5000.0)])
    assert tail["lat_p50_us"] == 10.0 and tail["lat_max_us"] == 5000.0 and tail["lat_p99_us"] > 10.0


def test_the_latency_table_has_median_and_p99_columns():
    row = Row(test="put_ping_pong", api="host", npes=2, bytes=8, iters=3, **latency_stats(np.array([1.0, 2.0, 9.0])))
    text = render([row], "latency", "table", "t")
    header = text.splitlines()[1]
    assert header.split() == ["size", "(B)", "avg", "(us)", "p50", "(us)", "p99", "(us)", "min", "(us)", "max", "(us)"]
    assert "2.000" in text.splitlines()[3]
