"""Two "hosts" on one machine: network namespaces joined by a veth pair.

Used by tests/pe/test_multihost.py and benchmarks/bench_ucx_hosts.py. Needs root and
iproute2 (`ip netns`). PEs on one namespace share memory; between the namespaces pyshmem
sees different nodes and goes through UCX (with UCX_TLS=tcp and UCX_NET_DEVICES=NET_DEV:
over the veth pair). The namespaces share the host name, the PID namespace and
/dev/shm, so UCX left to choose its transports may also use shared memory between them.
"""

import contextlib
import os
import secrets
import shutil
import subprocess
import time

NET_DEV = "pshveth0"  # the same name on both "hosts", so one UCX_NET_DEVICES serves every PE


class Unavailable(RuntimeError):
    """Network namespaces cannot be made here (the message says why)."""


def _ip(*args, check=True):
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=check)


def unavailable():
    """Why two hosts cannot be made here, or None."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        return "needs root and iproute2 (ip netns) to make two network namespaces"
    return None


@contextlib.contextmanager
def two_hosts():
    """Makes two namespaces joined by a veth pair and removes them on exit (also when the
    body fails).

    Yields:
        dict: ``hosts`` (the two namespace names), ``addrs`` (their IPv4 addresses on the
        veth pair), ``bind`` (the first one: where shmemrun's bootstrap listens).

    Raises:
        Unavailable: not root, no iproute2, or ``ip netns add`` refused.
    """
    why = unavailable()
    if why:
        raise Unavailable(why)
    tag = secrets.token_hex(3)
    a, b = f"pshA{tag}", f"pshB{tag}"
    subnet = f"10.{100 + secrets.randbelow(100)}.{secrets.randbelow(250)}"
    made = []
    try:
        for ns in (a, b):
            if _ip("netns", "add", ns, check=False).returncode != 0:
                raise Unavailable("ip netns add is not permitted here")
            made.append(ns)
            _ip("-n", ns, "link", "set", "lo", "up")
        _ip("link", "add", f"v{tag}a", "netns", a, "type", "veth", "peer", "name", f"v{tag}b", "netns", b)
        for ns, dev, host in ((a, f"v{tag}a", 1), (b, f"v{tag}b", 2)):
            _ip("-n", ns, "link", "set", dev, "name", NET_DEV)
            _ip("-n", ns, "addr", "add", f"{subnet}.{host}/24", "dev", NET_DEV)
            _ip("-n", ns, "link", "set", NET_DEV, "up")
        deadline = time.monotonic() + 10  # UCX lists only interfaces that are up and running
        while not all("state UP" in _ip("-n", ns, "link", "show", NET_DEV).stdout for ns in (a, b)):
            if time.monotonic() > deadline:
                raise RuntimeError("the veth pair did not come up")
            time.sleep(0.05)
        yield {"hosts": (a, b), "addrs": (f"{subnet}.1", f"{subnet}.2"), "bind": f"{subnet}.1"}
    finally:
        for ns in made:  # deleting a namespace also removes its end of the veth pair
            _ip("netns", "del", ns, check=False)
