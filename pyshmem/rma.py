"""One-sided put/get (shmem4py signatures), implemented in the compiled core.

``put(target, source, pe, size=None, ctx=None)`` and friends: ``target`` comes first,
``size`` counts elements, ``ctx`` is None or CTX_DEFAULT. See each function's docstring
and docs/memory_model.md for completion and ordering.
"""

from pyshmem._lib import lib

put = lib.put
get = lib.get
put_nbi = lib.put_nbi
get_nbi = lib.get_nbi
iput = lib.iput
iget = lib.iget

__all__ = ["put", "get", "put_nbi", "get_nbi", "iput", "iget"]
