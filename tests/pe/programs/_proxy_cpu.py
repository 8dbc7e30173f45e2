"""CPU time of this process's proxy thread (named "pyshmem-proxy" in /proc)."""

import os
import time


def proxy_cpu_seconds():
    """utime + stime of the pyshmem-proxy thread, in seconds."""
    ticks = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/comm") as f:
            if f.read().strip() != "pyshmem-proxy":
                continue
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / ticks
    raise SystemExit(f"pid {os.getpid()}: no pyshmem-proxy thread")


def proxy_cpu_fraction(seconds):
    """The proxy thread's CPU time over `seconds` of sleep, as a fraction of one core."""
    before, t0 = proxy_cpu_seconds(), time.monotonic()
    time.sleep(seconds)
    return (proxy_cpu_seconds() - before) / (time.monotonic() - t0)
