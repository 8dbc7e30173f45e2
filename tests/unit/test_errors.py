"""Bad input and failure handling on one PE.

Most tests run in the pytest process itself, which becomes a one-PE job on the first
pyshmem call. Anything that must not happen in this process (a small heap, bad
environment variables, finalize, a crash) runs in a short subprocess.

Every check asserts the exception type (a ``pyshmem.ShmemError`` that is also the
builtin a Python user expects) and the parts of the message that matter: the call
(``pyshmem.put``), the PE (``on PE 0``) and the hint that fixes it.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import pyshmem as shmem

REPO = Path(__file__).resolve().parents[2]
SUB_TIMEOUT = 30


def where(call):
    return f"pyshmem.{call} on PE 0: "


def raises(exc_type, fn, *args, **kwargs):
    """Call fn, require exc_type and pyshmem.ShmemError; return the message."""
    with pytest.raises(exc_type) as info:
        fn(*args, **kwargs)
    assert isinstance(info.value, shmem.ShmemError), (type(info.value).__mro__, info.value)
    return str(info.value)


# Prelude of subprocess snippets: report(fn, ...) prints "<Type>|<ShmemError?>|<message>".
REPORT = """
import numpy as np
import pyshmem as shmem
def report(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except BaseException as exc:
        print(f"{type(exc).__name__}|{isinstance(exc, shmem.ShmemError)}|{exc}", flush=True)
    else:
        print("NO-ERROR", flush=True)
"""


def run_py(code, env=None, timeout=SUB_TIMEOUT):
    """Run REPORT + `code` as a fresh one-PE program (no launcher variables)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("PYSHMEM_")}
    full["PYTHONPATH"] = str(REPO) + os.pathsep + full.get("PYTHONPATH", "")
    full["PYSHMEM_SYMMETRIC_SIZE"] = "16M"
    full.update(env or {})
    return subprocess.run([sys.executable, "-c", REPORT + textwrap.dedent(code)], env=full, capture_output=True,
                          text=True, timeout=timeout, cwd=str(REPO))


@pytest.fixture(scope="module")
def arrays():
    """Symmetric arrays shared by the tests of this module (freed at the end)."""
    made = dict(
        i64=shmem.zeros(4, dtype=np.int64),
        i32=shmem.zeros(4, dtype=np.int32),
        u64=shmem.zeros(4, dtype=np.uint64),
        f64=shmem.zeros(4, dtype=np.float64),
        f32=shmem.zeros(4, dtype=np.float32),
        i8=shmem.zeros(4, dtype=np.int8),
        i16=shmem.zeros(4, dtype=np.int16),
        u8=shmem.zeros(4, dtype=np.uint8),
        u16=shmem.zeros(4, dtype=np.uint16),
        m2d=shmem.zeros((4, 4), dtype=np.int64),
        sig=shmem.new_signal(),
        lock=shmem.new_lock(),
    )
    yield made
    for a in made.values():
        shmem.free(a)


def test_the_test_process_is_a_single_pe():
    assert shmem.n_pes() == 1 and shmem.my_pe() == 0


def test_error_classes_derive_from_shmem_error_and_a_builtin():
    pairs = {
        shmem.InvalidArgumentError: ValueError,
        shmem.ShmemTypeError: TypeError,
        shmem.HeapExhaustedError: MemoryError,
        shmem.NotInitializedError: RuntimeError,
        shmem.CollectiveMismatchError: RuntimeError,
        shmem.ShmemNotImplementedError: NotImplementedError,
        shmem.ShmemTimeoutError: TimeoutError,
        shmem.BootstrapError: ConnectionError,
        shmem.ShmemOSError: OSError,
        shmem.InternalError: RuntimeError,
    }
    for cls, builtin in pairs.items():
        assert issubclass(cls, shmem.ShmemError) and issubclass(cls, builtin), cls
    assert issubclass(shmem.ShmemError, Exception)


# --------------------------------------------------------------------------- PE out of range

PE = object()  # placeholder for the PE argument in _pe_calls


def _with_pe(args, pe):
    return [pe if v is PE else v for v in args]


def _pe_calls(a):
    """(call name, function, args with the placeholder PE where the PE goes)."""
    x, s, sig, loc = a["i64"], np.zeros(4, np.int64), a["sig"], np.zeros(1, np.int64)
    return [
        ("put", shmem.put, (x, s, PE)),
        ("get", shmem.get, (s, x, PE)),
        ("put_nbi", shmem.put_nbi, (x, s, PE)),
        ("get_nbi", shmem.get_nbi, (s, x, PE)),
        ("iput", shmem.iput, (x, s, PE, 2, 1)),
        ("iget", shmem.iget, (s, x, PE, 1, 2)),
        ("atomic_set", shmem.atomic_set, (x[:1], 1, PE)),
        ("atomic_fetch", shmem.atomic_fetch, (x[:1], PE)),
        ("atomic_inc", shmem.atomic_inc, (x[:1], PE)),
        ("atomic_fetch_add", shmem.atomic_fetch_add, (x[:1], 1, PE)),
        ("atomic_compare_swap", shmem.atomic_compare_swap, (x[:1], 0, 1, PE)),
        ("atomic_xor", shmem.atomic_xor, (x[:1], 1, PE)),
        ("atomic_fetch_nbi", shmem.atomic_fetch_nbi, (loc, x[:1], PE)),
        ("atomic_fetch_add_nbi", shmem.atomic_fetch_add_nbi, (loc, x[:1], 1, PE)),
        ("put_signal", shmem.put_signal, (x, s, PE, sig, 1, shmem.SIGNAL_SET)),
        ("put_signal_nbi", shmem.put_signal_nbi, (x, s, PE, sig, 1, shmem.SIGNAL_ADD)),
        ("ptr", shmem.ptr, (x, PE)),
    ]


