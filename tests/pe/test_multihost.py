"""shmemrun --hosts across two "hosts": network namespaces joined by a veth pair.

Needs root and `ip netns` (CI machines have both); skipped with the reason otherwise.
PEs on one namespace share memory; between namespaces pyshmem sees different nodes and
goes through UCX. The namespaces are removed even when the test fails.

The namespaces share the host name, the PID namespace and /dev/shm, so UCX left to
choose (no UCX_TLS) reaches the other "host" through its shared-memory transports
(sysv/posix active messages, cma for RMA) as well as tcp; pyshmem must work either way,
so the operations test runs both with UCX_TLS forced to tcp and with UCX's own choice.
"""

import os
import re
import subprocess
import sys
import time

import pytest

from conftest import PROGRAMS, REPO, ucx_unavailable
from latency_bounds import assert_within

sys.path.insert(0, str(REPO / "benchmarks"))
import netns_hosts  # noqa: E402  (benchmarks/netns_hosts.py: shared with bench_ucx_hosts.py)

sys.path.pop(0)
NET_DEV = netns_hosts.NET_DEV


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=check)


@pytest.fixture
def two_hosts():
    try:
        with netns_hosts.two_hosts() as hosts:
            yield hosts
    except netns_hosts.Unavailable as e:
        pytest.skip(str(e))


TCP = "tcp,self"  # UCX_TLS forcing the network path; None: UCX chooses its transports itself


def _across(two_hosts, per_host, program, timeout="90", tls=TCP, **extra_env):
    """Returns (argv, env) that run `program` under shmemrun --hosts, per_host PEs on each namespace.

    tls: UCX_TLS for every PE, or None to leave the choice to UCX.
    """
    a, b = two_hosts["hosts"]
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", PYSHMEM_SYMMETRIC_SIZE="32M",
               UCX_NET_DEVICES=NET_DEV, UCX_WARN_UNUSED_ENV_VARS="n", **extra_env)
    env.pop("UCX_TLS", None)
    if tls is not None:
        env["UCX_TLS"] = tls
    names = ("UCX_TLS",) * (tls is not None) + ("UCX_NET_DEVICES", *extra_env)
    forwarded = [arg for name in names for arg in ("-x", name)]
    cmd = [sys.executable, "-m", "pyshmem.run", "--hosts", f"{a}:{per_host},{b}:{per_host}",
           "--rsh", "ip netns exec {host}", "--bind", two_hosts["bind"], "--timeout", timeout, "--tag-output",
           *forwarded, sys.executable, str(PROGRAMS / program)]
    return cmd, env

@pytest.mark.parametrize("tls", [TCP, None], ids=["tcp", "ucx-choice"])
@pytest.mark.parametrize("per_host", [1, 2])
def test_put_get_atomics_signals_barrier_across_two_hosts(two_hosts, per_host, tls):
    why = ucx_unavailable()
    if why:
        pytest.skip(why)
    cmd, env = _across(two_hosts, per_host, "multihost_ops.py", tls=tls, TEST_PES_PER_HOST=str(per_host),
                       PYSHMEM_TIMEOUT="30")  # a lost arrival ends with the hang report, not the job timeout
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=str(REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    n = 2 * per_host
    for pe in range(n):
        assert f"[pe {pe}] OK pe={pe} host={pe // per_host}" in proc.stdout, out


def test_hosts_spec_errors():
    from pyshmem import run_hosts

    assert run_hosts.placement("a:2,b", 3) == ["a", "a", "b"]
    with pytest.raises(ValueError, match="only 3 slot"):
        run_hosts.placement("a:2,b", 4)
    with pytest.raises(ValueError, match="HOST:SLOTS with SLOTS >= 1"):
        run_hosts.parse_hosts("a:0")
    with pytest.raises(ValueError, match="must contain {host}"):
        run_hosts.remote_argv("ssh", "a", {}, ["prog"])
    argv = run_hosts.remote_argv("ssh -o BatchMode=yes {host} {cmd}", "h1", {"PYSHMEM_PE": "3"}, ["python", "x y"])
    assert argv[:3] == ["ssh", "-o", "BatchMode=yes"] and argv[3] == "h1" and len(argv) == 5
    assert "read -r PYSHMEM_JOB_SECRET" in argv[4] and "PYSHMEM_PE=3" in argv[4] and "'x y'" in argv[4]
    netns = run_hosts.remote_argv("ip netns exec {host}", "ns1", {}, ["prog"])
    assert netns[:4] == ["ip", "netns", "exec", "ns1"] and netns[4:6] == ["sh", "-c"]
    assert not any("SECRET=" in a for a in argv + netns)  # the secret goes through stdin only


@pytest.mark.parametrize("tls", [TCP, None], ids=["tcp", "ucx-choice"])
def test_pe_killed_on_the_other_host_ends_the_job(two_hosts, tls):
    why = ucx_unavailable()
    if why:
        pytest.skip(why)
    cmd, env = _across(two_hosts, 2, "multihost_kill.py", timeout="60", tls=tls)
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, env=env, cwd=str(REPO))
    took = time.monotonic() - start
    out = proc.stdout + proc.stderr
    assert proc.returncode == 128 + 9, out
    assert "PE 3 was killed by signal SIGKILL" in proc.stderr, out
    assert "UNEXPECTED" not in out
    print(f"the job took {took:.2f} s")
    assert_within("multihost_kill", took, out, cap=60)  # cap: the job's --timeout


