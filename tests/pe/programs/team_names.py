"""The module-level team verbs and the reductions by name, each checked by its effect.

- team_split_strided(TEAM_WORLD, 0, 2, ...) makes the team of the even PEs (TEAM_INVALID
  on the odd ones); team_get_config returns the config it was made with;
- team_create_ctx: a put on the context numbers PEs within the team;
- team_sync waits for every member: after it, team PE 0 sees every member's atomic add;
- team_destroy frees the team: afterwards its handle raises InvalidHandleError;
- or_reduce / xor_reduce / min_reduce / prod_reduce (by name) over the world and the team
  give the values computed here from every PE's input.
Prints "OK pe=<k>".
"""

import functools
import time

import numpy as np

import pyshmem as shmem

me, npes = shmem.my_pe(), shmem.n_pes()


def check(cond, what):
    if not cond:
        raise AssertionError(f"PE {me}: {what}")


def expect(exc_type, fn, *parts):
    """fn() must raise exc_type (a ShmemError) whose message has every one of ``parts``."""
    try:
        fn()
    except exc_type as exc:
        msg = str(exc)
        check(isinstance(exc, shmem.ShmemError), f"{type(exc).__name__} is not a ShmemError")
        check(all(p in msg for p in parts), f"message {msg!r} lacks one of {parts}")
        return
    raise AssertionError(f"PE {me}: {getattr(fn, '__name__', fn)} did not raise {exc_type.__name__}")


box = shmem.zeros(npes, np.int64)
counter = shmem.zeros(1, np.int64)
evens = (npes + 1) // 2
team = shmem.team_split_strided(shmem.TEAM_WORLD, 0, 2, evens, {"num_contexts": 1})
if me % 2:
    check(team == shmem.TEAM_INVALID, "an odd PE is outside the team of even PEs")
    expect(shmem.InvalidHandleError, lambda: shmem.team_get_config(team), "pyshmem.Team.get_config", f"PE {me}")
    shmem.team_destroy(team)  # a no-op on the TEAM_INVALID a split returns
else:
    mine = shmem.team_my_pe(team)
    check(mine == me // 2 and shmem.team_n_pes(team) == evens, f"team_my_pe {mine}")
    check(shmem.team_get_config(team) == {"num_contexts": 1}, f"config {shmem.team_get_config(team)}")
    right = (mine + 1) % evens
    if mine:
        time.sleep(0.2)  # late members: a team_sync that did not wait for them fails the checks below
    ctx = shmem.team_create_ctx(team)
    check(ctx.get_team() == team, "team_create_ctx's context is on the team")
    shmem.put(box[me:me + 1], np.array([100 + me], np.int64), right, ctx=ctx)  # team PE right = world 2*right
    ctx.quiet()
    ctx.destroy()
    shmem.atomic_add(counter, 1, shmem.team_translate_pe(team, 0, shmem.TEAM_WORLD))
    shmem.quiet()
    shmem.team_sync(team)
    left = 2 * ((mine - 1) % evens)
    check(int(box[left]) == 100 + left, f"ctx put from PE {left}: box = {box}")
    if mine == 0:
        check(int(counter[0]) == evens, f"team_sync returned before every member's add: {counter[0]} of {evens}")
    shmem.team_destroy(team)
    expect(shmem.InvalidHandleError, lambda: shmem.team_get_config(team), "pyshmem.Team.get_config")
expect(shmem.ShmemTypeError, lambda: shmem.team_split_strided(None, 0, 1, 1), "pyshmem.team_split_strided",
       "parent must be a pyshmem.Team")
shmem.barrier_all()

REDUCE = {"or": (shmem.or_reduce, np.bitwise_or), "xor": (shmem.xor_reduce, np.bitwise_xor),
          "min": (shmem.min_reduce, np.minimum), "prod": (shmem.prod_reduce, np.multiply)}


def data(pe, dtype):
    """PE pe's input: distinct bits for or/xor, signs and small factors for min/prod."""
    if np.dtype(dtype).kind == "f":
        return np.array([pe - 1.5, 1.0 + pe / 4, -pe, 2.0], dtype)
    return np.array([1 << pe, 3 << pe, pe + 1, -pe if np.dtype(dtype).kind == "i" else 7 - pe], dtype)


def reduce_on(t, ids):
    for name, (fn, npop) in REDUCE.items():
        for dtype in ([np.float64, np.float32] if name in ("min", "prod") else []) + [np.int32, np.uint64]:
            src = shmem.zeros(4, dtype)
            dst = shmem.zeros(4, dtype)
            src[:] = data(me, dtype)
            if t:
                fn(dst, src, team=t)
                want = functools.reduce(npop, [data(p, dtype) for p in ids])
                # min and prod of these inputs are exact in every float type (products of
                # quarters of small integers), so the check allows no rounding at all
                check(np.array_equal(dst, want), f"{name}_reduce {np.dtype(dtype)} over {ids}: {dst} != {want}")
            shmem.free(dst)
            shmem.free(src)


reduce_on(shmem.TEAM_WORLD, list(range(npes)))
half = shmem.team_split_strided(shmem.TEAM_WORLD, 0, 2, evens)
reduce_on(half, list(range(0, npes, 2)))
shmem.team_destroy(half)
shmem.free(counter)
shmem.free(box)
print(f"OK pe={me}")