@pytest.mark.parametrize("pe", [-1, 1, 2**31, -2**31 - 1, 2**62])
def test_pe_out_of_range(arrays, pe):
    for name, fn, args in _pe_calls(arrays):
        if name == "ptr" and not -2**31 <= pe < 2**31:
            continue  # see test_ptr_pe_beyond_int32
        msg = raises(shmem.InvalidArgumentError, fn, *_with_pe(args, pe))
        assert msg.startswith(where(name)), msg
        assert f"PE {pe} is out of range" in msg and "valid PEs are 0..0" in msg and "n_pes() == 1" in msg, msg
    assert arrays["i64"].tolist() == [0, 0, 0, 0] and int(arrays["sig"][0]) == 0  # nothing was written


def test_pe_out_of_range_as_keyword_and_numpy_int(arrays):
    msg = raises(shmem.InvalidArgumentError, shmem.put, arrays["i64"], np.zeros(4, np.int64), pe=np.int32(1))
    assert msg.startswith(where("put")) and "PE 1 is out of range" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.atomic_add, arrays["i64"][:1], 1, pe=np.int64(-1))
    assert msg.startswith(where("atomic_add")) and "PE -1 is out of range" in msg, msg


def test_pe_out_of_range_message_names_the_pe_given(arrays):
    msg = raises(shmem.InvalidArgumentError, shmem.put, arrays["i64"], np.zeros(4, np.int64), 2**70)
    assert f"PE {2**70}" in msg, msg


def test_pe_accessible_out_of_range_is_false_not_an_error(arrays):
    assert shmem.pe_accessible(0) is True
    assert shmem.pe_accessible(-1) is False and shmem.pe_accessible(1) is False
    assert shmem.addr_accessible(arrays["i64"], 1) is False


@pytest.mark.parametrize("fn", ["ptr", "pe_accessible", "addr_accessible"])
def test_ptr_pe_beyond_int32(arrays, fn):
    if fn == "pe_accessible":
        assert shmem.pe_accessible(2**31) is False  # documented: any int, out of range is not accessible
    elif fn == "addr_accessible":
        assert shmem.addr_accessible(arrays["i64"], 2**31) is False
    else:
        msg = raises(shmem.InvalidArgumentError, shmem.ptr, arrays["i64"], 2**31)
        assert msg.startswith(where("ptr")) and f"PE {2**31} is out of range" in msg, msg


# --------------------------------------------------------------------------- wrong types for pe

@pytest.mark.parametrize("bad", ["a", 1.0, [0], b"0"])
def test_pe_of_the_wrong_type(arrays, bad):
    for name, fn, args in _pe_calls(arrays):
        if name == "ptr":
            continue  # ptr: see test_ptr_pe_of_the_wrong_type
        with pytest.raises(TypeError) as info:
            fn(*_with_pe(args, bad))
        msg = str(info.value)
        assert msg.startswith(where(name)) and "pe must be an integer" in msg, msg
        assert type(bad).__name__ in msg, msg


@pytest.mark.parametrize("fn", ["ptr", "pe_accessible", "addr_accessible"])
@pytest.mark.parametrize("bad", ["a", 1.5])
def test_ptr_pe_of_the_wrong_type(arrays, fn, bad):
    args = (bad,) if fn == "pe_accessible" else (arrays["i64"], bad)
    with pytest.raises(TypeError) as info:
        getattr(shmem, fn)(*args)
    assert f"pyshmem.{fn}" in str(info.value) and "pe" in str(info.value), info.value


@pytest.mark.parametrize("case", ["pe", "size", "value", "sigop", "cmp"])
def test_argument_type_errors_are_shmem_errors(arrays, case):
    x, s = arrays["i64"], np.zeros(4, np.int64)
    call = {
        "pe": lambda: shmem.put(x, s, "a"),
        "size": lambda: shmem.put(x, s, 0, "a"),
        "value": lambda: shmem.atomic_add(x[:1], 1.5, 0),
        "sigop": lambda: shmem.put_signal(x, s, 0, arrays["sig"], 1, "x"),
        "cmp": lambda: shmem.test(x[:1], 1.5, 0),
    }[case]
    with pytest.raises(TypeError) as info:
        call()
    assert isinstance(info.value, shmem.ShmemError), type(info.value).__mro__


def test_pe_none_does_not_crash_the_interpreter():
    """pe=None must raise TypeError, not crash (run in a subprocess: it segfaults)."""
    proc = run_py("""
        x = shmem.zeros(4, dtype=np.int64)
        report(shmem.atomic_fetch, x[:1], None)
        report(shmem.put, x, np.zeros(4, np.int64), None)
        report(shmem.put_signal, x, np.zeros(4, np.int64), None, shmem.new_signal(), 1, shmem.SIGNAL_SET)
    """)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    lines = proc.stdout.splitlines()
    assert len(lines) == 3, out
    for line, call in zip(lines, ["atomic_fetch", "put", "put_signal"]):
        kind, is_typeerror, _ = line.split("|", 2)
        assert kind == "ShmemTypeError" and is_typeerror == "True", line
        assert f"pyshmem.{call}" in line and "pe is required" in line, line


# --------------------------------------------------------------------------- not symmetric

def test_plain_numpy_array_where_symmetric_memory_is_needed(arrays):
    x, plain = arrays["i64"], np.zeros(4, np.int64)
    plain_sig = np.zeros(1, np.uint64)
    cases = [
        ("put", "target", shmem.put, (plain, x, 0)),
        ("put_nbi", "target", shmem.put_nbi, (plain, x, 0)),
        ("get", "source", shmem.get, (plain.copy(), plain, 0)),
        ("get_nbi", "source", shmem.get_nbi, (plain.copy(), plain, 0)),
        ("iput", "target", shmem.iput, (plain, x, 0, 2, 2)),
        ("atomic_add", "target", shmem.atomic_add, (plain[:1], 1, 0)),
        ("atomic_fetch", "target", shmem.atomic_fetch, (plain[:1], 0)),  # (the parameter is called source)
        ("atomic_compare_swap", "target", shmem.atomic_compare_swap, (plain[:1], 0, 1, 0)),
        ("wait_until", "ivar", shmem.wait_until, (plain[:1], shmem.CMP.EQ, 0)),
        ("test", "ivar", shmem.test, (plain[:1], shmem.CMP.EQ, 0)),
        ("test_any", "ivars", shmem.test_any, (plain, shmem.CMP.EQ, 0)),
        ("put_signal", "signal", shmem.put_signal, (x, plain, 0, plain_sig, 1, shmem.SIGNAL_SET)),
        ("signal_fetch", "signal", shmem.signal_fetch, (plain_sig,)),
        ("signal_wait_until", "signal", shmem.signal_wait_until, (plain_sig, shmem.CMP.EQ, 0)),
        ("set_lock", "lock", shmem.set_lock, (plain[:1],)),
    ]
    for name, role, fn, args in cases:
        msg = raises(shmem.InvalidArgumentError, fn, *args)
        assert msg.startswith(where(name)), msg
        assert f"{role} is not symmetric memory" in msg, msg
        assert "pyshmem.array/empty/zeros" in msg, msg  # the fix
    assert plain_sig[0] == 0 and not plain.any()


