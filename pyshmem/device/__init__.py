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

Under the Numba CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, or ``shmemrun --sim``)
the functions run against the CPU backend with the same results as the host API
(``sim.py``). Without the simulator they are Numba intrinsics calling extern "C"
shims (``gpu.py``, ``_shims.py``): kernels compile to LTO-IR and ``device.link()``
links them with the device library into a cubin, with no GPU needed. Launching on a
GPU needs the CUDA backend, which is not built yet (``device.array`` says so).
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
    from pyshmem.device.gpu import *  # noqa: F401,F403
    from pyshmem.device.gpu import library, link  # noqa: F401

    __all__ += ["library", "link"]

    def array(x):
        """Pass a symmetric array to a GPU kernel launch.

        Raises:
            ShmemNotImplementedError: symmetric GPU memory needs the CUDA backend, which
                is not built yet; run kernels in the simulator (``shmemrun --sim``).
        """
        raise ShmemNotImplementedError(
            "pyshmem.device.array: symmetric GPU arrays need the CUDA backend, which is not built yet; kernels "
            "compile and link (device.link) without it, and run under the Numba CUDA simulator "
            "(NUMBA_ENABLE_CUDASIM=1 before importing numba, or shmemrun --sim)"
        )
