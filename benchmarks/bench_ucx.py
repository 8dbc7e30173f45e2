"""The UCX path next to UCX's own ucx_perftest, in one run (issue 4's "Measure").

    python benchmarks/bench_ucx.py [--json out.json] [--quick]

Runs, one after the other on this machine:
  1. benchmarks/bench_p2p.py on 2 PEs with PYSHMEM_REMOTE_ONLY=1 (host API over UCX):
     8-byte put + quiet, ping-pong, fetch_add latency, put bandwidth 1 KiB - 4 MiB;
  2. benchmarks/bench_device_cpu.py on 2 PEs with PYSHMEM_REMOTE_ONLY=1: device-API
     p + quiet from a kernel, through the proxy thread to UCX, to compare with (1);
  3. ucx_perftest (from the libucx wheel) on localhost for the same operations:
     ucp_put_lat 8 B (default transports, and forced to cma: the protocol pyshmem's
     heap gets), ucp_fadd 8 B, ucp_put_bw for each size.
and prints one Markdown table with pyshmem / ucx_perftest ratios (latency: lower is
better; bandwidth: higher is better). ucx_perftest latencies are its median; pyshmem's
are medians of batch means and include the Python call.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = [1 << 10, 64 << 10, 1 << 20, 4 << 20]


def _ucx_perftest():
    import libucx

    root = Path(libucx.__file__).parent
    return str(root / "bin" / "ucx_perftest"), str(root / "lib")


def perftest(test, size, iters, tls=None):
    """One ucx_perftest server/client pair; returns (median latency us, overall MB/s).

    tls: optional UCX_TLS for both sides (e.g. to force the protocol pyshmem gets)."""
    exe, libdir = _ucx_perftest()
    env = dict(os.environ, LD_LIBRARY_PATH=libdir + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""))
    if tls:
        env["UCX_TLS"] = tls
    port = 20000 + (os.getpid() * 7 + size) % 20000
    server = subprocess.Popen([exe, "-p", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # the server needs a moment to listen
            client = subprocess.run([exe, "127.0.0.1", "-p", str(port), "-t", test, "-s", str(size), "-n", str(iters)],
                                    env=env, capture_output=True, text=True, timeout=120)
            if client.returncode == 0:
                break
        final = next(line for line in client.stdout.splitlines() if line.startswith("Final:"))
        cols = final.split()[1:]
        return float(cols[1]), float(cols[5])  # 50.0%ile latency (us), overall bandwidth (MB/s)
    finally:
        server.kill()
        server.wait()


def shmemrun(script, *args):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        env = dict(os.environ, PYSHMEM_REMOTE_ONLY="1")
        subprocess.run([sys.executable, "-m", "pyshmem.run", "-n", "2", sys.executable, str(HERE / script),
                        "--json", str(out), *args], env=env, check=True, timeout=900, stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the figures here")
    ap.add_argument("--quick", action="store_true", help="few iterations (a smoke test, not a measurement)")
    args = ap.parse_args()
    iters = ["--iters", "400", "--batches", "3"] if args.quick else []
    n = 1000 if args.quick else 20000

    host = shmemrun("bench_p2p.py", *iters)
    device = shmemrun("bench_device_cpu.py", *(["--iters", "400", "--batches", "3"] if args.quick else []))
    put_lat, _ = perftest("ucp_put_lat", 8, n)
    # ucx_perftest's buffers are allocated by UCX in shared memory, so its small puts are
    # stores by the sysv transport; pyshmem's heap (its own memfd) gets cma zero-copy
    # puts (process_vm_writev). The second figure forces that protocol on ucx_perftest.
    put_lat_cma, _ = perftest("ucp_put_lat", 8, n, tls="cma,tcp,self")
    fadd_lat, _ = perftest("ucp_fadd", 8, n)
    rows = [
        ("8-byte put (+ quiet for pyshmem), us", host["put8_quiet_us"], put_lat),
        ("ping-pong one-way, us", host["pingpong_oneway_us"], put_lat),
        ("fetch_add, us", host["fetch_add_us"], fadd_lat),
        ("ping-pong one-way vs ucx_perftest over cma (pyshmem's put protocol), us", host["pingpong_oneway_us"],
         put_lat_cma),
    ]
    device_p = next(v for name, v, _ in device["rows"] if name.startswith("p + quiet"))
    for size in SIZES:
        _, mbs = perftest("ucp_put_bw", size, max(200, n // 10) if size >= (1 << 20) else n)
        # ucx_perftest reports MiB/s as "MB/s"
        rows.append((f"put bandwidth {size >> 10} KiB, GB/s", host["bandwidth_GBps"][str(size)]["put"],
                     mbs * (1 << 20) / 1e9))
    print("| figure | pyshmem over UCX | ucx_perftest | ratio |\n|---|---|---|---|")
    for name, mine, theirs in rows:
        print(f"| {name} | {mine:.3f} | {theirs:.3f} | {mine / theirs:.2f} |")
    print(f"| device p + quiet through the proxy, us | {device_p:.3f} | host put + quiet {host['put8_quiet_us']:.3f}"
          f" | +{device_p - host['put8_quiet_us']:.3f} us |")
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows, "device_p_quiet_us": device_p}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