def test_non_ndarray_arguments(arrays):
    x = arrays["i64"]
    msg = raises(shmem.ShmemTypeError, shmem.put, x, [1, 2, 3, 4], 0)
    assert msg.startswith(where("put")) and "source must be a NumPy array" in msg and "list" in msg, msg
    msg = raises(shmem.ShmemTypeError, shmem.get, 7, x, 0)
    assert msg.startswith(where("get")) and "target must be a NumPy array" in msg and "int" in msg, msg
    for name, args in (("atomic_add", (x[0], 1, 0)), ("atomic_fetch", (x[0], 0)), ("test", (x[0], 0, 0))):
        # a NumPy scalar (a[i]) is a copy: it never reaches the symmetric heap
        msg = raises(shmem.InvalidArgumentError, getattr(shmem, name), *args)
        assert msg.startswith(where(name)), msg
    assert not x.any()
    msg = raises(shmem.ShmemTypeError, shmem.wait_until_all, [0, 0], shmem.CMP.EQ, 0)
    assert msg.startswith("pyshmem.wait_until_all") and "ivars" in msg and "list" in msg, msg
    msg = raises(shmem.ShmemTypeError, shmem.ptr, [0], 0)
    assert msg.startswith("pyshmem.ptr") and "NumPy array" in msg, msg
    msg = raises(shmem.ShmemTypeError, shmem.addr_accessible, "x", 0)
    assert msg.startswith("pyshmem.addr_accessible") and "NumPy array" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.ptr, np.zeros(2), 0)
    assert msg.startswith(where("ptr")) and "not in the symmetric heap" in msg, msg
    assert shmem.addr_accessible(np.zeros(2), 0) is False and shmem.addr_accessible(x, 0) is True


def test_numpy_scalar_target_points_at_a_slice(arrays):
    for name, args in (("atomic_add", (arrays["i64"][0], 1, 0)), ("test", (arrays["i64"][0], 0, 0))):
        msg = raises(shmem.ShmemError, getattr(shmem, name), *args)
        assert "a[i:i+1]" in msg, msg


# --------------------------------------------------------------------------- dtype, size, layout

def test_dtype_mismatch(arrays):
    msg = raises(shmem.ShmemTypeError, shmem.put, arrays["i64"], np.zeros(4, np.int32), 0)
    assert msg.startswith(where("put")), msg
    assert "dtype mismatch: target is int64 but source is int32" in msg and ".astype()" in msg, msg
    msg = raises(shmem.ShmemTypeError, shmem.get, np.zeros(4, np.float64), arrays["i64"], 0)
    assert msg.startswith(where("get")) and "target is float64 but source is int64" in msg, msg
    msg = raises(shmem.ShmemTypeError, shmem.put_signal, arrays["f32"], np.zeros(4, np.int32), 0, arrays["sig"], 1,
                 shmem.SIGNAL_SET)
    assert msg.startswith(where("put_signal")) and "float32" in msg and "int32" in msg, msg
    msg = raises(shmem.ShmemTypeError, shmem.atomic_fetch_add_nbi, np.zeros(1, np.int32), arrays["i64"][:1], 1, 0)
    assert msg.startswith(where("atomic_fetch_add_nbi")) and "fetch is int32 but target is int64" in msg, msg
    assert not arrays["i64"].any()


def test_size_larger_than_either_array(arrays):
    x = arrays["i64"]
    msg = raises(shmem.InvalidArgumentError, shmem.put, x, np.zeros(8, np.int64), 0, 5)
    assert msg.startswith(where("put")) and "size=5 elements exceeds the target (4 elements)" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.put, x, np.zeros(2, np.int64), 0, size=3)
    assert msg.startswith(where("put")) and "size=3 elements exceeds the source (2 elements)" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.get, np.zeros(2, np.int64), x, 0, 3)
    assert msg.startswith(where("get")) and "exceeds the target (2 elements)" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.iput, x, np.zeros(4, np.int64), 0, 2, 1, 3)
    assert msg.startswith(where("iput")) and "exceeds the target (2 elements at this stride)" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.put_signal, x, np.zeros(8, np.int64), 0, arrays["sig"], 1,
                 shmem.SIGNAL_SET, 6)
    assert msg.startswith(where("put_signal")) and "size=6" in msg, msg
    assert not x.any() and arrays["sig"][0] == 0  # neither data nor signal was written


def test_negative_size_and_strides(arrays):
    x = arrays["i64"]
    for name in ("put", "get", "put_nbi", "get_nbi"):
        tgt, src = (x, np.zeros(4, np.int64)) if "put" in name else (np.zeros(4, np.int64), x)
        msg = raises(shmem.InvalidArgumentError, getattr(shmem, name), tgt, src, 0, -1)
        assert msg.startswith(where(name)) and "size must be >= 0 (got -1)" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.put, x, np.zeros(4, np.int64), 0, size=2**70)
    assert msg.startswith(where("put")) and "size is out of range" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.iput, x, np.zeros(4, np.int64), 0, 0, 1)
    assert msg.startswith(where("iput")) and "tst and sst must be >= 1 (got tst=0, sst=1)" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.iget, np.zeros(4, np.int64), x, 0, 1, -2)
    assert msg.startswith(where("iget")) and "sst=-2" in msg, msg