@pytest.mark.parametrize("op", ["put", "get", "fetch_add"])
def test_link_down_mid_transfer_ends_with_an_error_naming_the_peer(two_hosts, op):
    # put + quiet, and get and fetch_add, which wait for the peer's answer: each ends with
    # PYSHMEM_TRANSPORT_TIMEOUT's error, none hangs.
    # UCX_TLS stays forced to tcp: UCX's own choice would move the data through shared
    # memory, which taking the veth link down does not cut.
    why = ucx_unavailable()
    if why:
        pytest.skip(why)
    b = two_hosts["hosts"][1]
    cmd, env = _across(two_hosts, 1, "multihost_linkdown.py", timeout="60", PYSHMEM_TRANSPORT_TIMEOUT="3",
                       TEST_LINKDOWN_OP=op)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(REPO))
    try:
        started = set()
        deadline = time.monotonic() + 60
        while len(started) < 2 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if "TRANSFERRING" in line:
                started.add(line.strip())
        assert len(started) == 2, f"the PEs did not start streaming: {started}"
        _ip("-n", b, "link", "set", NET_DEV, "down")
        down_at = time.monotonic()
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - down_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    text = out + err
    assert proc.returncode != 0, text
    assert "did not complete within PYSHMEM_TRANSPORT_TIMEOUT" in err, text
    # The transport's error names the API call that reached it, the PE and the peer.
    assert re.search(r"pyshmem\.\w+ on PE (1: UCX: .* toward PE 0|0: UCX: .* toward PE 1)", err), text
    assert "UNEXPECTED" not in text
    print(f"the job ended {took:.2f} s after the link went down")
    # cap: the job's --timeout
    assert_within("multihost_linkdown", took, "the job took that long to end after the link went down\n" + text,
                  cap=60)


def test_a_dozing_proxy_wakes_for_a_kernel_request_and_for_an_arrival(two_hosts):
    # Each proxy dozes up to 20 s here (PYSHMEM_PROXY_IDLE_SLEEP_MAX_US), seconds by the
    # time the operations come: a proxy woken only by its timer would take over a second
    # for each (tests/pe/programs/multihost_proxy_wake.py says why); the ring's doorbell
    # and UCX's event fd wake it in milliseconds.
    why = ucx_unavailable()
    if why:
        pytest.skip(why)
    cmd, env = _across(two_hosts, 1, "multihost_proxy_wake.py", timeout="90",
                       PYSHMEM_PROXY_IDLE_SLEEP_MAX_US="20000000")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env, cwd=str(REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "[pe 0] OK pe=0" in proc.stdout and "[pe 1] OK pe=1" in proc.stdout, out
    m = re.search(r"WAKE kernel=([0-9.]+) host=([0-9.]+)", proc.stdout)
    assert m, out
    print(f"kernel request {m.group(1)} s, host atomic {m.group(2)} s after the quiet period")
    # cap: well under the >= 1.5 s that a proxy waiting out its doze would take
    assert_within("proxy_wake", float(m.group(1)), "the kernel's fetch_add after the proxies dozed\n" + out, cap=0.5)
    assert_within("proxy_wake", float(m.group(2)), "the host's fetch_add after PE 1's proxy dozed\n" + out, cap=0.5)


@pytest.mark.parametrize("tls", [TCP, None], ids=["tcp", "ucx-choice"])
def test_cpu_kernels_device_api_across_two_hosts(two_hosts, tls):
    # The device API's CPU build through each PE's proxy to the other host: contended
    # fetch-adds from every block, put/get, a device barrier (tests/pe/programs/cpu_kernels.py).
    why = ucx_unavailable()
    if why:
        pytest.skip(why)
    cmd, env = _across(two_hosts, 1, "cpu_kernels.py", timeout="150", tls=tls, PYSHMEM_TIMEOUT="60")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=200, env=env, cwd=str(REPO))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "[pe 0] OK pe=0" in proc.stdout and "[pe 1] OK pe=1" in proc.stdout, out
