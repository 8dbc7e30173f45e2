"""Bootstrapping a pyshmem job through a torch.distributed store (the key-value store
torchrun or ``init_process_group`` set up), for the ``pyshmem`` backend.

Like ``init(mpi=comm)`` (bootstrap_mpi.py), the store carries only the rendezvous:
every rank publishes its host name, rank 0 opens the listening socket of the TCP
bootstrap and publishes address, secret and job id, and every rank then starts through
the normal, authenticated bootstrap. The store is the job's trust boundary here, as it
is for torch itself (a c10d TCPStore does not authenticate its clients); the secret is
deleted from it once every PE has started.
"""

import socket

from pyshmem.bootstrap_rendezvous import rank0_message, settings_from_message

__all__ = ["environment_from_store", "forget_secret"]

_PREFIX = "pyshmem/bootstrap/"


def _text(value):
    return value.decode() if isinstance(value, (bytes, bytearray)) else str(value)


def environment_from_store(store, rank, size):
    """The ``PYSHMEM_*`` settings that make the store's ranks one job (collective).

    Args:
        store: a ``torch.distributed.Store`` every rank shares (blocking ``get``).
        rank, size: this rank and the number of ranks.

    Returns:
        dict: variable name -> value for this rank (rank 0 also gets its listening fd).

    Raises:
        OSError: rank 0 could not open the rendezvous (raised on every rank).
        RuntimeError: the store timed out waiting for a rank (torch's error).
    """
    env = {"PYSHMEM_PE": str(rank), "PYSHMEM_NPES": str(size), "PYSHMEM_LAUNCHER": "torch.distributed"}
    if size == 1:
        return env
    store.set(f"{_PREFIX}host/{rank}", socket.gethostname())
    hosts = {_text(store.get(f"{_PREFIX}host/{r}")) for r in range(size)}
    listen_fd = None
    if rank == 0:
        msg, listen_fd = rank0_message(len(hosts) == 1, "torch")
        store.set(f"{_PREFIX}rendezvous", msg)
    return settings_from_message(env, _text(store.get(f"{_PREFIX}rendezvous")), listen_fd)


def forget_secret(store, rank, size):
    """Removes the rendezvous from the store (rank 0, once every PE has started)."""
    if rank == 0 and size > 1:
        store.delete_key(f"{_PREFIX}rendezvous")