def test_zero_size_is_a_no_op(arrays):
    x = arrays["i64"]
    shmem.put(x, np.ones(4, np.int64), 0, 0)
    shmem.put(x[:0], np.ones(0, np.int64), 0)
    assert not x.any()


def test_read_only_targets(arrays):
    ro = arrays["i64"].view()
    ro.flags.writeable = False
    msg = raises(shmem.InvalidArgumentError, shmem.put, ro, np.zeros(4, np.int64), 0)
    assert msg.startswith(where("put")) and "target is read-only" in msg, msg
    local = np.zeros(4, np.int64)
    local.flags.writeable = False
    msg = raises(shmem.InvalidArgumentError, shmem.get, local, arrays["i64"], 0)
    assert msg.startswith(where("get")) and "target is read-only" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.atomic_add, ro[:1], 1, 0)
    assert msg.startswith(where("atomic_add")) and "read-only" in msg, msg
    # reading a read-only array is fine
    assert shmem.atomic_fetch(ro[:1], 0) == 0
    out = np.ones(4, np.int64)
    shmem.get(out, ro, 0)
    assert not out.any()
    assert shmem.test(ro[:1], shmem.CMP.EQ, 0) is True


def test_non_contiguous_views(arrays):
    m = arrays["m2d"]
    msg = raises(shmem.InvalidArgumentError, shmem.put, m[:, :2], np.zeros((4, 2), np.int64), 0)
    assert msg.startswith(where("put")) and "target is not contiguous" in msg, msg
    assert "np.ascontiguousarray" in msg and "iput" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.get, np.zeros((4, 4), np.int64)[:, ::2], m[:, :2], 0)
    assert msg.startswith(where("get")) and "not contiguous" in msg, msg
    assert not m.any()


# --------------------------------------------------------------------------- atomics

def test_atomic_target_must_have_one_element(arrays):
    for name, args in [("atomic_add", (1, 0)), ("atomic_fetch", (0,)), ("atomic_set", (1, 0)),
                       ("atomic_compare_swap", (0, 1, 0)), ("atomic_fetch_inc", (0,))]:
        msg = raises(shmem.InvalidArgumentError, getattr(shmem, name), arrays["i64"][:2], *args)
        assert msg.startswith(where(name)) and "1-element symmetric array" in msg and "a[i:i+1]" in msg, msg
        assert "got 2 elements" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.atomic_fetch_nbi, np.zeros(2, np.int64), arrays["i64"][:1], 0)
    assert msg.startswith(where("atomic_fetch_nbi")) and "fetch must be a 1-element array" in msg, msg
    assert not arrays["i64"].any()


@pytest.mark.parametrize("name, args", [
    ("atomic_add", (1, 0)), ("atomic_fetch_add", (1, 0)), ("atomic_inc", (0,)), ("atomic_fetch_inc", (0,)),
    ("atomic_compare_swap", (0, 1, 0)), ("atomic_and", (1, 0)), ("atomic_or", (1, 0)), ("atomic_xor", (1, 0)),
    ("atomic_fetch_and", (1, 0)), ("atomic_fetch_or", (1, 0)), ("atomic_fetch_xor", (1, 0)),
])
@pytest.mark.parametrize("dtype", ["f64", "f32"])
def test_atomic_on_float_needs_an_integer_type(arrays, name, args, dtype):
    msg = raises(shmem.ShmemTypeError, getattr(shmem, name), arrays[dtype][:1], *args)
    assert msg.startswith(where(name)), msg
    assert f"atomics on {'float64' if dtype == 'f64' else 'float32'} are not supported" in msg, msg
    assert "use int32, int64, uint32 or uint64" in msg, msg
    assert not arrays[dtype].any()


def test_atomic_op_on_float(arrays):
    for op in (shmem.AMO.ADD, shmem.AMO.INC, shmem.AMO.XOR):
        msg = raises(shmem.ShmemTypeError, shmem.atomic_op, arrays["f64"][:1], 1, op, 0)
        assert msg.startswith(f"pyshmem.atomic_op (AMO.{op.name}) on PE 0: ") and "float64" in msg, msg


def test_extended_atomics_work_on_float(arrays):
    f = arrays["f64"][1:2]
    shmem.atomic_set(f, 2.5, 0)
    assert shmem.atomic_swap(f, 1.0, 0) == 2.5
    assert shmem.atomic_fetch(f, 0) == 1.0
    f[0] = 0


@pytest.mark.parametrize("dtype", ["i8", "i16", "u8", "u16"])
@pytest.mark.parametrize("name, args", [("atomic_add", (1, 0)), ("atomic_set", (1, 0)), ("atomic_fetch", (0,)),
                                        ("atomic_compare_swap", (0, 1, 0))])
def test_atomic_on_small_integers(arrays, dtype, name, args):
    msg = raises(shmem.ShmemTypeError, getattr(shmem, name), arrays[dtype][:1], *args)
    width = {"i8": "int8", "i16": "int16", "u8": "uint8", "u16": "uint16"}[dtype]
    assert msg.startswith(where(name)) and f"atomics on {width} are not supported" in msg, msg
    assert "int32, int64, uint32" in msg, msg


@pytest.mark.parametrize("name, dtype, args", [
    ("atomic_set", "i32", (2**40, 0)),
    ("atomic_set", "i32", (2**31, 0)),
    ("atomic_add", "i32", (-2**31 - 1, 0)),
    ("atomic_set", "u64", (-1, 0)),
    ("atomic_set", "u64", (2**64, 0)),
    ("atomic_set", "i64", (2**63, 0)),
    ("atomic_compare_swap", "i32", (2**40, 1, 0)),  # cond
    ("atomic_compare_swap", "i32", (0, 2**40, 0)),  # value
    ("atomic_fetch_add", "u64", (-5, 0)),
])
def test_atomic_value_overflow(arrays, name, dtype, args):
    with pytest.raises(OverflowError) as info:
        getattr(shmem, name)(arrays[dtype][:1], *args)
    msg = str(info.value)
    assert msg.startswith(where(name)) and "does not fit in the array's element type" in msg, msg
    assert not arrays[dtype].any()


