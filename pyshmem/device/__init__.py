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
``_warp``/``_block`` variants for the cooperative ones. ``device.array(x)`` passes a
symmetric array to a launch without a copy; use it on every symmetric argument.

Today the functions run under the Numba CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``,
or ``shmemrun --sim``) against the CPU backend, with the same results as the host
API. The GPU path (extern "C" shims linked as LTO-IR) is not built yet: without the
simulator, using these functions raises ``ShmemNotImplementedError``.
"""

from pyshmem.device._table import OPS, all_names
from pyshmem.errors import ShmemNotImplementedError

try:
    from numba import config as _numba_config
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "pyshmem.device needs Numba's CUDA target: pip install 'pyshmem[numba]' (numba-cuda[cu13])"
    ) from exc

SIMULATOR = bool(_numba_config.ENABLE_CUDASIM)

__all__ = ["array", "SIMULATOR", "OPS"] + all_names()

if SIMULATOR:
    from pyshmem.device.sim import *  # noqa: F401,F403
    from pyshmem.device.sim import array  # noqa: F401
else:

    def __getattr__(name):
        if name == "array" or name in all_names():
            raise ShmemNotImplementedError(
                f"pyshmem.device.{name}: the GPU path of the Numba device API is not built yet; run kernels "
                "under the Numba CUDA simulator (NUMBA_ENABLE_CUDASIM=1 before importing numba, or shmemrun --sim)"
            )
        raise AttributeError(f"module 'pyshmem.device' has no attribute {name!r}")
