"""Starting and stopping a PE, and asking who it is.

The runtime starts on the first call that needs it (as in shmem4py, where importing
the module initialises it); :func:`init` stays available to start it explicitly, for
example to see bootstrap errors at a known place. :func:`finalize` runs at interpreter
exit unless called before. A program started without ``shmemrun`` is a one-PE job.
"""

import atexit
import faulthandler
import operator
import os
import signal
import sys
import threading

from pyshmem._lib import lib
from pyshmem.constants import THREAD, THREAD_MULTIPLE, MAJOR_VERSION, MINOR_VERSION, VENDOR_STRING

_atexit_registered = False
_abnormal_exit = False
_previous_excepthook = None
_under_shmemrun = False  # set at init: shmemrun reports the ordering check's seed itself


def _excepthook(exc_type, exc, tb):
    # An uncaught exception ends this PE. The collective finalize at exit would wait in
    # a barrier for PEs that may be waiting for this one; skip it so the process exits
    # and the launcher ends the job, naming this PE.
    global _abnormal_exit
    _abnormal_exit = True
    (_previous_excepthook or sys.__excepthook__)(exc_type, exc, tb)
    # Without shmemrun (which prints it for the job) the ordering check's seed is said here.
    seed = order_check_seed()
    if seed and not _under_shmemrun:
        print(f"pyshmem: PE {lib.my_pe()} ran under the ordering check (PYSHMEM_ORDER_CHECK=1) with seed {seed}; "
              f"PYSHMEM_ORDER_CHECK_SEED={seed} replays its choices", file=sys.stderr)


_original_exit = None


def _exit(status=None):
    # sys.exit(nonzero) ends this PE with a failure: as with an uncaught exception, the
    # collective finalize at exit must not wait in a barrier for PEs that may be
    # waiting for this one; the launcher ends the job when this PE's exit code arrives.
    global _abnormal_exit
    if status is not None and status != 0:
        _abnormal_exit = True
    return _original_exit(status)


def _finalize_at_exit():
    # After an uncaught exception or sys.exit(nonzero) this PE is failing: a collective
    # finalize could wait forever for PEs that wait for this one. Exit without it (the
    # OS releases the heap; the launcher sees the failure and ends the other PEs).
    if _abnormal_exit and lib.initialized():
        lib.trace_flush()  # PYSHMEM_TRACE: the timeline up to the failure
    if _abnormal_exit or not lib.initialized():
        return
    try:
        lib.finalize()
    except Exception as exc:  # pragma: no cover - reported, never raised at exit
        print(f"pyshmem: finalize at exit failed: {exc}", file=sys.stderr)


# What a launcher hands one PE for the job (pyshmem/run.py's contract); init reads it.
_JOB_VARS = ("PYSHMEM_PE", "PYSHMEM_NPES", "PYSHMEM_BOOTSTRAP_ADDR", "PYSHMEM_BOOTSTRAP_FD", "PYSHMEM_JOB_SECRET",
             "PYSHMEM_JOB_ID", "PYSHMEM_LAUNCHER")


def init(mpi=None):
    """Start this PE (collective over all PEs of the job).

    Reads the ``PYSHMEM_*`` variables that ``shmemrun`` sets (or those of srun, mpirun,
    torchrun, see the README); without them the program is a single PE. Calling it
    again is a no-op.

    Args:
        mpi: optional mpi4py intracommunicator (pyshmem extension). Its ranks become the
            PEs of one job, PE k = rank k, with MPI carrying only the rendezvous, so a
            program started by ``mpiexec``/``srun`` needs no ``PYSHMEM_*`` settings.
            Collective over ``mpi``.

    Raises:
        BootstrapError: the PEs could not reach or authenticate each other, or (with
            ``mpi``) rank 0 could not open the rendezvous.
        ShmemTimeoutError: not every PE reached the rendezvous in time.
        NotInitializedError: the runtime was already finalized in this process.
        InvalidArgumentError: a ``PYSHMEM_*`` variable has a bad value, or the runtime
            already runs as a job that does not match ``mpi``.
        ShmemTypeError: ``mpi`` is not an mpi4py intracommunicator.
    """
    if lib.initialized():
        if mpi is not None:
            _check_same_job(mpi)
        return
    if mpi is None:
        lib.init()
    else:
        _init_from_mpi(mpi)
    _after_start()


def init_from_environment(env):
    """Starts this PE with the ``PYSHMEM_*`` settings in `env`, a rendezvous another
    launcher's channel carried (bootstrap_store: the torch.distributed backend); a
    no-op when the runtime runs. Collective over the job's PEs. The settings are in
    os.environ only during the C++ init, so child processes do not inherit the secret.

    Raises:
        As :func:`init`.
    """
    if lib.initialized():
        return
    _with_environment(env)
    _after_start()


