"""Waits and atomics at the edges of each integer type, on one PE.

The waits compare in the ivar's own type: int16 values below 0, uint16 values above
2**15, uint32 values >= 2**31 and uint64 values >= 2**63 must compare as the type says,
so a signed/unsigned mix-up in any of them fails here (each non-blocking ``test`` is
asserted before the blocking wait of the same condition, so a mix-up fails instead of
hanging). Atomics refuse a value their target's type cannot hold.
"""

import numpy as np
import pytest

import pyshmem as shmem

CMP = shmem.CMP

# dtype, a value whose sign differs when read with the wrong signedness, a value below it
EDGES = [
    (np.int16, -5, -6),
    (np.uint16, 2**15 + 5, 2**15 - 1),
    (np.int32, -(2**31) + 5, -(2**31)),
    (np.uint32, 2**31 + 5, 2**31),
    (np.int64, -(2**63) + 5, -(2**63)),
    (np.uint64, 2**63 + 5, 2**63),
]


@pytest.fixture
def cell():
    made = []

    def make(dtype, value):
        a = shmem.zeros(1, dtype)
        a[0] = value
        made.append(a)
        return a

    yield make
    for a in made:
        shmem.free(a)


@pytest.mark.parametrize("dtype,value,below", EDGES, ids=lambda v: getattr(v, "__name__", None))
def test_wait_and_test_compare_in_the_ivars_type(cell, dtype, value, below):
    x = cell(dtype, value)
    signed = np.dtype(dtype).kind == "i"
    # Read with the wrong signedness the value's sign flips: these answers would all change.
    assert shmem.test(x, CMP.GT, below) is True
    assert shmem.test(x, CMP.LT, 0) is signed
    assert shmem.test(x, CMP.GT, 0) is not signed
    assert shmem.test(x, CMP.EQ, value) is True
    assert shmem.test(x, CMP.LE, below) is False
    shmem.wait_until(x, CMP.GT, below)
    shmem.wait_until(x, CMP.LT if signed else CMP.GT, 0)
    shmem.wait_until(x, CMP.EQ, value)


@pytest.mark.parametrize("dtype,value,below", EDGES, ids=lambda v: getattr(v, "__name__", None))
def test_vector_waits_compare_in_the_ivars_type(dtype, value, below):
    x = shmem.zeros(3, dtype)
    try:
        x[:] = [value, 1, value]  # 1 and value are on opposite sides of 0 when misread
        beyond = CMP.GT if np.dtype(dtype).kind == "u" else CMP.LT
        assert shmem.test_all(x, CMP.NE, below) is True
        assert shmem.test_any(x, beyond, 1) == 0
        assert shmem.test_some(x, beyond, 1) == [0, 2]
        assert shmem.test_all_vector(x, CMP.EQ, [value, 1, value]) is True
        assert shmem.test_any_vector(x, CMP.EQ, [below, below, value]) == 2
        assert shmem.test_some_vector(x, beyond, [0, 0, 0]) == ([0, 2] if beyond == CMP.LT else [0, 1, 2])
        assert shmem.wait_until_some(x, beyond, 1) == [0, 2]
        assert shmem.wait_until_any(x, beyond, 1) == 0
        shmem.wait_until_all_vector(x, CMP.EQ, [value, 1, value])
    finally:
        shmem.free(x)


def test_signal_wait_compares_unsigned_values_above_2_63(cell):
    sig = cell(np.uint64, 2**63 + 7)
    assert shmem.signal_fetch(sig) == 2**63 + 7
    assert shmem.test(sig, CMP.GT, 1) is True  # before the blocking wait: a misread fails, not hangs
    assert shmem.signal_wait_until(sig, CMP.GT, 2**63) == 2**63 + 7
    assert shmem.signal_wait_until(sig, CMP.GT, 1) == 2**63 + 7


def test_an_out_of_range_comparison_value_is_refused(cell):
    x = cell(np.uint16, 0)
    with pytest.raises(shmem.ValueOverflowError) as info:
        shmem.test(x, CMP.EQ, 2**16)
    msg = str(info.value)
    assert isinstance(info.value, shmem.ShmemError) and isinstance(info.value, OverflowError)
    assert msg.startswith("pyshmem.test on PE 0: value 65536 does not fit")
    assert "uint16" in msg and "wider dtype" in msg


AMO_WRITES = [
    ("atomic_set", lambda x, v: shmem.atomic_set(x, v, 0), "value"),
    ("atomic_add", lambda x, v: shmem.atomic_add(x, v, 0), "value"),
    ("atomic_swap", lambda x, v: shmem.atomic_swap(x, v, 0), "value"),
    ("atomic_fetch_add", lambda x, v: shmem.atomic_fetch_add(x, v, 0), "value"),
    ("atomic_or", lambda x, v: shmem.atomic_or(x, v, 0), "value"),
    ("atomic_compare_swap", lambda x, v: shmem.atomic_compare_swap(x, 0, v, 0), "value"),
    ("atomic_compare_swap", lambda x, v: shmem.atomic_compare_swap(x, v, 1, 0), "cond"),
    # the generic forms name themselves (and the op), not the typed call they dispatch to
    ("atomic_op (AMO.SET)", lambda x, v: shmem.atomic_op(x, v, shmem.AMO.SET, 0), "value"),
    ("atomic_fetch_op (AMO.ADD)", lambda x, v: shmem.atomic_fetch_op(x, v, shmem.AMO.ADD, 0), "value"),
    ("atomic_fetch_op_nbi (AMO.XOR)", lambda x, v: shmem.atomic_fetch_op_nbi(np.zeros(1, np.uint32), x, v, shmem.AMO.XOR, 0),
     "value"),
]


@pytest.mark.parametrize("call,fn,role", AMO_WRITES, ids=[f"{c.split()[0]}-{r}" for c, _, r in AMO_WRITES])
def test_writing_2_32_into_a_uint32_target_raises(cell, call, fn, role):
    x = cell(np.uint32, 3)
    with pytest.raises(shmem.ValueOverflowError) as info:
        fn(x, 2**32)
    msg = str(info.value)
    assert isinstance(info.value, shmem.ShmemError) and isinstance(info.value, OverflowError)
    assert msg.startswith(f"pyshmem.{call} on PE 0: {role} 4294967296 does not fit in the array's element type")
    assert "uint32" in msg and "use a wider dtype" in msg
    assert x[0] == 3, "the refused value must not be written"
    fn(x, 2**32 - 1)  # the largest value that fits is accepted
    shmem.quiet()