def test_atomic_value_limits_fit(arrays):
    i32, u64 = arrays["i32"][:1], arrays["u64"][:1]
    shmem.atomic_set(i32, 2**31 - 1, 0)
    assert shmem.atomic_swap(i32, -2**31, 0) == 2**31 - 1
    shmem.atomic_set(u64, 2**64 - 1, 0)
    assert shmem.atomic_fetch(u64, 0) == 2**64 - 1
    i32[0] = 0
    u64[0] = 0


def test_atomic_value_of_the_wrong_type(arrays):
    with pytest.raises(TypeError) as info:
        shmem.atomic_add(arrays["i64"][:1], 1.5, 0)
    assert str(info.value).startswith(where("atomic_add")) and "value must be an integer" in str(info.value)
    with pytest.raises(TypeError) as info:
        shmem.atomic_compare_swap(arrays["i64"][:1], "0", 1, 0)
    assert str(info.value).startswith(where("atomic_compare_swap")) and "cond must be an integer" in str(info.value)
    assert not arrays["i64"].any()


def test_float_atomic_value_of_the_wrong_type_names_the_call(arrays):
    with pytest.raises(TypeError) as info:
        shmem.atomic_set(arrays["f64"][:1], "x", 0)
    assert str(info.value).startswith(where("atomic_set")), info.value


def test_unknown_amo_op(arrays):
    for call, fn, args in [("atomic_op", shmem.atomic_op, (arrays["i64"][:1], 1, "nope", 0)),
                           ("atomic_fetch_op", shmem.atomic_fetch_op, (arrays["i64"][:1], 1, 99, 0)),
                           ("atomic_fetch_op_nbi", shmem.atomic_fetch_op_nbi,
                            (np.zeros(1, np.int64), arrays["i64"][:1], 1, "mul", 0))]:
        msg = raises(shmem.InvalidArgumentError, fn, *args)
        assert msg.startswith(f"pyshmem.{call}") and "unknown op" in msg and "AMO.ADD" in msg, msg


# --------------------------------------------------------------------------- cmp, sigop, signals, waits

@pytest.mark.parametrize("bad", [99, -1, 6])
def test_bad_cmp_number(arrays, bad):
    iv = arrays["i64"][:1]
    for name, fn, args in [("wait_until", shmem.wait_until, (iv, bad, 1)),
                           ("test", shmem.test, (iv, bad, 0)),
                           ("signal_wait_until", shmem.signal_wait_until, (arrays["sig"], bad, 0)),
                           ("test_any", shmem.test_any, (arrays["i64"], bad, 0)),
                           ("wait_until_all", shmem.wait_until_all, (arrays["i64"], bad, 1))]:
        msg = raises(shmem.InvalidArgumentError, fn, *args)
        assert msg.startswith(where(name)) and f"cmp={bad} is not a comparison" in msg, msg
        assert "CMP.EQ" in msg, msg


@pytest.mark.parametrize("bad", ["foo", "=", ""])
def test_bad_cmp_string(arrays, bad):
    for name, fn, args in [("wait_until", shmem.wait_until, (arrays["i64"][:1], bad, 1)),
                           ("test", shmem.test, (arrays["i64"][:1], bad, 0)),
                           ("test_some", shmem.test_some, (arrays["i64"], bad, 0))]:
        msg = raises(shmem.InvalidArgumentError, fn, *args)
        assert msg.startswith(where(name)) and f"unknown comparison '{bad}'" in msg and "'=='" in msg, msg


def test_cmp_of_the_wrong_type(arrays):
    with pytest.raises(TypeError) as info:
        shmem.test(arrays["i64"][:1], 1.5, 0)
    assert str(info.value).startswith(where("test")) and "cmp must be an integer" in str(info.value)


@pytest.mark.parametrize("bad", [99, -1, 2])
def test_bad_sigop(arrays, bad):
    x, sig = arrays["i64"], arrays["sig"]
    for name in ("put_signal", "put_signal_nbi"):
        msg = raises(shmem.InvalidArgumentError, getattr(shmem, name), x, np.ones(4, np.int64), 0, sig, 1, bad)
        assert msg.startswith(where(name)) and "SIGNAL_SET or SIGNAL_ADD" in msg and str(bad) in msg, msg
    shmem.quiet()
    assert int(sig[0]) == 0, "a rejected put_signal updated the signal"
    assert not x.any(), "a rejected put_signal wrote the data"


@pytest.mark.parametrize("bad", ["sigop", "signal"])
def test_rejected_strided_put_signal_writes_nothing(bad):
    x, sig = shmem.zeros(8, dtype=np.int64), shmem.new_signal()
    try:
        args = (sig, 1, 99) if bad == "sigop" else (np.zeros(1, np.uint64), 1, shmem.SIGNAL_SET)
        with pytest.raises(shmem.InvalidArgumentError):
            shmem.put_signal(x[::2], np.ones(4, np.int64), 0, *args)
        assert not x.any(), f"rejected put_signal wrote {x}"
    finally:
        shmem.free(sig)
        shmem.free(x)


def test_sigop_of_the_wrong_type(arrays):
    with pytest.raises(TypeError) as info:
        shmem.put_signal(arrays["i64"], np.ones(4, np.int64), 0, arrays["sig"], 1, "add")
    assert str(info.value).startswith(where("put_signal")) and "sigop must be an integer" in str(info.value)
    assert int(arrays["sig"][0]) == 0


def test_signal_value_range(arrays):
    with pytest.raises(OverflowError) as info:
        shmem.put_signal(arrays["i64"], np.ones(4, np.int64), 0, arrays["sig"], -1, shmem.SIGNAL_SET)
    msg = str(info.value)
    assert msg.startswith(where("put_signal")) and "value -1 does not fit" in msg, msg
    assert "(uint64: 0..2**64-1)" in msg and "wider dtype" in msg, msg


