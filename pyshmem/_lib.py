"""The one place that imports the compiled core, ``pyshmem._C``.

Every other module goes through ``lib`` so that a missing or broken build fails here
with one clear message instead of at a random import.
"""

import importlib.util
import os
from pathlib import Path


def _wheel_ucx_library():
    """The libucx wheel's libucp, or None when that wheel is not installed."""
    try:
        spec = importlib.util.find_spec("libucx")  # locates the package without importing it
    except (ImportError, ValueError):
        return None
    if spec is not None and spec.origin:
        path = Path(spec.origin).parent / "lib" / "libucp.so.0"
        if path.is_file():
            return str(path)
    return None


# PYSHMEM_UCX_LIBRARY defaults to the wheel's libucp (when unset), so the core and every
# PE shmemrun starts (which inherit the environment) load that UCX. `info` tells this
# default apart from a value the user set.
UCX_WHEEL_LIBRARY = _wheel_ucx_library()
if UCX_WHEEL_LIBRARY and not os.environ.get("PYSHMEM_UCX_LIBRARY"):
    os.environ["PYSHMEM_UCX_LIBRARY"] = UCX_WHEEL_LIBRARY

try:
    from pyshmem import _C as lib
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "pyshmem's compiled core (pyshmem._C) is missing or failed to load: "
        f"{exc}. Reinstall with `pip install -e .` from the source tree (it builds the "
        "extension with CMake), or `pip install pyshmem`."
    ) from exc

__all__ = ["lib", "UCX_WHEEL_LIBRARY"]
