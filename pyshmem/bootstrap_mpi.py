"""Bootstrapping a pyshmem job through an MPI communicator the program already has.

``pyshmem.init(mpi=comm)`` makes the ranks of ``comm`` the PEs of one job (PE k = rank
k of ``comm``). MPI only carries the rendezvous: rank 0 opens the listening socket of
the usual TCP bootstrap, draws the job's secret, and broadcasts address, secret and job
id as a fixed-size byte buffer (no pickling); then every rank starts through the normal,
authenticated bootstrap. Any mpi4py intracommunicator works, including the result of
``comm.Split`` (each sub-communicator becomes its own job).
"""

import os
import secrets
import socket
import sys

__all__ = ["environment_from_comm"]

_MSG_BYTES = 512  # "addr\njob_secret\njob_id" or "!message" (an error on rank 0)


def _node_names(comm):
    """Returns every rank's node name (``MPI.Get_processor_name``), gathered without pickling."""
    from mpi4py import MPI

    mine = MPI.Get_processor_name().encode()[:255].ljust(256, b"\0")
    out = bytearray(256 * comm.Get_size())
    comm.Allgather([mine, MPI.BYTE], [out, MPI.BYTE])
    return [bytes(out[i:i + 256]).rstrip(b"\0").decode() for i in range(0, len(out), 256)]


def _listen_address(single_node):
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


def _rank0_rendezvous(single_node):
    """Opens rank 0's listening socket; returns (message to broadcast, listening fd)."""
    host, port = _listen_address(single_node)
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
    job_id = f"mpi{secrets.token_hex(6)}"
    return f"{shown}:{port}\n{secrets.token_hex(32)}\n{job_id}", sock.detach()


def environment_from_comm(comm):
    """Collective over ``comm``: the ``PYSHMEM_*`` settings that make its ranks one job.

    Args:
        comm: an mpi4py intracommunicator (e.g. ``MPI.COMM_WORLD`` or a split of it).

    Returns:
        dict: variable name → value, for this rank (PE number, job size, rendezvous
        address, secret, job id; rank 0 also gets its open listening socket's fd).

    Raises:
        TypeError: ``comm`` is not an mpi4py intracommunicator.
        ImportError: mpi4py is not installed.
        OSError, ValueError: rank 0 could not open the rendezvous (raised on every rank).
    """
    wrong = f"mpi= must be an mpi4py intracommunicator such as MPI.COMM_WORLD, not {type(comm).__name__}"
    # A communicator can only exist once mpi4py.MPI was imported; importing it here for
    # a wrong argument would start MPI (a singleton that leaves its segments in /dev/shm)
    # just to reject it.
    if "mpi4py.MPI" not in sys.modules:
        raise TypeError(wrong)
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise ImportError("init(mpi=comm) needs mpi4py (pip install mpi4py, with an MPI library)") from exc
    if not isinstance(comm, MPI.Intracomm):
        raise TypeError(wrong)
    rank, size = comm.Get_rank(), comm.Get_size()
    env = {"PYSHMEM_PE": str(rank), "PYSHMEM_NPES": str(size), "PYSHMEM_LAUNCHER": "mpi4py"}
    if size == 1:
        return env
    single_node = len(set(_node_names(comm))) == 1
    buf = bytearray(_MSG_BYTES)
    listen_fd = None
    if rank == 0:
        try:
            msg, listen_fd = _rank0_rendezvous(single_node)
        except (OSError, ValueError) as exc:
            msg = f"!rank 0 could not open the pyshmem rendezvous: {exc}"
        data = msg.encode()[:_MSG_BYTES]
        buf[:len(data)] = data
    comm.Bcast([buf, MPI.BYTE], root=0)
    text = bytes(buf).rstrip(b"\0").decode()
    if text.startswith("!"):
        raise OSError(text[1:])
    addr, secret, job_id = text.split("\n")
    env.update(PYSHMEM_BOOTSTRAP_ADDR=addr, PYSHMEM_JOB_SECRET=secret, PYSHMEM_JOB_ID=job_id)
    if listen_fd is not None:
        env["PYSHMEM_BOOTSTRAP_FD"] = str(listen_fd)
    return env
