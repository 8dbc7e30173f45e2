"""shmem4py behaviour that its own test suite found missing (tests/pe/test_shmem4py_suite.py),
one focused check per fix, on one PE in this process.

Also the checks of the suite's tests that the suite runner must leave out because they
use shmem4py's cffi objects for part of their work (testAlloc, Ctx/Team testNew,
testSplit): here the same behaviour is checked without cffi.
"""

import numpy as np
import pytest

import pyshmem as shmem


# --------------------------------------------------------------------------- full()

@pytest.mark.parametrize("dtype", ["B", "H", "I", "L", "Q", "u1", "u2", "u4", "u8"])
def test_full_wraps_out_of_range_values_as_shmem4py(dtype):
    a = shmem.full(3, -1, dtype=dtype)
    try:
        assert a.dtype == np.dtype(dtype)
        assert (a == np.iinfo(dtype).max).all()  # -1 wraps to the largest value, as in C
    finally:
        shmem.free(a)


def test_full_keeps_in_range_values_and_broadcasts():
    a = shmem.full((2, 3), [1, 2, 3], dtype="i4")
    b = shmem.full(2, 2**64 - 1, dtype="i8")
    c = shmem.full(4, 1.5)
    try:
        assert (a == [[1, 2, 3], [1, 2, 3]]).all()
        assert (b == -1).all()
        assert c.dtype == np.float64 and (c == 1.5).all()
    finally:
        for x in (a, b, c):
            shmem.free(x)


@pytest.mark.parametrize("value, dtype, error", [
    (2**100, "u8", shmem.ValueOverflowError),
    ("abc", "f8", shmem.ShmemTypeError),
    ([1, 2], "i4", shmem.InvalidArgumentError),  # does not broadcast to (2, 3)
])
def test_full_rejects_bad_values_before_allocating(value, dtype, error):
    before = shmem.zeros(1, "i8")
    with pytest.raises(error, match=r"^pyshmem\.full on PE 0: .*; "):
        shmem.full((2, 3), value, dtype=dtype)
    after = shmem.zeros(1, "i8")
    try:
        # Nothing leaked between the two: the failed full allocated nothing.
        step = after.__array_interface__["data"][0] - before.__array_interface__["data"][0]
        probe = shmem.zeros(1, "i8")
        assert probe.__array_interface__["data"][0] - after.__array_interface__["data"][0] == step
        shmem.free(probe)
    finally:
        shmem.free(after)
        shmem.free(before)


# --------------------------------------------------------------------------- pcontrol

def test_pcontrol_levels_are_no_ops():
    for level in (1, 2, 0, 2, 1):  # shmem4py's test_prof
        assert shmem.pcontrol(level) is None
    shmem.pcontrol()
    shmem.pcontrol(5, value=3)  # a profiler-defined level may take a value
    shmem.pcontrol(np.int32(0))


@pytest.mark.parametrize("args, error", [
    ((1.5,), shmem.ShmemTypeError),
    (("1",), shmem.ShmemTypeError),
    ((-1,), shmem.InvalidArgumentError),
    ((1, 7), shmem.InvalidArgumentError),  # levels 0, 1, 2 take no value
])
def test_pcontrol_checks_its_arguments(args, error):
    with pytest.raises(error, match=r"^pyshmem\.pcontrol on PE 0: .*; "):
        shmem.pcontrol(*args)


# --------------------------------------------------------------------------- invalid handles

def test_invalid_handles_raise_runtime_error_as_in_shmem4py():
    cases = [shmem.CTX_INVALID.get_team, shmem.TEAM_INVALID.my_pe, shmem.TEAM_INVALID.n_pes,
             shmem.TEAM_INVALID.get_config]
    for call in cases:
        with pytest.raises(RuntimeError) as info:
            call()
        assert isinstance(info.value, shmem.InvalidHandleError)
        assert isinstance(info.value, shmem.InvalidArgumentError) and isinstance(info.value, shmem.ShmemError)
        assert str(info.value).startswith("pyshmem.") and " on PE 0: " in str(info.value) and "; " in str(info.value)


def test_destroyed_team_and_context_are_invalid_handles():
    team = shmem.TEAM_WORLD.split_strided(0, 1, 1)
    team.destroy()
    with pytest.raises(shmem.InvalidHandleError):
        team.n_pes()
    ctx = shmem.Ctx.create()
    ctx.destroy()
    with pytest.raises(shmem.InvalidHandleError):
        ctx.get_team()


def test_destroying_a_copy_of_a_predefined_handle_invalidates_only_the_copy():
    for const, invalid in ((shmem.CTX_DEFAULT, shmem.CTX_INVALID), (shmem.CTX_INVALID, shmem.CTX_INVALID)):
        alias = shmem.Ctx(const)
        alias.destroy()
        assert not alias and alias == invalid
        const.destroy()  # the constant itself: a no-op
    assert shmem.CTX_DEFAULT and shmem.CTX_DEFAULT.get_team() == shmem.TEAM_WORLD
    for const in (shmem.TEAM_WORLD, shmem.TEAM_SHARED, shmem.TEAM_INVALID):
        alias = shmem.Team(const)
        alias.destroy()
        assert not alias and alias == shmem.TEAM_INVALID
        alias.destroy()  # now an invalid handle: a no-op, as in shmem4py
        const.destroy()
    assert shmem.TEAM_WORLD.n_pes() == 1 and shmem.TEAM_SHARED.n_pes() == 1


# --------------------------------------------------------------------------- the cffi-using suite tests, without cffi

def test_ctx_and_team_constructors():  # test_ctx/test_team testNew
    assert shmem.Ctx() == shmem.CTX_INVALID and shmem.Ctx(None) == shmem.CTX_INVALID
    assert shmem.Team() == shmem.TEAM_INVALID and shmem.Team(None) == shmem.TEAM_INVALID
    for bad in (123, 0, "x"):
        with pytest.raises(TypeError):
            shmem.Ctx(bad)
        with pytest.raises(TypeError):
            shmem.Team(bad)


def test_alloc_alignment_clear_and_free():  # test_alloc testAlloc
    for n in range(4):
        for s in (1, 2, 4, 8, 12, 16):
            for align in (None, 8, 64, 128):
                for clear in (True, False):
                    for hints in (0, shmem.MALLOC_ATOMICS_REMOTE, shmem.MALLOC_SIGNAL_REMOTE):
                        mem = shmem.alloc(n, s, align, hints, clear)
                        assert len(mem) == n * s
                        if align is not None:
                            assert np.frombuffer(mem, np.uint8).ctypes.data % align == 0
                        if clear and len(mem):
                            assert mem[0] == 0
                        shmem.free(mem)
                        with pytest.raises(shmem.ShmemError):  # shmem4py: KeyError (see the report)
                            shmem.free(mem)


def test_split_config_num_contexts():  # test_team testSplit
    world = shmem.TEAM_WORLD
    t = world.split_strided()
    assert t.n_pes() == world.n_pes() and t.get_config()["num_contexts"] == 0
    t.destroy()
    t = world.split_strided(size=world.n_pes(), config=dict(num_contexts=1))
    assert t.get_config()["num_contexts"] == 1
    t.destroy()
    t = world.split_strided(num_contexts=2)
    assert t.get_config()["num_contexts"] == 2
    t.destroy()
