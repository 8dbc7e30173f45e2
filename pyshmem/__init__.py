"""pyshmem: an NVSHMEM-like PGAS runtime for Python, shmem4py-compatible on the host.

Every process is a PE; symmetric arrays (``pyshmem.zeros(...)`` ...) live at the same
offset on every PE, and one-sided ``put``/``get``/atomics/signals move data between
them. Start N PEs with ``shmemrun -n N python prog.py``; a program started without a
launcher is a single PE. ``import pyshmem as shmem`` runs shmem4py programs.
"""

from pyshmem.errors import *  # noqa: F401,F403
from pyshmem.constants import *  # noqa: F401,F403
from pyshmem.runtime import *  # noqa: F401,F403
from pyshmem.memory import *  # noqa: F401,F403
from pyshmem.rma import *  # noqa: F401,F403
from pyshmem.amo import *  # noqa: F401,F403
from pyshmem.signal import *  # noqa: F401,F403
from pyshmem.waits import *  # noqa: F401,F403
from pyshmem.lock import *  # noqa: F401,F403
from pyshmem.team import *  # noqa: F401,F403
from pyshmem.collective import *  # noqa: F401,F403
from pyshmem.profiling import *  # noqa: F401,F403
from pyshmem import errors, constants, runtime, memory, rma, amo, signal, waits, lock, team, collective, profiling

__all__ = (
    errors.__all__ + constants.__all__ + runtime.__all__ + memory.__all__ + rma.__all__
    + amo.__all__ + signal.__all__ + waits.__all__ + lock.__all__ + team.__all__ + collective.__all__
    + profiling.__all__
)

__version__ = "0.1.0"

# A wrong argument list of a Python-level function raises ShmemTypeError (pyshmem/_arity.py).
from pyshmem._arity import wrap_public as _wrap_public  # noqa: E402

_wrap_public(globals(), __all__, (Team, Ctx, Lock))  # noqa: F405
del _wrap_public

# Submodules are imported for their names above; the module objects themselves are not
# part of the API.
del errors, constants, runtime, memory, rma, amo, signal, waits, lock, team, collective, profiling


def load_ipython_extension(ipython):
    """``%load_ext pyshmem`` in IPython/Jupyter: the %shmem_start, %%shmem and %shmem_stop
    magics of :mod:`pyshmem.notebook` (N PEs behind a notebook, on ipyparallel)."""
    from pyshmem.notebook import load_ipython_extension as load

    load(ipython)
