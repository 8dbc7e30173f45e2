"""The one place that imports the compiled core, ``pyshmem._C``.

Every other module goes through ``lib`` so that a missing or broken build fails here
with one clear message instead of at a random import.
"""

try:
    from pyshmem import _C as lib
except ImportError as exc:  # pragma: no cover - depends on the install
    raise ImportError(
        "pyshmem's compiled core (pyshmem._C) is missing or failed to load: "
        f"{exc}. Reinstall with `pip install -e .` from the source tree (it builds the "
        "extension with CMake), or `pip install pyshmem`."
    ) from exc

__all__ = ["lib"]
