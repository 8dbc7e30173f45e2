"""Communication contexts (OpenSHMEM 1.5 contexts, shmem4py's ``Ctx``).

Every RMA, AMO, signal and ordering call takes ``ctx=``: None or CTX_DEFAULT, or a
context from :meth:`Ctx.create` / ``Team.create_ctx``. A context made from a team
numbers PEs within that team (``put(x, y, 1, ctx=row_ctx)`` writes to PE 1 of the row).

Completion: ``ctx.quiet()`` completes at least the operations issued on ``ctx``, and
``ctx.fence()`` orders at least them. pyshmem implements both with the PE-wide quiet and
fence, which the model allows (they complete/order more than required); contexts do
not yet give independent progress or per-thread isolation. ``destroy`` completes the
context's operations first. The CTX options (PRIVATE, SERIALIZED, NOSTORE) are hints
and accepted.
"""

from pyshmem._lib import lib
from pyshmem.errors import InvalidArgumentError, InvalidHandleError, ShmemTypeError
from pyshmem.runtime import ensure_started, where

_KIND_INVALID, _KIND_DEFAULT, _KIND_CREATED = 0, 1, 2


class Ctx:
    """A communication context handle (shmem4py's ``Ctx``)."""

    __slots__ = ("_kind", "_team", "_options")

    def __init__(self, ctx=None):
        """Copy a context (``Ctx(CTX_DEFAULT)``) or make an invalid one (``Ctx()``)."""
        if ctx is not None and not isinstance(ctx, Ctx):
            raise ShmemTypeError(f"{where('Ctx')}: takes a Ctx or None, not {type(ctx).__name__}")
        self._kind = ctx._kind if ctx is not None else _KIND_INVALID
        self._team = ctx._team if ctx is not None else lib.TEAM_WORLD
        self._options = ctx._options if ctx is not None else 0

    @staticmethod
    def create(options=0, team=None):
        """Create a context, on ``team`` (PE numbers relative to it) or on the world.

        Args:
            options: CTX flags (PRIVATE, SERIALIZED, NOSTORE) or 0.
            team: a Team this PE belongs to, or None for TEAM_WORLD.

        Returns:
            A new Ctx; destroy it (or use ``with``) when done.

        Raises:
            InvalidArgumentError: unknown option bits, or the team is invalid/destroyed or
                does not include this PE.
        """
        from pyshmem.constants import CTX

        ensure_started("Ctx.create")
        from pyshmem.runtime import as_int
        from pyshmem.team import as_team

        known = int(CTX.PRIVATE | CTX.SERIALIZED | CTX.NOSTORE)
        options = as_int("Ctx.create", "options", options, -2**63, 2**63 - 1)
        if options & ~known:
            raise InvalidArgumentError(
                f"{where('Ctx.create')}: unknown option bits {options & ~known:#x}; use CTX.PRIVATE/SERIALIZED/NOSTORE")
        handle = lib.TEAM_WORLD if team is None else as_team("Ctx.create", team)._handle
        if lib.team_my_pe(handle) < 0:
            lib.team_check(handle, "pyshmem.Ctx.create")  # raises for invalid/destroyed teams
            raise InvalidArgumentError(f"{where('Ctx.create')}: this PE is not a member of the team; only its members may "
                                       "create contexts on it")
        c = Ctx()
        c._kind, c._team, c._options = _KIND_CREATED, handle, options
        return c

    def destroy(self):
        """Complete the context's operations, then invalidate this handle.

        As in shmem4py: a no-op on the CTX_DEFAULT and CTX_INVALID objects themselves;
        a copy (``Ctx(CTX_DEFAULT)``) becomes invalid without touching the default context.
        """
        if self is CTX_DEFAULT or self is CTX_INVALID:
            return
        if self._kind == _KIND_CREATED:
            lib.quiet()
        self._kind = _KIND_INVALID

    def get_team(self):
        """The team the context was created on (TEAM_WORLD for CTX_DEFAULT).

        Returns:
            Team: TEAM_WORLD, or the team the context was created on.

        Raises:
            InvalidHandleError: the context is CTX_INVALID or destroyed (a RuntimeError,
                as in shmem4py, and an InvalidArgumentError).
        """
        from pyshmem.team import Team, TEAM_WORLD

        if self._kind == _KIND_INVALID:
            raise InvalidHandleError(f"{where('Ctx.get_team')}: the context is CTX_INVALID or destroyed; use a live "
                                     "context (CTX_DEFAULT or one from Ctx.create)")
        return TEAM_WORLD if self._team == lib.TEAM_WORLD else Team._from_handle(self._team)

    def fence(self):
        """Order this context's operations to each PE (see pyshmem.fence)."""
        lib.fence(self)

    def quiet(self):
        """Complete this context's operations (see pyshmem.quiet)."""
        lib.quiet(self)

    def __eq__(self, other):
        if not isinstance(other, Ctx):
            return NotImplemented
        if self._kind != _KIND_CREATED or other._kind != _KIND_CREATED:
            return self._kind == other._kind
        return self is other

    def __hash__(self):
        return hash(self._kind) if self._kind != _KIND_CREATED else id(self)

    def __bool__(self):
        return self._kind != _KIND_INVALID

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def __repr__(self):
        return {_KIND_INVALID: "CTX_INVALID", _KIND_DEFAULT: "CTX_DEFAULT"}.get(self._kind, f"Ctx(team={self._team})")


CTX_INVALID = Ctx()
CTX_DEFAULT = Ctx()
CTX_DEFAULT._kind = _KIND_DEFAULT
lib._set_default_ctx(CTX_DEFAULT)

__all__ = ["Ctx", "CTX_DEFAULT", "CTX_INVALID"]
