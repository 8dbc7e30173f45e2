"""Bad input to teams, contexts and collectives: a clear exception on every PE, no hang.

After each error every PE goes on to the next case, so a case that left a PE behind
(in a barrier nobody else enters) would hang the job: the launcher's timeout catches it.
Prints "OK pe=<k>".
"""

import numpy as np

import pyshmem as shmem

me, npes = shmem.my_pe(), shmem.n_pes()


def expect(exc, fragment, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        assert fragment in str(e), f"PE {me}: {fragment!r} not in {e!r}"
        assert f"PE {me}" in str(e), f"PE {me}: message does not name the PE: {e}"
        return e
    raise AssertionError(f"PE {me}: {fn.__name__}{args} did not raise {exc.__name__}")


src = shmem.array(np.arange(8, dtype=np.int64) + me)
dst = shmem.zeros(8 * max(npes, 1), np.int64)

# Sizes that differ between PEs: every PE of the node learns of it.
if npes > 1:
    expect(shmem.CollectiveMismatchError, "different size", shmem.fcollect, dst, src, size=2 + me)
    expect(shmem.CollectiveMismatchError, "different size", shmem.sum_reduce, dst[:8], src, size=3 + me % 2)
    expect(shmem.CollectiveMismatchError, "different root", shmem.broadcast, dst[:8], src, me % 2)
    # Different collectives at the same time.
    call = shmem.fcollect if me == 0 else shmem.alltoall
    expect(shmem.CollectiveMismatchError, "different collective", call, dst, src, 1)
# Root outside the team (checked before anything is published).
expect(shmem.InvalidArgumentError, "is not a PE of the team", shmem.broadcast, dst[:8], src, 5 + npes)
# A non-symmetric source on one PE: that PE names it, the others learn it was rejected.
bad = np.zeros(8, np.int64) if me == 0 else src
e = expect(shmem.InvalidArgumentError, "", shmem.sum_reduce, dst[:8], bad)
assert ("not symmetric" in str(e)) if me == 0 else ("PE 0 rejected" in str(e)), str(e)
# Overlapping source and target.
expect(shmem.InvalidArgumentError, "overlap", shmem.fcollect, dst, dst[:1])
# An op undefined for the type.
f64 = shmem.zeros(4)
expect(shmem.ShmemTypeError, "'and' reduction is not defined for float64", shmem.and_reduce, f64, f64)
expect(TypeError, "'xor' reduction", shmem.reduce, shmem.zeros(2, np.complex64), shmem.zeros(2, np.complex64), "xor")
expect(TypeError, "'max' reduction", shmem.max_reduce, shmem.zeros(2, np.complex128), shmem.zeros(2, np.complex128))
expect(shmem.ShmemTypeError, "not float16", shmem.sum_reduce, shmem.zeros(2, np.float16), shmem.zeros(2, np.float16))
expect(shmem.InvalidArgumentError, "unknown reduction op 'avg'", shmem.reduce, f64, f64, "avg")
expect(TypeError, "dtype mismatch", shmem.sum_reduce, f64, shmem.zeros(4, np.float32))
# collect into a target too small for what the PEs contribute: only the short PE fails.
small = shmem.zeros(4 * npes + 1, np.int64)
want_fail = me == 0 and npes > 1
short = small[:3] if want_fail else small
try:
    shmem.collect(short, src, size=4)
    assert not want_fail, f"PE {me}: collect into 3 elements did not fail"
except shmem.InvalidArgumentError as e:
    assert want_fail and "contribute" in str(e), str(e)
# alltoall whose size cannot be inferred.
if npes > 1:
    odd_len = shmem.zeros(2 * npes + 1, np.int64)
    expect(shmem.InvalidArgumentError, "do not split evenly", shmem.alltoall, odd_len, odd_len)
    shmem.free(odd_len)

# Teams: PEs outside, destroyed twice, invalid handles.
half = shmem.TEAM_WORLD.split_strided(0, 1, max(1, npes // 2))
if not half:
    expect(shmem.InvalidArgumentError, "TEAM_INVALID", shmem.sync, half)
    expect(shmem.InvalidArgumentError, "TEAM_INVALID", shmem.fcollect, dst, src, 1, half)
else:
    copy = shmem.Team(half)
    half.destroy()
    expect(shmem.InvalidArgumentError, "already destroyed", half.destroy)
    expect(shmem.InvalidArgumentError, "already destroyed", copy.destroy)
    expect(shmem.InvalidArgumentError, "not a live team", copy.n_pes)
    expect(shmem.InvalidArgumentError, "not a live team", shmem.sum_reduce, dst[:8], src, team=copy)
expect(shmem.InvalidArgumentError, "must lie in the parent", shmem.TEAM_WORLD.split_strided, 0, 1, npes + 1)
expect(shmem.InvalidArgumentError, "unknown team config key", shmem.TEAM_WORLD.split_strided, 0, 1, 1, {"colour": 1})
expect(TypeError, "team must be a pyshmem.Team", shmem.sync, 3)
# Members disagreeing about the team they split: every PE fails, nobody hangs.
if npes > 1:
    expect(shmem.CollectiveMismatchError, "different split", shmem.TEAM_WORLD.split_strided, 0, 1, 1 + me % 2)
# Contexts: PE outside the context's team, destroyed contexts, bad options.
row, _col = shmem.team_split_2d(shmem.TEAM_WORLD, 2)
ctx = row.create_ctx()
if npes > 2:  # PE 2 exists in the world but not in a row of 2
    expect(shmem.InvalidArgumentError, "not a PE of the context's team", shmem.put, dst[:1], src[:1], 2, ctx=ctx)
ctx.destroy()
expect(shmem.InvalidArgumentError, "destroyed context", shmem.put, dst[:1], src[:1], 0, ctx=ctx)
expect(shmem.InvalidArgumentError, "destroyed context", ctx.quiet)
expect(shmem.InvalidArgumentError, "unknown option bits", shmem.Ctx.create, 1 << 20)
expect(TypeError, "ctx must be a pyshmem.Ctx", shmem.put, dst[:1], src[:1], 0, ctx="default")
row.destroy()
_col.destroy()

shmem.barrier_all()
print(f"OK pe={me}", flush=True)