def test_signal_must_be_a_one_element_uint64_array(arrays):
    for bad in (arrays["i64"][:1], arrays["u64"][:2], arrays["f64"][:1]):
        msg = raises(shmem.InvalidArgumentError, shmem.signal_fetch, bad)
        assert msg.startswith(where("signal_fetch")) and "1-element uint64" in msg and "new_signal()" in msg, msg
        msg = raises(shmem.InvalidArgumentError, shmem.put_signal, arrays["i32"], np.ones(4, np.int32), 0, bad, 1,
                     shmem.SIGNAL_SET)
        assert msg.startswith(where("put_signal")) and "new_signal()" in msg, msg
    assert not arrays["i32"].any()


def test_wait_variables(arrays):
    msg = raises(shmem.InvalidArgumentError, shmem.wait_until, arrays["i64"][:2], shmem.CMP.EQ, 0)
    assert msg.startswith(where("wait_until")) and "ivar must be a 1-element" in msg and "got 2" in msg, msg
    for key, width in (("f64", "float64"), ("i8", "int8"), ("u8", "uint8")):
        msg = raises(shmem.ShmemTypeError, shmem.test, arrays[key][:1], shmem.CMP.EQ, 0)
        assert msg.startswith(where("test")) and f"ivar is {width}" in msg and "int16/32/64" in msg, msg
        msg = raises(shmem.ShmemTypeError, shmem.test_all, arrays[key], shmem.CMP.EQ, 0)
        assert msg.startswith(where("test_all")) and f"ivars is {width}" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.test_all_vector, arrays["i64"], shmem.CMP.EQ, [0, 0])
    assert msg.startswith(where("test_all_vector")) and "values has 2 entries but ivars has 4" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.test_any, arrays["i64"], shmem.CMP.EQ, 0, [0])
    assert msg.startswith(where("test_any")) and "status has 1 entries but ivars has 4" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.test_any, arrays["m2d"][:, :2], shmem.CMP.EQ, 0)
    assert msg.startswith(where("test_any")) and "contiguous" in msg, msg
    with pytest.raises(OverflowError):
        shmem.test(arrays["i32"][:1], shmem.CMP.EQ, 2**40)


def test_lock_must_be_a_one_element_int64_array(arrays):
    for bad in (arrays["i64"][:2], arrays["i32"][:1], arrays["f64"][:1]):
        for name in ("set_lock", "test_lock", "clear_lock"):
            msg = raises(shmem.InvalidArgumentError, getattr(shmem, name), bad)
            assert msg.startswith(where(name)) and "new_lock()" in msg, msg
    with pytest.raises(TypeError):
        shmem.set_lock()
    assert shmem.test_lock(arrays["lock"]) is False  # still a working lock
    shmem.clear_lock(arrays["lock"])


# --------------------------------------------------------------------------- contexts

def test_created_contexts_work_until_destroyed(arrays):
    x = arrays["i64"]
    for args in ((), (0,), (shmem.CTX_PRIVATE, None), (shmem.CTX_SERIALIZED | shmem.CTX_NOSTORE, shmem.TEAM_WORLD)):
        ctx = shmem.Ctx.create(*args)
        assert ctx and ctx != shmem.CTX_DEFAULT and ctx.get_team() == shmem.TEAM_WORLD
        shmem.put(x, np.full(4, 5, np.int64), 0, ctx=ctx)
        assert shmem.atomic_fetch_inc(x[:1], 0, ctx=ctx) == 5
        ctx.fence()
        ctx.quiet()
        ctx.destroy()
        assert not ctx and x.tolist() == [6, 5, 5, 5]
        msg = raises(shmem.InvalidArgumentError, shmem.put, x, np.ones(4, np.int64), 0, None, ctx)
        assert msg.startswith(where("put")) and "destroyed context" in msg, msg
    x[:] = 0


def test_ctx_default_is_accepted(arrays):
    x, ctx = arrays["i64"], shmem.CTX_DEFAULT
    shmem.put(x, np.full(4, 3, np.int64), 0, ctx=ctx)
    shmem.put(x, np.full(4, 3, np.int64), 0, None, ctx)
    shmem.put_nbi(x, np.full(4, 4, np.int64), 0, ctx=shmem.Ctx(ctx))
    shmem.quiet(ctx)
    shmem.fence(ctx=ctx)
    ctx.quiet()
    out = np.zeros(4, np.int64)
    shmem.get(out, x, 0, ctx=ctx)
    assert out.tolist() == [4] * 4
    assert shmem.atomic_fetch_add(x[:1], 1, 0, ctx) == 4
    shmem.atomic_inc(x[:1], 0, ctx=ctx)
    shmem.put_signal(x, out, 0, arrays["sig"], 1, shmem.SIGNAL_SET, None, ctx)
    shmem.quiet(ctx=None)
    assert x.tolist() == [4] * 4 and int(arrays["sig"][0]) == 1
    x[:] = 0
    arrays["sig"][0] = 0


@pytest.mark.parametrize("bad", [object(), "ctx", 0, "CTX_INVALID"])
def test_ctx_other_objects_are_rejected(arrays, bad):
    invalid = bad == "CTX_INVALID"
    bad = shmem.CTX_INVALID if invalid else bad
    x = arrays["i64"]
    for name, fn, args in [("put", shmem.put, (x, np.ones(4, np.int64), 0, None, bad)),
                           ("get", shmem.get, (np.ones(4, np.int64), x, 0, None, bad)),
                           ("atomic_add", shmem.atomic_add, (x[:1], 1, 0, bad)),
                           ("put_signal", shmem.put_signal, (x, np.ones(4, np.int64), 0, arrays["sig"], 1,
                                                             shmem.SIGNAL_SET, None, bad)),
                           ("fence", shmem.fence, (bad,)),
                           ("quiet", shmem.quiet, (bad,))]:
        if invalid:
            msg = raises(shmem.InvalidArgumentError, fn, *args)
            assert msg.startswith(where(name)) and "CTX_INVALID" in msg, msg
        else:
            msg = raises(shmem.ShmemTypeError, fn, *args)
            assert msg.startswith(where(name)) and "ctx must be a pyshmem.Ctx" in msg, msg
    assert not x.any() and int(arrays["sig"][0]) == 0


