"""pyshmem.device: the device API for Numba CUDA kernels.

Inside a ``@numba.cuda.jit`` kernel::

    from pyshmem import device

    @cuda.jit
    def ring(dest, src, sig):
        if cuda.threadIdx.x == 0:
            me, n = device.my_pe(), device.n_pes()
            device.put_signal_nbi(dest, src, sig, 1, pyshmem.SIGNAL_SET, (me + 1) % n)
            device.signal_wait_until(sig, pyshmem.CMP_EQ, 1)

    ring[1, 32](device.array(x), device.array(y), device.array(s))

Every function of the table in ``pyshmem/device/_table.py`` is available, with
``_warp``/``_block`` variants for the cooperative ones. Team arguments are the int
handles ``int(team)`` (``device.TEAM_WORLD``/``TEAM_SHARED`` for the predefined teams). ``device.array(x)`` passes a
symmetric array to a launch without a copy; use it on every symmetric argument.

Under the Numba CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, or ``shmemrun --sim``)
the functions run against the CPU backend with the same results as the host API
(``sim.py``). Without the simulator they are Numba intrinsics calling extern "C"
shims (``gpu.py``, ``_shims.py``): kernels compile to LTO-IR and ``device.link()``
links them with the device library into a cubin, with no GPU needed. On a GPU (cuda
backend), kernels link ``device.linkable()`` (``@cuda.jit(link=[device.linkable()])``),
whose setup callback uploads the PE's device state when Numba loads the module.

One idiom for both: make kernel arrays with ``device.zeros``/``device.empty`` (symmetric
GPU arrays on a GPU, symmetric host arrays under the simulator, ready to pass to a
launch) or wrap symmetric arrays with ``device.array``.
"""

from pyshmem.device._table import OPS, all_names

try:
    from numba import config as _numba_config
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "pyshmem.device needs Numba's CUDA target: pip install 'pyshmem[numba]' (numba-cuda[cu13])"
    ) from exc

SIMULATOR = bool(_numba_config.ENABLE_CUDASIM)

# Team handles as kernels take them (ints): int(team) of any pyshmem.Team.
TEAM_WORLD, TEAM_SHARED, TEAM_INVALID = 0, 1, -1

__all__ = ["array", "SIMULATOR", "OPS", "TEAM_WORLD", "TEAM_SHARED", "TEAM_INVALID"] + all_names()

if SIMULATOR:
    from pyshmem.device.sim import *  # noqa: F401,F403
    from pyshmem.device.sim import array  # noqa: F401
else:
    from pyshmem.device.gpu import *  # noqa: F401,F403
    from pyshmem.device.gpu import library, link, linkable  # noqa: F401

    __all__ += ["library", "link", "linkable"]

    def array(x):
        """Pass a symmetric GPU array (``pyshmem.cuda.empty/zeros``) to a kernel launch.

        Returns:
            numba.cuda device array: a view of the same GPU memory (no copy).

        Raises:
            InvalidArgumentError: `x` is host memory (a NumPy symmetric array): GPU kernels
                need GPU memory; use ``pyshmem.cuda.zeros`` or ``device.zeros``.
        """
        from numba import cuda

        from pyshmem.errors import InvalidArgumentError
        from pyshmem.runtime import where

        if not hasattr(x, "__cuda_array_interface__"):
            raise InvalidArgumentError(
                f"{where('device.array')}: this is host memory; GPU kernels need symmetric GPU arrays "
                "(pyshmem.cuda.zeros / pyshmem.device.zeros), or run under the Numba CUDA simulator "
                "(shmemrun --sim) to use host arrays")
        return cuda.as_cuda_array(x)


def empty(shape, dtype=float):
    """Collective: a symmetric array ready to pass to a kernel (GPU memory on a GPU,
    host memory under the simulator). See ``pyshmem.cuda.empty`` / ``pyshmem.empty``."""
    if SIMULATOR:
        import pyshmem

        return array(pyshmem.empty(shape, dtype))
    import pyshmem.cuda

    return array(pyshmem.cuda.empty(shape, dtype))


def zeros(shape, dtype=float):
    """Collective: like :func:`empty`, filled with zeros."""
    if SIMULATOR:
        import pyshmem

        return array(pyshmem.zeros(shape, dtype))
    import pyshmem.cuda

    return array(pyshmem.cuda.zeros(shape, dtype))


__all__ += ["empty", "zeros"]
