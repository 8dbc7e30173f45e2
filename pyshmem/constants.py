"""Enums and constants, named as in shmem4py (``CMP``, ``SIGNAL``, ``AMO``, ``THREAD`` ...).

Integer values of ``CMP`` and ``SIGNAL`` match OpenSHMEM 1.5 / NVSHMEM; ``AMO`` is a
string enum as in shmem4py.
"""

import enum
import sys

from pyshmem._lib import lib

if sys.version_info >= (3, 11):
    _StrEnum = enum.StrEnum
else:  # pragma: no cover - Python < 3.11

    class _StrEnum(str, enum.Enum):
        def __str__(self):
            return str(self.value)


MAJOR_VERSION, MINOR_VERSION = lib.SPEC_VERSION
VENDOR_STRING = lib.VENDOR_STRING


class CMP(enum.IntEnum):
    """Comparison operators for wait_until/test/signal_wait_until."""

    EQ = lib.CMP_EQ
    NE = lib.CMP_NE
    GT = lib.CMP_GT
    LE = lib.CMP_LE
    LT = lib.CMP_LT
    GE = lib.CMP_GE


CMP_EQ, CMP_NE, CMP_GT, CMP_LE, CMP_LT, CMP_GE = CMP.EQ, CMP.NE, CMP.GT, CMP.LE, CMP.LT, CMP.GE


class SIGNAL(enum.IntEnum):
    """Signal update operators for put_signal."""

    SET = lib.SIGNAL_SET
    ADD = lib.SIGNAL_ADD


SIGNAL_SET, SIGNAL_ADD = SIGNAL.SET, SIGNAL.ADD


class AMO(_StrEnum):
    """Operations for atomic_op / atomic_fetch_op."""

    SET = "set"
    INC = "inc"
    ADD = "add"
    AND = "and"
    OR = "or"
    XOR = "xor"


AMO_SET, AMO_INC, AMO_ADD, AMO_AND, AMO_OR, AMO_XOR = AMO.SET, AMO.INC, AMO.ADD, AMO.AND, AMO.OR, AMO.XOR


class THREAD(enum.IntEnum):
    """Thread support levels (init_thread / query_thread)."""

    SINGLE = 0
    FUNNELED = 1
    SERIALIZED = 2
    MULTIPLE = 3


THREAD_SINGLE, THREAD_FUNNELED, THREAD_SERIALIZED, THREAD_MULTIPLE = (
    THREAD.SINGLE,
    THREAD.FUNNELED,
    THREAD.SERIALIZED,
    THREAD.MULTIPLE,
)


class MALLOC(enum.IntFlag):
    """Allocation hints (accepted; the CPU heap needs none)."""

    ATOMICS_REMOTE = 1
    SIGNAL_REMOTE = 2


MALLOC_ATOMICS_REMOTE, MALLOC_SIGNAL_REMOTE = MALLOC.ATOMICS_REMOTE, MALLOC.SIGNAL_REMOTE


class CTX(enum.IntFlag):
    """Context creation options."""

    PRIVATE = 2
    SERIALIZED = 1
    NOSTORE = 4


CTX_SERIALIZED, CTX_PRIVATE, CTX_NOSTORE = CTX.SERIALIZED, CTX.PRIVATE, CTX.NOSTORE

__all__ = [
    "MAJOR_VERSION", "MINOR_VERSION", "VENDOR_STRING",
    "CMP", "CMP_EQ", "CMP_NE", "CMP_GT", "CMP_LE", "CMP_LT", "CMP_GE",
    "SIGNAL", "SIGNAL_SET", "SIGNAL_ADD",
    "AMO", "AMO_SET", "AMO_INC", "AMO_ADD", "AMO_AND", "AMO_OR", "AMO_XOR",
    "THREAD", "THREAD_SINGLE", "THREAD_FUNNELED", "THREAD_SERIALIZED", "THREAD_MULTIPLE",
    "MALLOC", "MALLOC_ATOMICS_REMOTE", "MALLOC_SIGNAL_REMOTE",
    "CTX", "CTX_SERIALIZED", "CTX_PRIVATE", "CTX_NOSTORE",
]
