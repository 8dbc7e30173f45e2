"""The one place that imports the compiled core, ``pyshmem._C``.

Every other module goes through ``lib`` so that a missing or broken build fails here
with one clear message instead of at a random import.
"""

import importlib.util
import os
from pathlib import Path


def _default_ucx_library():
    """Points PYSHMEM_UCX_LIBRARY at the libucx wheel's libucp (when unset), so the core
    and every PE shmemrun starts (which inherit the environment) load that UCX."""
    if os.environ.get("PYSHMEM_UCX_LIBRARY"):
        return
    try:
        spec = importlib.util.find_spec("libucx")  # locates the package without importing it
    except (ImportError, ValueError):
        return
    if spec is not None and spec.origin:
        path = Path(spec.origin).parent / "lib" / "libucp.so.0"
        if path.is_file():
            os.environ["PYSHMEM_UCX_LIBRARY"] = str(path)


_default_ucx_library()

try:
    from pyshmem import _C as lib
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "pyshmem's compiled core (pyshmem._C) is missing or failed to load: "
        f"{exc}. Reinstall with `pip install -e .` from the source tree (it builds the "
        "extension with CMake), or `pip install pyshmem`."
    ) from exc

__all__ = ["lib"]