def _after_start():
    global _atexit_registered, _previous_excepthook
    _install_stack_dump()
    global _under_shmemrun
    _under_shmemrun = os.environ.get("PYSHMEM_LAUNCHER") == "shmemrun"
    # The job's secret and this PE's place in it must not reach child processes: a child
    # that imports pyshmem is a program of its own (a single PE unless launched again).
    for name in _JOB_VARS:
        os.environ.pop(name, None)
    if not _atexit_registered:
        global _original_exit
        atexit.register(_finalize_at_exit)
        if sys.excepthook is not _excepthook:
            _previous_excepthook = sys.excepthook
            sys.excepthook = _excepthook
        if sys.exit is not _exit:
            _original_exit = sys.exit
            sys.exit = _exit
        _atexit_registered = True


def _init_from_mpi(comm):
    from pyshmem import errors
    from pyshmem.bootstrap_mpi import environment_from_comm

    try:
        env = environment_from_comm(comm)
    except TypeError as exc:
        raise errors.ShmemTypeError(f"{where('init')}: {exc}") from None
    except (OSError, ValueError) as exc:
        rank = comm.Get_rank()
        raise errors.BootstrapError(f"pyshmem.init(mpi=...) on rank {rank}: {exc}") from None
    _with_environment(env)


def _with_environment(env):
    # The C++ runtime reads its settings from the environment at init; they are set
    # only for that call, so child processes of this PE do not inherit the secret.
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        lib.init()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _check_same_job(comm):
    if comm.Get_size() != lib.n_pes() or comm.Get_rank() != lib.my_pe():
        from pyshmem.errors import InvalidArgumentError

        raise InvalidArgumentError(
            f"pyshmem.init(mpi=...) on PE {lib.my_pe()}: the runtime already runs as PE {lib.my_pe()} of "
            f"{lib.n_pes()}, but this communicator has rank {comm.Get_rank()} of {comm.Get_size()}; "
            "call init(mpi=comm) before any other pyshmem call")


def _install_stack_dump():
    """Under shmemrun, SIGUSR1 prints this PE's Python stack (faulthandler, every thread):
    shmemrun sends it before --timeout ends the job and when it gets a SIGUSR1 itself,
    and a PE stopped by PYSHMEM_TIMEOUT raises it. A program's own SIGUSR1 handler wins."""
    if os.environ.get("PYSHMEM_LAUNCHER") != "shmemrun":
        return
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGUSR1) not in (signal.SIG_DFL, signal.SIG_IGN, None):
        return
    try:  # the process's real stderr (Jupyter and ipyparallel replace sys.stderr)
        faulthandler.register(signal.SIGUSR1, file=sys.__stderr__, all_threads=True, chain=False)
    except (AttributeError, OSError, ValueError):  # no usable stderr (io.UnsupportedOperation is an OSError)
        pass


def ensure_started(call):
    """Start the runtime if needed, for the public function named ``call``.

    Raises:
        NotInitializedError: the runtime was finalized (names ``call``).
    """
    if lib.initialized():
        return
    if lib.finalized():
        from pyshmem.errors import NotInitializedError

        raise NotInitializedError(
            f"{where(call)}: called after finalize(); the runtime cannot be used again in this process"
        )
    init()


def env_setting(name):
    """The text of environment variable `name` (a row of the one env table,
    csrc/core/env_vars.def): the value the runtime read at init when it was set then,
    else the process environment's now, else "".

    Args:
        name: the variable's full name, e.g. ``"PYSHMEM_CPU_SCHEDULE"``.

    Returns:
        str: its text, stripped.
    """
    row = next((r for r in lib.env_table() if r["name"] == name), None)
    return str((row["value"] if row and row["is_set"] else "") or os.environ.get(name, "")).strip()


def order_check_seed():
    """The seed of the ordering check (``PYSHMEM_ORDER_CHECK=1``,
    docs/memory_model.md) this job runs under.

    Returns:
        str: the seed (decimal), or "" when the check is off or pyshmem is not
        initialised.
    """
    return lib.order_check_seed() if lib.initialized() else ""


def where(call):
    """Names a call and this PE at the start of an error message.

    Args:
        call: the API name, with or without the ``pyshmem.`` prefix (``"put"``,
            ``"pyshmem.cuda.free"``).

    Returns:
        ``"pyshmem.<call> on PE <k>"``; without the PE before init (none is known yet).
    """
    name = call if call.startswith("pyshmem.") else f"pyshmem.{call}"
    return f"{name} on PE {lib.my_pe()}" if lib.initialized() else name


def as_pe(call, pe):
    """Converts a PE argument to int, rejecting non-integers (e.g. 1.5, 'a').

    Raises:
        ShmemTypeError: ``pe`` is not an integer.
    """
    try:
        return operator.index(pe)
    except TypeError:
        from pyshmem.errors import ShmemTypeError

        raise ShmemTypeError(f"{where(call)}: pe must be an integer, not {type(pe).__name__}") from None


