"""Bootstrapping a pyshmem job through an MPI communicator the program already has.

``pyshmem.init(mpi=comm)`` makes the ranks of ``comm`` the PEs of one job (PE k = rank
k of ``comm``). MPI only carries the rendezvous: rank 0 opens the listening socket of
the usual TCP bootstrap, draws the job's secret, and broadcasts address, secret and job
id as a fixed-size byte buffer (no pickling); then every rank starts through the normal,
authenticated bootstrap. Any mpi4py intracommunicator works, including the result of
``comm.Split`` (each sub-communicator becomes its own job).
"""

import sys

from pyshmem.bootstrap_rendezvous import rank0_message, settings_from_message

__all__ = ["environment_from_comm"]

_MSG_BYTES = 512  # "addr\njob_secret\njob_id" or "!message" (an error on rank 0)


def _node_names(comm):
    """Returns every rank's node name (``MPI.Get_processor_name``), gathered without pickling."""
    from mpi4py import MPI

    mine = MPI.Get_processor_name().encode()[:255].ljust(256, b"\0")
    out = bytearray(256 * comm.Get_size())
    comm.Allgather([mine, MPI.BYTE], [out, MPI.BYTE])
    return [bytes(out[i:i + 256]).rstrip(b"\0").decode() for i in range(0, len(out), 256)]


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
        msg, listen_fd = rank0_message(single_node, "mpi")
        data = msg.encode()[:_MSG_BYTES]
        buf[:len(data)] = data
    comm.Bcast([buf, MPI.BYTE], root=0)
    return settings_from_message(env, bytes(buf).rstrip(b"\0").decode(), listen_fd)
