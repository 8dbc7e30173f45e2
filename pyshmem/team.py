"""Teams: ordered subsets of PEs for collectives and team-relative PE numbers.

shmem4py's ``Team`` class (``split_strided``, ``get_config``, ``my_pe``, ``n_pes``,
``translate_pe``, ``create_ctx``, ``sync``, ``destroy``) plus OpenSHMEM's module-level
verbs (``team_split_strided``, ``team_split_2d``, ``team_my_pe`` ...).

``TEAM_WORLD`` holds every PE; ``TEAM_SHARED`` the PEs of this node (those reachable by
load/store; a team of this PE alone when the node's PEs are not evenly numbered).
Splits are collective over the parent team and return ``TEAM_INVALID`` on the PEs they
leave out. A PE can be in ``PYSHMEM_MAX_TEAMS`` teams at once (1024 by default);
destroying a team frees its slot, so programs may create and destroy teams freely.

Communication contexts (OpenSHMEM 1.5 contexts, shmem4py's ``Ctx``) live here too:
teams and contexts refer to each other (``Team.create_ctx``, ``Ctx.get_team``). Every
RMA, AMO, signal and ordering call takes ``ctx=``: None or CTX_DEFAULT, or a
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
from pyshmem.constants import CTX
from pyshmem.errors import InvalidArgumentError, InvalidHandleError, ShmemError, ShmemTypeError
from pyshmem.runtime import as_int, collective_failed, ensure_started, where


def _config(call, config, kwargs):
    """(num_contexts, mask) from a shmem4py-style config mapping (or None) and keyword arguments."""
    if config is not None and not hasattr(config, "items"):
        raise ShmemTypeError(f"{where(call)}: config must be a mapping such as {{'num_contexts': 2}} or None, not "
                             f"{type(config).__name__}")
    merged = dict(config or {})
    merged.update(kwargs)
    num, mask = 0, 0
    for key, value in merged.items():
        if not isinstance(key, str) or key.lower() != "num_contexts":
            raise InvalidArgumentError(f"{where(call)}: unknown team config key {key!r}; the only one is 'num_contexts'")
        num, mask = as_int(call, "num_contexts", value, 0), 1
    return num, mask


def as_team(call, team, role="team"):
    """``team`` when it is a :class:`Team`, else a ShmemTypeError naming ``role``."""
    if not isinstance(team, Team):
        raise ShmemTypeError(f"{where(call)}: {role} must be a pyshmem.Team (e.g. TEAM_WORLD), not {type(team).__name__}")
    return team


class Team:
    """A team of PEs (shmem4py's ``Team``).

    ``Team()`` is an invalid team; ``Team(other)`` refers to the same team as ``other``.
    Teams are made by :meth:`split_strided` / :func:`team_split_2d` of a parent team.
    """

    __slots__ = ("_handle", "_destroyed")

    def __init__(self, team=None):
        """Copy a team handle (``Team(TEAM_WORLD)``) or make an invalid one (``Team()``)."""
        self._destroyed = False
        if team is None:
            self._handle = lib.TEAM_INVALID
        elif isinstance(team, Team):
            self._handle = team._handle
        else:
            raise ShmemTypeError(f"{where('Team')}: takes a Team or None, not {type(team).__name__}")

    @classmethod
    def _from_handle(cls, handle):
        t = cls.__new__(cls)
        t._handle = int(handle)
        t._destroyed = False
        return t

    def __eq__(self, other):
        if not isinstance(other, Team):
            return NotImplemented
        return self._handle == other._handle

    def __ne__(self, other):
        if not isinstance(other, Team):
            return NotImplemented
        return self._handle != other._handle

    def __hash__(self):
        return hash(self._handle)

    def __int__(self):
        """The team handle as an int, for device-API calls in kernels (``device.sync(int(team))``)."""
        return self._handle

    def __bool__(self):
        return self._handle != lib.TEAM_INVALID

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def __repr__(self):
        names = {lib.TEAM_WORLD: "TEAM_WORLD", lib.TEAM_SHARED: "TEAM_SHARED", lib.TEAM_INVALID: "TEAM_INVALID"}
        if self._handle in names:
            return names[self._handle]
        if lib.initialized() and lib.team_n_pes(self._handle) > 0:
            start, stride, size = lib.team_triplet(self._handle, "Team.__repr__")
            return f"Team(start={start}, stride={stride}, size={size})"
        return f"Team(<destroyed handle {self._handle}>)"

    def destroy(self):
        """Destroy the team (collective over its members); the object becomes invalid.

        As in shmem4py: a no-op on the TEAM_WORLD, TEAM_SHARED and TEAM_INVALID objects
        themselves (and on the TEAM_INVALID a split returns to the PEs it leaves out); a
        copy of a predefined team (``Team(TEAM_WORLD)``) becomes invalid, and the team
        itself lives on.

        Raises:
            InvalidArgumentError: the team was already destroyed (through this or another handle).
        """
        if self is TEAM_WORLD or self is TEAM_SHARED or self is TEAM_INVALID:
            return
        if self._destroyed:
            raise InvalidArgumentError(f"{where('Team.destroy')}: this team was already destroyed; destroy "
                                       "each team once")
        if self._handle in (lib.TEAM_WORLD, lib.TEAM_SHARED, lib.TEAM_INVALID):
            self._handle = lib.TEAM_INVALID
            return
        lib.team_destroy(self._handle, "pyshmem.Team.destroy")
        self._destroyed = True
        self._handle = lib.TEAM_INVALID

    def split_strided(self, start=0, stride=1, size=None, config=None, **kwargs):
        """Create a team of parent PEs ``start + i*stride`` for ``i < size``. Collective over this team.

        Args:
            start: the first PE (in this team's numbering).
            stride: PEs between members, >= 1.
            size: number of members; None takes every PE from start on at this stride.
            config: a mapping such as ``{"num_contexts": 2}``; keyword arguments add to it.

        Returns:
            The new Team, or TEAM_INVALID on PEs outside it.

        Raises:
            InvalidArgumentError: the triplet does not fit in this team, or this PE is not a member.
            CollectiveMismatchError: members asked for different teams, or no team slot is
                free on every member (raise PYSHMEM_MAX_TEAMS or destroy teams).
        """
        call = "Team.split_strided"
        ensure_started(call)
        try:
            start, stride = as_int(call, "start", start), as_int(call, "stride", stride)
            if size is None:
                n = _n_pes_checked(self, call)
                size = len(range(start, n, stride)) if stride > 0 else 0
            size = as_int(call, "size", size)
            num, mask = _config(call, config, kwargs)
        except ShmemError as exc:  # the other PEs of the parent fail this split too
            collective_failed(exc, lambda: lib.team_split_reject(self._handle, "pyshmem." + call))
        return Team._from_handle(lib.team_split_strided(self._handle, start, stride, size, num, mask, "pyshmem." + call))

    def split_2d(self, xrange, xaxis_config=None, yaxis_config=None):
        """Split this team into the rows and columns of a grid ``xrange`` PEs wide. Collective.

        Team PE i sits at ``(x, y) = (i % xrange, i // xrange)``.

        Args:
            xrange: the grid's width (clamped to the team's size).
            xaxis_config, yaxis_config: config mappings of the two new teams.

        Returns:
            ``(xteam, yteam)``: the PEs of my row (same y, numbered by x) and of my column
            (same x, numbered by y).

        Raises:
            InvalidArgumentError: xrange < 1, or this PE is not a member.
        """
        call = "Team.split_2d"
        ensure_started(call)
        try:
            xrange = as_int(call, "xrange", xrange)
            xn, xm = _config(call, xaxis_config, {})
            yn, ym = _config(call, yaxis_config, {})
        except ShmemError as exc:  # the other PEs of the parent fail this split too
            collective_failed(exc, lambda: lib.team_split_reject(self._handle, "pyshmem." + call))
        x, y = lib.team_split_2d(self._handle, xrange, xn, xm, yn, ym, "pyshmem." + call)
        return Team._from_handle(x), Team._from_handle(y)

    def get_config(self):
        """The team's configuration, ``{"num_contexts": n}``.

        Returns:
            dict: ``{"num_contexts": n}``.

        Raises:
            InvalidHandleError: the team is TEAM_INVALID or destroyed (a RuntimeError, as
                in shmem4py, and an InvalidArgumentError).
        """
        _n_pes_checked(self, "pyshmem.Team.get_config")
        return {"num_contexts": lib.team_get_config(self._handle, "pyshmem.Team.get_config")}

    def my_pe(self):
        """This PE's number in the team.

        Raises:
            InvalidHandleError: the team is TEAM_INVALID or destroyed (a RuntimeError, as
                in shmem4py, and an InvalidArgumentError).
            InvalidArgumentError: this PE is not in the team.
        """
        ensure_started("Team.my_pe")
        pe = lib.team_my_pe(self._handle)
        if pe < 0:
            _n_pes_checked(self, "pyshmem.Team.my_pe")
            raise InvalidArgumentError(f"{where('Team.my_pe')}: this PE is not a member of {self!r}")
        return pe

    def n_pes(self):
        """Number of PEs in the team.

        Raises:
            InvalidHandleError: the team is TEAM_INVALID or destroyed (a RuntimeError, as
                in shmem4py, and an InvalidArgumentError).
        """
        return _n_pes_checked(self, "pyshmem.Team.n_pes")

    def translate_pe(self, pe=None, team=None):
        """The number in ``team`` (default TEAM_WORLD) of PE ``pe`` of this team (default: me).

        Returns:
            The PE's number in ``team``, or -1 when it is not a member of ``team``.

        Raises:
            InvalidArgumentError: either team is invalid or destroyed.
        """
        ensure_started("Team.translate_pe")
        if pe is None:
            pe = self.my_pe()
        dest = TEAM_WORLD if team is None else as_team("Team.translate_pe", team)
        pe = as_int("Team.translate_pe", "pe", pe, -2**63, 2**63 - 1)
        if not -2**31 <= pe < 2**31:
            lib.team_check(self._handle, "pyshmem.Team.translate_pe")
            return -1  # no team has such a PE
        return lib.team_translate_pe(self._handle, pe, dest._handle, "pyshmem.Team.translate_pe")

    def create_ctx(self, options=0):
        """A communication context whose PE numbers are this team's (see Ctx.create)."""
        return Ctx.create(options, self)

    def sync(self):
        """Wait until every PE of the team has called sync (no quiet)."""
        lib.sync(self)


def _n_pes_checked(team, call):
    """The team's size; InvalidHandleError (a RuntimeError, as in shmem4py) for a
    TEAM_INVALID or destroyed team, with the core's reason."""
    ensure_started(call)
    n = lib.team_n_pes(team._handle)
    if n < 0:
        try:
            lib.team_check(team._handle, call)
        except InvalidArgumentError as exc:
            raise InvalidHandleError(str(exc)) from None
    return n


TEAM_WORLD = Team._from_handle(lib.TEAM_WORLD)
TEAM_SHARED = Team._from_handle(lib.TEAM_SHARED)
TEAM_INVALID = Team._from_handle(lib.TEAM_INVALID)


def team_my_pe(team):
    """This PE's number in ``team`` (see Team.my_pe)."""
    return as_team("team_my_pe", team).my_pe()


def team_n_pes(team):
    """Number of PEs in ``team`` (see Team.n_pes)."""
    return as_team("team_n_pes", team).n_pes()


def team_get_config(team):
    """``team``'s configuration (see Team.get_config)."""
    return as_team("team_get_config", team).get_config()


def team_translate_pe(src_team, src_pe, dest_team):
    """PE ``src_pe`` of ``src_team`` numbered in ``dest_team``, or -1 (see Team.translate_pe)."""
    as_team("team_translate_pe", dest_team, "dest_team")
    return as_team("team_translate_pe", src_team, "src_team").translate_pe(src_pe, dest_team)


def team_split_strided(parent, start, stride, size, config=None):
    """OpenSHMEM's shmem_team_split_strided (see Team.split_strided)."""
    return as_team("team_split_strided", parent, "parent").split_strided(start, stride, size, config)


def team_split_2d(parent, xrange, xaxis_config=None, yaxis_config=None):
    """OpenSHMEM's shmem_team_split_2d: ``(xteam, yteam)`` (see Team.split_2d)."""
    return as_team("team_split_2d", parent, "parent").split_2d(xrange, xaxis_config, yaxis_config)


def team_destroy(team):
    """Destroy ``team`` (see Team.destroy)."""
    as_team("team_destroy", team).destroy()


def team_create_ctx(team, options=0):
    """A context on ``team`` (see Ctx.create)."""
    return as_team("team_create_ctx", team).create_ctx(options)


def team_sync(team):
    """Barrier over ``team`` without quiet (see pyshmem.sync)."""
    lib.sync(team)


# ---- communication contexts ----
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
        ensure_started("Ctx.create")
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


__all__ = [
    "Team", "TEAM_WORLD", "TEAM_SHARED", "TEAM_INVALID",
    "team_my_pe", "team_n_pes", "team_get_config", "team_translate_pe", "team_split_strided", "team_split_2d",
    "team_destroy", "team_create_ctx", "team_sync", "Ctx", "CTX_DEFAULT", "CTX_INVALID",
]
