"""Rank 0's side of a rendezvous that another launcher's channel carries (an MPI
communicator: bootstrap_mpi.py; a torch.distributed store: bootstrap_store.py): the
listening socket of pyshmem's TCP bootstrap, the job's secret and its id.
"""

import os
import secrets
import socket

__all__ = ["listen_address", "rank0_rendezvous", "rank0_message", "settings_from_message"]


def listen_address(single_node):
    """Returns (host, port) rank 0 should listen on, honouring PYSHMEM_BOOTSTRAP_ADDR."""
    given = os.environ.get("PYSHMEM_BOOTSTRAP_ADDR", "")
    if given:
        host, _, port = given.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"PYSHMEM_BOOTSTRAP_ADDR={given!r} must be host:port (port 0 picks a free one)")
        return host.strip("[]"), int(port)
    if single_node:
        return "127.0.0.1", 0
    host = socket.gethostname()
    addr = socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    if addr.startswith("127."):
        raise ValueError(
            f"the ranks run on several nodes but this node's name {host!r} resolves to the loopback address "
            f"{addr}; set PYSHMEM_BOOTSTRAP_ADDR=<an address of rank 0's node that the others reach>:0")
    return addr, 0


def rank0_rendezvous(single_node, job_kind):
    """Opens rank 0's listening socket; returns (message to broadcast, listening fd).

    The message is "address\\njob_secret\\njob_id" (the job id starts with `job_kind`)."""
    host, port = listen_address(single_node)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((host, port))
        sock.listen(128)
        port = sock.getsockname()[1]
    except OSError:
        sock.close()
        raise
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    job_id = f"{job_kind}{secrets.token_hex(6)}"
    return f"{shown}:{port}\n{secrets.token_hex(32)}\n{job_id}", sock.detach()


def rank0_message(single_node, job_kind):
    """(message, listening fd or None): rank0_rendezvous's, or "!why" when it failed (so
    that every rank raises, not rank 0 alone)."""
    try:
        return rank0_rendezvous(single_node, job_kind)
    except (OSError, ValueError) as exc:
        return f"!rank 0 could not open the pyshmem rendezvous: {exc}", None


def settings_from_message(env, text, listen_fd):
    """Adds the rendezvous in `text` (rank0_message's) to `env` and returns it.

    Raises:
        OSError: `text` says rank 0 could not open the rendezvous.
    """
    if text.startswith("!"):
        raise OSError(text[1:])
    addr, secret, job_id = text.split("\n")
    env.update(PYSHMEM_BOOTSTRAP_ADDR=addr, PYSHMEM_JOB_SECRET=secret, PYSHMEM_JOB_ID=job_id)
    if listen_fd is not None:
        env["PYSHMEM_BOOTSTRAP_FD"] = str(listen_fd)
    return env
