"""Exception types raised by pyshmem.

Each class derives from :class:`ShmemError` and from the builtin exception a Python
user would expect (``ValueError``, ``TypeError``, ``MemoryError`` ...), so both
``except ValueError`` and ``except pyshmem.ShmemError`` work. Messages name the call,
the PE and the fix.
"""

from pyshmem._lib import lib

ShmemError = lib.ShmemError
InvalidArgumentError = lib.InvalidArgumentError
ShmemTypeError = lib.ShmemTypeError
HeapExhaustedError = lib.HeapExhaustedError
NotInitializedError = lib.NotInitializedError
BootstrapError = lib.BootstrapError
ShmemOSError = lib.ShmemOSError
ShmemNotImplementedError = lib.ShmemNotImplementedError
ShmemTimeoutError = lib.ShmemTimeoutError
CollectiveMismatchError = lib.CollectiveMismatchError
InternalError = lib.InternalError
ValueOverflowError = lib.ValueOverflowError


class InvalidHandleError(InvalidArgumentError, RuntimeError):
    """A team or context that is ``TEAM_INVALID``/``CTX_INVALID`` or destroyed.

    An :class:`InvalidArgumentError` (so a ``ValueError``) that is also a
    ``RuntimeError``, the class shmem4py raises there (its C call returns an error
    code): ``TEAM_INVALID.n_pes()`` and ``CTX_INVALID.get_team()`` fail as in shmem4py.
    """

    __module__ = "pyshmem"


class KernelError(ShmemError, RuntimeError):
    """A CUDA C++ kernel run on the CPU (``pyshmem.cuda.launch``) went wrong in a way a
    GPU would turn into a hang or undefined behaviour: a block whose threads wait at a
    ``__syncthreads`` that some thread never reaches, or a misused intrinsic. Also a
    Numba kernel under the CUDA simulator (``shmemrun --sim``) whose device-API wait
    only a later block of the same launch could end (the simulator runs blocks one
    after another). The message names the kernel, the block, the threads and the PE.
    """

    __module__ = "pyshmem"


__all__ = [
    "ShmemError",
    "InvalidArgumentError",
    "ShmemTypeError",
    "HeapExhaustedError",
    "NotInitializedError",
    "BootstrapError",
    "ShmemOSError",
    "ShmemNotImplementedError",
    "ShmemTimeoutError",
    "CollectiveMismatchError",
    "InternalError",
    "ValueOverflowError",
    "InvalidHandleError",
    "KernelError",
]
