"""Communication contexts. Only the default context exists so far.

``ctx=None`` and ``ctx=CTX_DEFAULT`` are accepted by every RMA/AMO/ordering call.
Creating other contexts arrives with teams (see the project's issues); until then
:meth:`Ctx.create` raises ``NotImplementedError``.
"""

from pyshmem._lib import lib
from pyshmem.errors import ShmemNotImplementedError


class Ctx:
    """A communication context handle (shmem4py's ``Ctx``)."""

    def __init__(self, ctx=None):
        """Copy a context (``Ctx(CTX_DEFAULT)``) or make an invalid one (``Ctx()``)."""
        if ctx is not None and not isinstance(ctx, Ctx):
            raise TypeError(f"Ctx() takes a Ctx or None, not {type(ctx).__name__}")
        self._default = bool(ctx is not None and ctx._default)

    @staticmethod
    def create(options=0, team=None):
        """Create a new context.

        Raises:
            ShmemNotImplementedError: contexts other than CTX_DEFAULT are not built yet.
        """
        raise ShmemNotImplementedError(
            "pyshmem.Ctx.create: only CTX_DEFAULT exists so far; pass ctx=None or ctx=CTX_DEFAULT"
        )

    def destroy(self):
        """Destroy the context; a no-op for CTX_DEFAULT and invalid contexts."""

    def fence(self):
        """Order this context's operations to each PE (see pyshmem.fence)."""
        lib.fence()

    def quiet(self):
        """Complete this context's operations (see pyshmem.quiet)."""
        lib.quiet()

    def __eq__(self, other):
        return isinstance(other, Ctx) and other._default == self._default

    def __hash__(self):
        return hash(self._default)

    def __bool__(self):
        return self._default

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def __repr__(self):
        return "CTX_DEFAULT" if self._default else "CTX_INVALID"


CTX_INVALID = Ctx()
CTX_DEFAULT = Ctx()
CTX_DEFAULT._default = True
lib._set_default_ctx(CTX_DEFAULT)

__all__ = ["Ctx", "CTX_DEFAULT", "CTX_INVALID"]