def as_int(call, role, value, lo=-2**31, hi=2**31 - 1):
    """Converts an integer argument (a count, a stride, a size ...) to int in [lo, hi].

    Args:
        call: the public call, for the message.
        role: the argument's name.
        value: what the caller passed.
        lo, hi: the accepted range (default: a C int).

    Returns:
        int: the value.

    Raises:
        ShmemTypeError: ``value`` is not an integer (e.g. 1.5, '4', None).
        InvalidArgumentError: it is outside [lo, hi].
    """
    from pyshmem.errors import InvalidArgumentError, ShmemTypeError

    try:
        v = operator.index(value)
    except TypeError:
        raise ShmemTypeError(f"{where(call)}: {role} must be an integer, not {type(value).__name__}") from None
    if v < lo:
        raise InvalidArgumentError(f"{where(call)}: {role} must be >= {lo} (got {v})")
    if v > hi:
        raise InvalidArgumentError(f"{where(call)}: {role}={v} is too large (at most {hi})")
    return v


def as_bool(call, role, value):
    """A flag argument (``clear=``, ``blocking=``): a bool or an integer, as bool.

    Raises:
        ShmemTypeError: anything else (an array, whose truth value is ambiguous, a string ...).
    """
    if isinstance(value, bool) or type(value).__name__ == "bool_":  # NumPy's bool too
        return bool(value)
    try:
        return operator.index(value) != 0
    except TypeError:
        from pyshmem.errors import ShmemTypeError

        raise ShmemTypeError(f"{where(call)}: {role} must be True or False, not {type(value).__name__}") from None


def collective_failed(exc, reject):
    """Raises ``exc`` after ``reject()`` took this PE through the failed collective's
    agreement step, so the other PEs raise too instead of waiting for this one.

    Args:
        exc: the exception this PE raises.
        reject: the compiled core's reject function, already bound to the team/call.
    """
    try:
        reject()
    except Exception:  # noqa: BLE001 - this PE's own error is the one to report
        pass
    raise exc


def finalize():
    """Stop this PE (collective): a barrier, then the symmetric heap is released.

    Symmetric arrays must not be used afterwards, and the runtime cannot be started
    again in this process. Calling it when not initialised is a no-op.
    """
    lib.finalize()


def initialized():
    """Returns True while the runtime is running in this process."""
    return lib.initialized()


def finalized():
    """Returns True once :func:`finalize` has run in this process."""
    return lib.finalized()


def init_thread(requested=THREAD_MULTIPLE):
    """Start the runtime and report the thread level provided.

    Args:
        requested: a :class:`THREAD` level.

    Returns:
        THREAD: always ``THREAD_MULTIPLE``; every one-sided call may come from any
        thread (allocation and collectives must still be called by one thread per PE).
    """
    try:
        THREAD(requested)
    except ValueError:
        from pyshmem.errors import InvalidArgumentError

        raise InvalidArgumentError(
            f"{where('init_thread')}: {requested!r} is not a thread level; use THREAD_SINGLE/FUNNELED/SERIALIZED/MULTIPLE"
        ) from None
    init()
    return THREAD.MULTIPLE


def query_thread():
    """Returns the thread level provided (``THREAD_MULTIPLE``)."""
    return THREAD.MULTIPLE


def global_exit(status=0):
    """End the whole job now with ``status``: this PE exits, the launcher ends the others.

    Args:
        status: exit status of this PE (shmemrun's exit code).
    """
    try:
        status = operator.index(status)
    except TypeError:
        from pyshmem.errors import ShmemTypeError

        raise ShmemTypeError(f"{where('global_exit')}: status must be an integer, not {type(status).__name__}") from None
    sys.stdout.flush()
    sys.stderr.flush()
    lib.global_exit(status & 0xFF if status >= 0 else 1)


def my_pe():
    """Returns this PE's number, 0 .. n_pes()-1. Starts the runtime if needed."""
    ensure_started("my_pe")
    return lib.my_pe()


def n_pes():
    """Returns the number of PEs in the job. Starts the runtime if needed."""
    ensure_started("n_pes")
    return lib.n_pes()


def pe_accessible(pe):
    """Returns True when PE ``pe`` exists and can be reached by this PE.

    Args:
        pe: a PE number (any int; out-of-range PEs are simply not accessible).
    """
    pe = as_pe("pe_accessible", pe)
    ensure_started("pe_accessible")
    return 0 <= pe < lib.n_pes() and bool(lib.pe_accessible(pe))


def info_get_version():
    """Returns the OpenSHMEM specification version implemented, ``(major, minor)``."""
    return (MAJOR_VERSION, MINOR_VERSION)


def info_get_name():
    """Returns the vendor string, ``"pyshmem"``."""
    return VENDOR_STRING


lib._set_auto_init(init)

__all__ = [
    "init", "finalize", "initialized", "finalized", "init_thread", "query_thread", "global_exit",
    "my_pe", "n_pes", "pe_accessible", "info_get_version", "info_get_name",
]
