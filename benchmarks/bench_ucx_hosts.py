"""pyshmem's inter-node path next to ucx_perftest on the same testbed, in one command
(issue 21's benchmark).

    python benchmarks/bench_ucx_hosts.py [--iters N] [--json out.json] [--quick]

Two testbeds, each measured for both sides in the same few minutes:
  hosts   two network-namespace "hosts" joined by a veth pair (benchmarks/netns_hosts.py;
          needs root and iproute2, else skipped with the reason), one PE per host,
          UCX_TLS=tcp and UCX_NET_DEVICES set: every byte crosses the veth pair over TCP;
  local   one host, 2 PEs with PYSHMEM_REMOTE_ONLY=1 (every peer through UCX) and UCX's
          default transports, next to ucx_perftest on localhost with its defaults.
On each, for 8-byte messages: ucx_perftest's ucp_put_lat, ucp_get, ucp_fadd (median
and 99th percentile, -R) against pyshmem's signal_ping_pong (one 8-byte signal update
per direction: the same one-operation round trip as ucp_put_lat), put_ping_pong with an
8-byte payload (payload put + fence + flag update: two operations), get_latency and atomic_latency (fetch_add), from
the host API and from a kernel (--api device: a CPU-build kernel through the proxy
thread); and put bandwidth at 64 KiB and 1 MiB (ucp_put_bw against put_bw). pyshmem's
figures are python -m pyshmem.perftest's, per iteration: median, p99 and max.
Ratios are pyshmem / ucx_perftest on medians (latency: lower is better; bandwidth:
higher is better). Timings are never asserted anywhere; this prints them.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import netns_hosts  # noqa: E402

BW_SIZES = (64 << 10, 1 << 20)


def _ucx_root():
    import libucx

    return Path(libucx.__file__).parent


def _ucx_env(extra):
    env = dict(os.environ, LD_LIBRARY_PATH=str(_ucx_root() / "lib") + os.pathsep + os.environ.get("LD_LIBRARY_PATH", ""),
               UCX_WARN_UNUSED_ENV_VARS="n")
    env.pop("UCX_TLS", None)
    env.update(extra)
    return env


def ucx_perftest(test, size, iters, ucx_env, server_ns=None, client_ns=None, server_addr="127.0.0.1", rank=50.0):
    """One ucx_perftest server/client pair (in the given namespaces, or here).

    Returns:
        (latency at percentile `rank` in us, overall bandwidth in MB/s as ucx_perftest
        prints it, i.e. MiB/s).
    """
    exe = str(_ucx_root() / "bin" / "ucx_perftest")
    env = _ucx_env(ucx_env)
    port = 20000 + (os.getpid() * 7 + size + int(rank)) % 20000

    def ns(name):
        return ["ip", "netns", "exec", name] if name else []

    server = subprocess.Popen(ns(server_ns) + [exe, "-p", str(port)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # the server needs a moment to listen
            client = subprocess.run(ns(client_ns) + [exe, server_addr, "-p", str(port), "-t", test, "-s", str(size),
                                                     "-n", str(iters), "-R", str(rank)],
                                    env=env, capture_output=True, text=True, timeout=180)
            if client.returncode == 0:
                break
            time.sleep(0.1)
        else:
            raise RuntimeError(f"ucx_perftest -t {test} failed:\n{client.stdout[-800:]}{client.stderr[-800:]}")
        final = next(line for line in client.stdout.splitlines() if line.startswith("Final:"))
        cols = final.split()[1:]
        return float(cols[1]), float(cols[5])
    finally:
        server.kill()
        server.wait()


def pyshmem_perftest(launch, env, test, size, iters, *extra):
    """The JSON row of python -m pyshmem.perftest `test` at one size (PE 0's)."""
    cmd = launch + [sys.executable, "-m", "pyshmem.perftest", test, "-b", str(size), "-e", str(size),
                    "-n", str(iters), "-w", str(max(10, iters // 10)), "--json", *extra]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[-12:])} failed:\n{proc.stdout[-1500:]}{proc.stderr[-1500:]}")
    rows = [json.loads(line.split("] ", 1)[-1]) for line in proc.stdout.splitlines()
            if line.split("] ", 1)[-1].startswith("{")]
    return rows[-1]


def testbed_hosts(hosts):
    a, b = hosts["hosts"]
    ucx = {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": netns_hosts.NET_DEV}
    env = dict(_ucx_env(ucx), PYTHONUNBUFFERED="1")
    launch = [sys.executable, "-m", "pyshmem.run", "--hosts", f"{a}:1,{b}:1", "--rsh", "ip netns exec {host}",
              "--bind", hosts["bind"], "--timeout", "500", "-x", "UCX_TLS", "-x", "UCX_NET_DEVICES"]
    perf = dict(ucx_env=ucx, server_ns=a, client_ns=b, server_addr=hosts["addrs"][0])
    return "two hosts (netns + veth, UCX_TLS=tcp), 1 PE per host", launch, env, perf


def testbed_local():
    env = dict(_ucx_env({}), PYTHONUNBUFFERED="1", PYSHMEM_REMOTE_ONLY="1")
    launch = [sys.executable, "-m", "pyshmem.run", "-n", "2", "--timeout", "500"]
    return "one host, PYSHMEM_REMOTE_ONLY=1, UCX's default transports", launch, env, dict(ucx_env={})


# (figure, ucx_perftest test or None, pyshmem perftest test, size, extra perftest args)
LATENCY = [
    ("ping-pong, signal only (one way)", "ucp_put_lat", "signal_ping_pong", 8, ()),
    ("ping-pong, 8 B put + fence + flag", "ucp_put_lat", "put_ping_pong", 8, ()),
    ("device API ping-pong, signal only", "ucp_put_lat", "signal_ping_pong", 8, ("--api", "device")),
    ("get 8 B", "ucp_get", "get_latency", 8, ()),
    ("fetch_add 8 B", "ucp_fadd", "atomic_latency", 8, ("-a", "fetch_add")),
]


def measure(name, launch, env, perf, iters, quick):
    rows = []
    ucx_iters = iters * 5
    for figure, utest, ptest, size, extra in LATENCY:
        if quick and "fence" in figure:
            continue
        u50, _ = ucx_perftest(utest, max(size, 8), ucx_iters, rank=50.0, **perf)
        u99, _ = ucx_perftest(utest, max(size, 8), ucx_iters, rank=99.0, **perf)
        r = pyshmem_perftest(launch, env, ptest, size, iters, *extra)
        rows.append(dict(testbed=name, figure=figure, ucx_test=utest, ucx_p50_us=u50, ucx_p99_us=u99,
                         p50_us=r["lat_p50_us"], p99_us=r["lat_p99_us"], max_us=r["lat_max_us"],
                         min_us=r["lat_min_us"], ratio=r["lat_p50_us"] / u50))
    for size in BW_SIZES[:1] if quick else BW_SIZES:
        _, mib = ucx_perftest("ucp_put_bw", size, max(1000, iters), **perf)
        r = pyshmem_perftest(launch, env, "put_bw", size, max(200, iters // 5))
        gbs_ucx = mib * (1 << 20) / 1e9
        rows.append(dict(testbed=name, figure=f"put bandwidth {size >> 10} KiB (GB/s)", ucx_test="ucp_put_bw",
                         ucx_gbps=gbs_ucx, gbps=r["bw_gbps"], ratio=r["bw_gbps"] / gbs_ucx))
    return rows


def table(rows):
    out = ["| testbed | figure | ucx_perftest p50 | ucx p99 | pyshmem p50 | p99 | max | ratio (p50) |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "gbps" in r:
            out.append(f"| {r['testbed']} | {r['figure']} | {r['ucx_gbps']:.2f} | | {r['gbps']:.2f} | | | "
                       f"{r['ratio']:.2f}x |")
        else:
            out.append(f"| {r['testbed']} | {r['figure']} | {r['ucx_p50_us']:.2f} us | {r['ucx_p99_us']:.2f} | "
                       f"{r['p50_us']:.2f} us | {r['p99_us']:.2f} | {r['max_us']:.0f} | {r['ratio']:.2f}x |")
    return "\n".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=2000, help="pyshmem iterations per latency figure (ucx_perftest: 5x)")
    ap.add_argument("--json", help="also write the rows to this JSON file")
    ap.add_argument("--quick", action="store_true", help="fewer figures (the tests' smoke run)")
    ap.add_argument("--testbed", choices=("both", "hosts", "local"), default="both")
    a = ap.parse_args(argv)
    rows, skipped = [], []
    if a.testbed in ("both", "local"):
        rows += measure(*testbed_local(), a.iters, a.quick)
    if a.testbed in ("both", "hosts"):
        try:
            with netns_hosts.two_hosts() as hosts:
                rows += measure(*testbed_hosts(hosts), a.iters, a.quick)
        except netns_hosts.Unavailable as e:
            skipped.append(f"two hosts: skipped ({e})")
    print(table(rows))
    for line in skipped:
        print(line)
    if a.json:
        Path(a.json).write_text(json.dumps({"rows": rows, "skipped": skipped}, indent=1))


if __name__ == "__main__":
    main()