def test_ctx_constructor_type_check():
    with pytest.raises(TypeError) as info:
        shmem.Ctx(object())
    assert "Ctx" in str(info.value)
    assert shmem.Ctx(shmem.CTX_DEFAULT) == shmem.CTX_DEFAULT and not shmem.Ctx()


# --------------------------------------------------------------------------- allocation and free

def test_bad_allocation_arguments():
    msg = raises(shmem.InvalidArgumentError, shmem.alloc, -1)
    assert msg.startswith("pyshmem.alloc") and "must be >= 0" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.alloc, 16, align=3)
    assert msg.startswith(where("alloc")) and "not a power of two" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.zeros, (-1, 2))
    assert msg.startswith(where("zeros")) and "shape must be >= 0 (got -1)" in msg, msg
    msg = raises(shmem.ShmemTypeError, shmem.zeros, 3, dtype=object)
    assert "object arrays" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.fromalloc, memoryview(bytearray(8)), 4, np.int64)
    assert msg.startswith("pyshmem.fromalloc") and "needs 32 bytes" in msg, msg


def test_heap_exhausted_in_process():
    """Asking for more than the whole heap fails cleanly and leaves the heap usable."""
    huge = 1 << 50
    msg = raises(shmem.HeapExhaustedError, shmem.alloc, huge)
    assert msg.startswith(where("alloc")) and f"requested {huge} bytes" in msg and "PYSHMEM_SYMMETRIC_SIZE" in msg
    a = shmem.ones(8, dtype=np.int32)
    assert a.sum() == 8
    shmem.free(a)


def test_heap_exhausted_subprocess():
    proc = run_py("""
        report(shmem.zeros, 2 * 1024 * 1024, dtype=np.uint8)      # 2 MiB on a 1 MiB heap
        a = shmem.zeros(1000, dtype=np.int64)                     # the heap still works
        a[:] = 7
        b = shmem.ones(10, dtype=np.int32)
        print("SMALL", int(a.sum()), int(b.sum()))
        shmem.free(a); shmem.free(b)
        # fill the heap, fail, free, and succeed again
        big = shmem.empty(700 * 1024, dtype=np.uint8)
        report(shmem.empty, 700 * 1024, dtype=np.uint8)
        shmem.free(big)
        again = shmem.empty(700 * 1024, dtype=np.uint8)
        print("REFILL", again.nbytes)
    """, env={"PYSHMEM_SYMMETRIC_SIZE": "1M"})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    lines = proc.stdout.splitlines()
    first, second = lines[0], lines[2]
    for line, call in ((first, "zeros"), (second, "empty")):  # errors name the call the program made
        assert line.startswith(f"HeapExhaustedError|True|pyshmem.{call} on PE 0: symmetric heap exhausted"), out
        assert "bytes free of" in line and "PYSHMEM_SYMMETRIC_SIZE (currently 1048576 bytes)" in line, line
    assert "requested 2097152 bytes" in first and "1048576 bytes free" in first, first
    assert f"requested {700 * 1024} bytes" in second, second
    assert issubclass(shmem.HeapExhaustedError, MemoryError)
    assert lines[1] == "SMALL 7000 10", out
    assert lines[3] == f"REFILL {700 * 1024}", out


def test_free_errors():
    a = shmem.zeros(8, dtype=np.int64)
    msg = raises(shmem.InvalidArgumentError, shmem.free, np.zeros(8))
    assert msg.startswith("pyshmem.free") and "not symmetric memory" in msg and "pyshmem.alloc" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.free, a[2:5])
    assert msg.startswith("pyshmem.free") and "view into a symmetric allocation" in msg, msg
    msg = raises(shmem.InvalidArgumentError, shmem.free, "nope")
    assert msg.startswith("pyshmem.free") and "not symmetric memory" in msg, msg
    with pytest.raises(shmem.ShmemTypeError):
        shmem.del_array([1, 2])
    shmem.free(a)
    msg = raises(shmem.InvalidArgumentError, shmem.free, a)
    assert msg.startswith("pyshmem.free") and "double free" in msg, msg
    m = shmem.alloc(64)
    shmem.free(m)
    msg = raises(shmem.InvalidArgumentError, shmem.free, m)
    assert "double free" in msg, msg


def test_free_of_a_leading_slice_is_rejected():
    a = shmem.zeros(8, dtype=np.int64)
    try:
        with pytest.raises(shmem.InvalidArgumentError, match="view into a symmetric allocation"):
            shmem.free(a[:2])
    finally:
        try:
            shmem.free(a)
        except shmem.InvalidArgumentError:
            pass  # already freed by the buggy call


# --------------------------------------------------------------------------- environment, finalize

@pytest.mark.parametrize("name, value, kind", [
    ("PYSHMEM_SYMMETRIC_SIZE", "abc", "a byte size"),
    ("PYSHMEM_SYMMETRIC_SIZE", "12Q", "a byte size"),
    ("PYSHMEM_SYMMETRIC_SIZE", "-5M", "a byte size"),
    ("PYSHMEM_DEBUG", "maybe", "a boolean"),
    ("PYSHMEM_BOOTSTRAP_TIMEOUT", "soon", "a number"),
    ("PYSHMEM_SPIN_ITERS", "many", "an integer"),
])
def test_bad_environment_variable(name, value, kind):
    proc = run_py("""
        report(shmem.init)
        report(shmem.zeros, 4)
        print("INITIALIZED", shmem.initialized())
    """, env={name: value})
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    lines = proc.stdout.splitlines()
    for line in lines[:2]:  # init() and the auto-init of the first call both explain it
        assert line.startswith("InvalidArgumentError|True|"), out
        # Parsed before the PE is known: the call is named, no PE yet.
        assert f"|pyshmem.init: environment variable {name}='{value}' is not {kind}" in line, line
        assert "fix or unset it" in line, line
    assert lines[2] == "INITIALIZED False", out


