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
