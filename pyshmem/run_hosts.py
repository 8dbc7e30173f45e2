"""Multi-host placement for ``shmemrun --hosts h1:4,h2:4 [--rsh TEMPLATE]``.

PEs are placed in order: the first ``slots`` PEs on the first host, and so on. A PE on
``localhost`` is started directly; a PE on any other host through the remote-start
template (``--rsh``), e.g. ``ssh -o BatchMode=yes {host} {cmd}`` (the default) or
``ip netns exec {host}`` for network namespaces. ``{host}`` is replaced by the host
name; ``{cmd}``, when present, by the PE's command as one shell-quoted string (what ssh
expects), otherwise the command is appended as separate arguments (what ``ip netns
exec``, ``srun``-like wrappers and ``env`` expect).

The remote PE's command is ``sh -c 'read the job secret from stdin; cd; exec env
PYSHMEM_...=... prog args'``: the secret never appears on a command line (which other
users of a host can read in the process table); the launcher writes it to the PE's
stdin. PE 0 listens on ``--bind``:port itself (its host must own that address); the
launcher picks the port, so a port taken in between makes PE 0 fail with "address in
use" (run again).
"""

from __future__ import annotations

import os
import secrets
import shlex

LOCAL_HOSTS = ("localhost", "127.0.0.1")
DEFAULT_RSH = "ssh -o BatchMode=yes {host} {cmd}"


def parse_hosts(spec: str) -> list[tuple[str, int]]:
    """``"h1:4,h2:2"`` -> ``[("h1", 4), ("h2", 2)]``; a host without ``:n`` has 1 slot.

    Raises:
        ValueError: an empty or malformed entry, or a slot count < 1.
    """
    hosts = []
    for item in spec.split(","):
        name, _, slots = item.strip().partition(":")
        if not name or (slots and not slots.isdigit()) or (slots and int(slots) < 1):
            raise ValueError(f"--hosts entry {item!r}: expected HOST or HOST:SLOTS with SLOTS >= 1")
        if any(c.isspace() or c in "'\"{}" for c in name):
            raise ValueError(f"--hosts entry {item!r}: host names cannot contain spaces, quotes or braces")
        hosts.append((name, int(slots or 1)))
    return hosts


def placement(spec: str, npes: int) -> list[str]:
    """The host of each PE (PEs fill hosts in order).

    Raises:
        ValueError: more PEs than slots, or a malformed spec.
    """
    hosts = parse_hosts(spec)
    slots = [name for name, n in hosts for _ in range(n)]
    if npes > len(slots):
        raise ValueError(f"-n {npes} but --hosts {spec!r} has only {len(slots)} slot(s)")
    return slots[:npes]


def rendezvous_port() -> int:
    """A port for PE 0 to listen on (it binds it itself on a possibly remote host)."""
    return 20000 + secrets.randbelow(30000)


def remote_argv(template: str, host: str, env: dict[str, str], argv: list[str]) -> list[str]:
    """The command that starts one PE on `host` through `template`.

    `env` holds the variables the PE needs (never the job secret, which it reads from
    stdin). Raises ValueError for a template without ``{host}``.
    """
    tokens = shlex.split(template)
    if not any("{host}" in t for t in tokens):
        raise ValueError(f"--rsh {template!r} must contain {{host}}")
    assigns = [f"{k}={v}" for k, v in sorted(env.items())]
    script = ("IFS= read -r PYSHMEM_JOB_SECRET && export PYSHMEM_JOB_SECRET && cd " + shlex.quote(os.getcwd())
              + " && exec env " + shlex.join(assigns + argv))
    command = ["sh", "-c", script]
    out = []
    for t in tokens:
        if t == "{cmd}":
            out.append(shlex.join(command))
        else:
            out.append(t.replace("{host}", host))
    return out if "{cmd}" in tokens else out + command


def forwarded_env(pe_env: dict[str, str], exports: dict[str, str]) -> dict[str, str]:
    """What a remote PE must be told explicitly (ssh does not carry the environment):
    every PYSHMEM_* variable but the secret, PYTHONUNBUFFERED, and the -x exports."""
    out = {k: v for k, v in pe_env.items()
           if (k.startswith("PYSHMEM_") or k == "PYTHONUNBUFFERED") and k != "PYSHMEM_JOB_SECRET"}
    out.update(exports)
    return out


__all__ = ["DEFAULT_RSH", "LOCAL_HOSTS", "parse_hosts", "placement", "rendezvous_port", "remote_argv",
           "forwarded_env"]