def test_cuda_backend_without_a_gpu_says_how_to_run_on_the_cpu():
    proc = run_py("report(shmem.init)\n", env={"PYSHMEM_BACKEND": "cuda",
                                               "PYSHMEM_CUDA_DRIVER": "libcuda-missing-for-this-test.so"})
    assert proc.stdout.startswith("ShmemOSError|True|"), proc.stdout + proc.stderr
    assert "PYSHMEM_BACKEND=cuda but PE 0: cannot load the CUDA driver 'libcuda-missing-for-this-test.so'" \
        in proc.stdout, proc.stdout
    assert "use PYSHMEM_BACKEND=cpu" in proc.stdout, proc.stdout


def test_auto_backend_without_a_gpu_runs_on_the_cpu():
    proc = run_py("shmem.init()\nfrom pyshmem._lib import lib\nprint('DESC', lib.gpu_describe())\n",
                  env={"PYSHMEM_CUDA_DRIVER": "libcuda-missing-for-this-test.so"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "DESC cpu (GPU heap not used: PE 0: cannot load the CUDA driver" in proc.stdout, proc.stdout


def test_calls_after_finalize():
    proc = run_py("""
        a = shmem.zeros(4, dtype=np.int64)
        shmem.finalize()
        print("STATE", shmem.initialized(), shmem.finalized())
        report(shmem.put, a, np.zeros(4, np.int64), 0)
        report(shmem.init)
        report(shmem.zeros, 4)
        report(shmem.barrier_all)
        report(shmem.free, a)
        shmem.finalize()                 # a second finalize is a no-op
        print("DONE")
    """)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    lines = proc.stdout.splitlines()
    assert lines[0] == "STATE False True", out
    for line in lines[1:6]:
        assert line.startswith("NotInitializedError|True|"), out
        assert "finalize" in line, line
    assert "cannot be initialised again" in lines[2], lines[2]
    assert lines[5].startswith("NotInitializedError|True|pyshmem.free on PE 0: called after finalize()"), lines[5]
    assert lines[6] == "DONE", out


def test_call_after_finalize_names_the_call():
    """Each entry point names itself (not the auto-init underneath) after finalize."""
    proc = run_py("""
        a = shmem.zeros(4, dtype=np.int64)
        sig = shmem.new_signal()
        shmem.finalize()
        report(shmem.put, a, np.zeros(4, np.int64), 0)
        report(shmem.get, np.zeros(4, np.int64), a, 0)
        report(shmem.atomic_add, a[:1], 1, 0)
        report(shmem.wait_until, a[:1], shmem.CMP.EQ, 0)
        report(shmem.put_signal, a, np.zeros(4, np.int64), 0, sig, 1, shmem.SIGNAL_SET)
        report(shmem.quiet)
        report(shmem.my_pe)
        a[:] = 1  # the stale view stays safe to touch
        print("TOUCHED", int(a.sum()))
    """)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    lines = proc.stdout.splitlines()
    for line, call in zip(lines, ["put", "get", "atomic_add", "wait_until", "put_signal", "quiet", "my_pe"]):
        assert line.startswith(f"NotInitializedError|True|pyshmem.{call}"), (call, out)
        assert "called after finalize()" in line, line
    assert lines[-1] == "TOUCHED 4", out


def test_rma_rejects_a_source_in_another_byte_order():
    """Copying raw bytes between byte orders would silently store wrong values."""
    x = shmem.zeros(2, dtype=np.int64)
    try:
        with pytest.raises(shmem.ShmemTypeError, match=r"pyshmem\.put on PE 0: byte order mismatch: source"):
            shmem.put(x, np.array([1, 2], dtype=">i8"), 0)
        assert (x == 0).all()
        shmem.put(x, np.array([1, 2], dtype=">i8").astype("=i8"), 0)  # the fix the message gives works
        assert list(x) == [1, 2]
    finally:
        shmem.free(x)


def test_large_transfer_errors_raise_instead_of_crashing():
    """Transfers of >= 64 KiB run without the GIL; their errors must still be raised."""
    x = shmem.zeros(100_000)
    try:
        with pytest.raises(shmem.InvalidArgumentError, match="target is not symmetric memory"):
            shmem.put(np.zeros(100_000), x, 0)
        with pytest.raises(shmem.InvalidArgumentError, match="source is not symmetric memory"):
            shmem.get(np.zeros(100_000), np.ones(100_000), 0)
    finally:
        shmem.free(x)


def test_free_of_an_array_made_by_fromalloc_with_a_smaller_shape():
    from pyshmem._lib import lib

    shmem.my_pe()  # starts the one-PE job if this test runs first
    before = lib.bytes_free()
    mem = shmem.alloc(64)
    view = shmem.fromalloc(mem, 4, np.int32)
    assert view.shape == (4,) and view.dtype == np.int32 and np.shares_memory(view, np.asarray(mem))
    view[:] = [1, 2, 3, 4]
    assert bytes(memoryview(mem)[:16]) == np.array([1, 2, 3, 4], np.int32).tobytes()
    shmem.free(view)  # shmem4py allows this: it frees the whole allocation
    assert lib.bytes_free() == before, "freeing the smaller view must release all 64 bytes"
    with pytest.raises(shmem.InvalidArgumentError) as info:
        shmem.free(mem)
    assert str(info.value).startswith(where("free")) and "freed already" in str(info.value), info.value


def test_oversized_heap_request_in_the_environment_is_an_error():
    env = dict(os.environ, PYSHMEM_SYMMETRIC_SIZE="100000000T")
    proc = subprocess.run([sys.executable, "-c", "import pyshmem; pyshmem.init()"], capture_output=True, text=True,
                          env=env, timeout=60, cwd=str(REPO))
    assert proc.returncode != 0
    assert "PYSHMEM_SYMMETRIC_SIZE" in proc.stderr and "below 8 EiB" in proc.stderr, proc.stderr
