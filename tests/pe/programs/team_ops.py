"""Team life cycle at scale, team queries, and contexts on teams.

- 600 split/destroy cycles and 300 teams alive at once: no heap, slot or handle leak
  (bytes_free and the live-team count return to where they were);
- handles of destroyed teams stay dead even when their slot is reused;
- translate_pe / my_pe / n_pes / get_config on world, shared, strided and 2-D teams;
- a context on a team numbers PEs within the team: puts land on the right world PE.
Prints "OK pe=<k>".
"""

import numpy as np

import pyshmem as shmem
from pyshmem._lib import lib

me, npes = shmem.my_pe(), shmem.n_pes()


def check(cond, what):
    if not cond:
        raise AssertionError(f"PE {me}: {what}")


free0, live0 = shmem.bytes_free() if hasattr(shmem, "bytes_free") else lib.bytes_free(), lib.team_count()
check(live0 == 2, f"{live0} teams live at start")

# Queries on the predefined teams.
check(shmem.TEAM_WORLD.n_pes() == npes and shmem.team_my_pe(shmem.TEAM_WORLD) == me, "world")
check(shmem.TEAM_WORLD.get_config() == {"num_contexts": 0}, "world config")
check(shmem.TEAM_SHARED.translate_pe() == me, "shared -> world translation of myself")
check(shmem.team_translate_pe(shmem.TEAM_WORLD, me, shmem.TEAM_SHARED) == shmem.TEAM_SHARED.my_pe(), "world->shared")

# Many short-lived teams: each split agrees on a free slot; destroy frees it.
stale = None
for i in range(600):
    t = shmem.TEAM_WORLD.split_strided(i % npes, 1, 1, num_contexts=i % 3)
    check(bool(t) == (me == i % npes), f"cycle {i}: membership")
    if t:
        check(t.get_config() == {"num_contexts": i % 3}, "config round trip")
        check(t.translate_pe(0) == me and t.my_pe() == 0 and t.n_pes() == 1, "singleton team")
        if stale is None:
            stale = shmem.Team(t)
        t.sync()
        t.destroy()
check(lib.team_count() == live0, f"{lib.team_count()} teams live after 600 cycles")
if stale is not None:  # its slot has been reused many times since
    try:
        stale.n_pes()
        raise AssertionError(f"PE {me}: a destroyed team's handle still works")
    except shmem.InvalidArgumentError as e:
        check("not a live team" in str(e), str(e))

# Many teams alive at once (all of them over the world), used, then destroyed.
held = [shmem.TEAM_WORLD.split_strided(0, 1, npes) for _ in range(300)]
check(lib.team_count() == live0 + 300, f"{lib.team_count()} teams live with 300 held")
x = shmem.zeros(1, np.int64)
one = shmem.full(1, me + 1, np.int64)
for t in held[::37]:
    shmem.sum_reduce(x, one, team=t)
    check(int(x[0]) == npes * (npes + 1) // 2, "reduction on a held team")
for t in held:
    t.destroy()
check(lib.team_count() == live0, "held teams all destroyed")

# 2-D split of the world (3 wide): coordinates and translations.
xt, yt = shmem.TEAM_WORLD.split_2d(3)
check(xt.my_pe() == me % 3 and yt.my_pe() == me // 3, "2-D coordinates")
check(all(xt.translate_pe(i) == (me // 3) * 3 + i for i in range(xt.n_pes())), "row members")
check(all(yt.translate_pe(i) == me % 3 + 3 * i for i in range(yt.n_pes())), "column members")
row_start = (me // 3) * 3  # row member 0, which is in my column only if I am in column 0
check(xt.translate_pe(0, yt) == (row_start // 3 if me % 3 == 0 else -1), "row->column translation")

# A context on the row: PE numbers are row-relative.
box = shmem.zeros(npes, np.int64)
shmem.barrier_all()
with xt.create_ctx() as ctx:
    check(ctx.get_team() == xt, "ctx.get_team()")
    right = (xt.my_pe() + 1) % xt.n_pes()
    shmem.put(box[me:me + 1], np.array([100 + me], np.int64), right, ctx=ctx)
    ctx.fence()  # the add after the put (a put and an atomic are not ordered otherwise)
    shmem.atomic_add(box[me:me + 1], 1, right, ctx=ctx)
    ctx.quiet()
shmem.barrier_all()
left_world = xt.translate_pe((xt.my_pe() - 1) % xt.n_pes())
check(int(box[left_world]) == 101 + left_world, f"team-context put landed wrong: {box}")
check(shmem.CTX_DEFAULT.get_team() == shmem.TEAM_WORLD, "default context's team")
wctx = shmem.Ctx.create(shmem.CTX_PRIVATE)
check(bool(wctx) and wctx.get_team() == shmem.TEAM_WORLD, "world context")
shmem.put(box[:1], np.array([7], np.int64), me, ctx=wctx)
wctx.destroy()
check(int(box[0]) == 7 and not wctx, "world context put / destroy")
xt.destroy()
yt.destroy()

shmem.free(box)
shmem.free(one)
shmem.free(x)
check(lib.bytes_free() == free0, f"heap: {lib.bytes_free()} bytes free, {free0} at start")
shmem.barrier_all()
print(f"OK pe={me}", flush=True)
