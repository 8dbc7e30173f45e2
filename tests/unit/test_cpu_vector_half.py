"""CUDA's vector types, __half/__nv_bfloat16 and the conversion/rounding intrinsics on the
CPU build (pyshmem/cpu_vector_types.h, cpu_half.h, cpu_math.h): the kernels of
tests/kernels/vector_half.cu run in the test process and their values are checked against
NumPy (float16 conversions and arithmetic), bit arithmetic (bfloat16) and exact rational
arithmetic (the directed rounding modes, fma); the same source compiles for sm_90 with
NVRTC."""

import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import pyshmem.cuda as pcuda
from conftest import cpu_kernel_toolchain_missing

# Overflow to inf and NaN in NumPy's float16/float64 casts are the point of these inputs.
pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning",
                                        "ignore:invalid value encountered:RuntimeWarning")

SOURCE = (Path(__file__).resolve().parents[1] / "kernels" / "vector_half.cu").read_text()
REASON = cpu_kernel_toolchain_missing()
MODES = ("rn", "rz", "ru", "rd")
GRID, BLOCK = 8, 128


@pytest.fixture(scope="module")
def module():
    if REASON is not None:
        pytest.skip(str(REASON))
    return pcuda.Module(SOURCE, name="unit_cpu_vector_half", target="cpu")


def run(module, name, *args, grid=GRID):
    pcuda.launch(module.get_kernel(name), grid, BLOCK, *args)


def round_fraction(v, mant, exp, mode):
    """The bits of the binary format (mant stored significand bits, exp exponent bits)
    nearest the exact rational v in `mode`, by exact arithmetic: the test's reference."""
    bias = 2 ** (exp - 1) - 1
    emin = 1 - bias
    neg = v < 0
    a = abs(Fraction(v))
    sign = int(neg) << (mant + exp)
    if a == 0:
        return sign
    e = a.numerator.bit_length() - a.denominator.bit_length()
    while Fraction(2) ** e > a:
        e -= 1
    while Fraction(2) ** (e + 1) <= a:
        e += 1
    scaled = a / Fraction(2) ** (max(e, emin) - mant)
    q = scaled.numerator // scaled.denominator
    rem = scaled - q
    away = mode == "rn" or (mode == "ru" and not neg) or (mode == "rd" and neg)
    if mode == "rn":
        q += rem > Fraction(1, 2) or (rem == Fraction(1, 2) and q % 2 == 1)
    elif rem:
        q += away
    bits = q + ((max(e, emin) - emin) << mant)
    inf = ((1 << exp) - 1) << mant
    if bits >= inf:
        bits = inf if away else inf - 1
    return sign | bits


def test_round_fraction_agrees_with_numpy():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    x = x[np.isfinite(x)]
    expected = x.astype(np.float16).view(np.uint16)
    got = [round_fraction(Fraction(float(v)), 10, 5, "rn") for v in x]
    assert got == expected.tolist()


def half_inputs():
    """Float32 values covering every binary16 value, every midpoint between neighbours
    (ties), the floats next to the midpoints, random bit patterns, and the edges:
    overflow threshold, subnormals, zeros, infinities, NaN."""
    halves = np.arange(0x10000, dtype=np.uint32).astype(np.uint16).view(np.float16)
    finite = np.sort(halves[np.isfinite(halves)].astype(np.float64))
    finite = np.unique(finite)
    mids = ((finite[:-1] + finite[1:]) / 2).astype(np.float32)  # exact: 12 bits
    rng = np.random.default_rng(7)
    rand = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    edges = np.array([65504, 65519.996, 65520, 65536, 1e10, np.inf, -np.inf, np.nan, -np.nan, 2.0**-24, 2.0**-25,
                      2.0**-25 * 1.0000001, 3 * 2.0**-26, 2.0**-26, 1e-30, -1e-30, 0.0, -0.0, 1 + 2.0**-11,
                      1 + 3 * 2.0**-11, -(1 + 2.0**-11)], np.float32)
    return np.concatenate([halves.astype(np.float32), mids, np.nextafter(mids, np.float32(np.inf)),
                           np.nextafter(mids, np.float32(-np.inf)), rand, edges]).astype(np.float32)


def directed_half(x):
    """float16 bits of float x rounded down and up (exact bracketing with np.nextafter)."""
    h = np.float16(x)
    lo = h if float(h) <= x else np.nextafter(h, np.float16(-np.inf))
    hi = h if float(h) >= x else np.nextafter(h, np.float16(np.inf))
    return int(lo.view(np.uint16)), int(hi.view(np.uint16))


def convert(module, kernel, x, d):
    """Runs half_convert/bf16_convert on floats x and doubles d: (bits of x in the four
    modes, shape (n, 4); floats of the bit patterns i & 0xffff; bits of d), after checking
    that NaN gives CUDA's canonical NaN 0x7fff in every mode."""
    n = x.size
    out, back, from_double = np.zeros(4 * n, np.uint16), np.zeros(n, np.float32), np.zeros(n, np.uint16)
    run(module, kernel, x, d, out, back, from_double, np.int32(n))
    out = out.reshape(n, 4)
    assert (out[np.isnan(x)] == 0x7FFF).all()
    return out, back, from_double


def test_half_conversions_round_like_numpy_in_every_mode(module):
    x = half_inputs()
    n = x.size
    d = x.astype(np.float64)
    # doubles whose direct rounding differs from rounding through float first
    d[:6] = [1 + 2.0**-11 + 2.0**-40, 1 + 2.0**-11 - 2.0**-40, -(1 + 2.0**-11 + 2.0**-40), 65520 - 2.0**-30,
             2.0**-25 + 2.0**-60, 1e300]
    out, back, from_double = convert(module, "half_convert", x, d)
    nan = np.isnan(x)
    ref = x[~nan].astype(np.float16).view(np.uint16)
    np.testing.assert_array_equal(out[~nan, 0], ref)  # the implicit conversion too (0xdead if not)
    sample = np.flatnonzero(~nan)[::7]
    for i in sample:
        lo, hi = directed_half(float(x[i]))
        rz = lo if x[i] > 0 or (x[i] == 0 and not math.copysign(1, x[i]) < 0) else hi
        assert (out[i, 1], out[i, 2], out[i, 3]) == (rz, hi, lo), (x[i], out[i])
    # half -> float is exact: every bit pattern (NaNs stay NaN)
    all_halves = (np.arange(n) & 0xFFFF).astype(np.uint16).view(np.float16).astype(np.float32)
    same = np.isnan(all_halves) == np.isnan(back)
    assert same.all() and (back[~np.isnan(back)] == all_halves[~np.isnan(all_halves)]).all()
    assert np.array_equal(back.view(np.uint32)[~np.isnan(back)], all_halves.view(np.uint32)[~np.isnan(back)])
    dn = np.isnan(d)
    np.testing.assert_array_equal(from_double[~dn], d[~dn].astype(np.float16).view(np.uint16))
    assert from_double[:6].tolist() == [0x3C01, 0x3C00, 0xBC01, 0x7BFF, 0x0001, 0x7C00]


def bf16_reference(x32):
    """bfloat16 bits of float32 values: (rn, rz, ru, rd) by integer arithmetic on the bits."""
    b = x32.view(np.uint32).astype(np.uint64)
    neg = (b >> 31).astype(bool)
    t = b >> 16
    inexact = (b & 0xFFFF) != 0
    rn = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    ru = t + (inexact & ~neg)
    rd = t + (inexact & neg)
    return [r.astype(np.uint16) for r in (rn, t, ru, rd)]


def test_bf16_conversions(module):
    rng = np.random.default_rng(3)
    rand = rng.integers(0, 2**32, 40000, dtype=np.uint64).astype(np.uint32)
    ties = (rng.integers(0, 2**16, 2000, dtype=np.uint64).astype(np.uint32) << 16) | 0x8000
    edges = np.array([0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0x00000001, 0x80008000, 0x00018000, 0x7F800000,
                      0xFF800000, 0x80000000, 0], np.uint32)
    x = np.concatenate([rand, ties, edges]).view(np.float32)
    n = x.size
    d = x.astype(np.float64)
    d[:3] = [1 + 2.0**-8 + 2.0**-40, 1 + 2.0**-8, 3.5e38]  # above a tie, a tie, beyond the largest finite
    out, back, from_double = convert(module, "bf16_convert", x, d)
    nan = np.isnan(x)
    for mode, ref in enumerate(bf16_reference(x[~nan])):
        np.testing.assert_array_equal(out[~nan, mode], ref, err_msg=MODES[mode])
    # bfloat16 -> float is exact: the bits shifted up
    np.testing.assert_array_equal(back.view(np.uint32), (np.arange(n) & 0xFFFF).astype(np.uint32) << 16)
    assert from_double[:3].tolist() == [0x3F81, 0x3F80, 0x7F80]
    finite = np.flatnonzero(np.isfinite(d))[3:2000]
    assert from_double[finite].tolist() == [round_fraction(Fraction(float(v)), 7, 8, "rn") for v in d[finite]]


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f32_to_bf16(x):
    out = bf16_reference(x.astype(np.float32))[0]
    return np.where(np.isnan(x), 0x7FFF, out).astype(np.uint16)


def random_16bit(rng, n):
    """Random bit patterns: every class (zeros, subnormals, normals, infinities, NaNs), and
    one in two with the exponent bits of half's 1 (1 for half, about 2^-7 for bfloat16),
    where sums and products of close values round at interesting places."""
    bits = rng.integers(0, 2**16, n, dtype=np.uint64).astype(np.uint16)
    bits[::2] = (bits[::2] & 0x83FF) | 0x3C00
    return bits


@pytest.mark.parametrize("kind", ["half", "bf16"])
def test_16bit_arithmetic_is_float_rounded_once(module, kind):
    rng = np.random.default_rng(11)
    n = 6000
    a, b, c = (random_16bit(rng, n) for _ in range(3))
    if kind == "half":
        a[:4], b[:4], c[:4] = [0x3C00, 0x7BFF, 0x0001, 0x3C01], [0x3C00, 0x7BFF, 0x8001, 0x3C01], [0x8000, 0, 0, 0xBC02]
    out = np.zeros(16 * n, np.uint16)
    cmp = np.zeros(n, np.uint32)
    run(module, f"{kind}_arith", a, b, c, out, cmp, np.int32(n))
    out = out.reshape(n, 16)
    if kind == "half":
        fa, fb, fc = (v.view(np.float16).astype(np.float32) for v in (a, b, c))
        mant, exp = 10, 5

        def to16(v):
            v = np.asarray(v, np.float32)
            return np.where(np.isnan(v), 0x7FFF, v.astype(np.float16).view(np.uint16)).astype(np.uint16)
    else:
        fa, fb, fc = (bf16_to_f32(v) for v in (a, b, c))
        mant, exp = 7, 8
        to16 = f32_to_bf16
    with np.errstate(all="ignore"):
        expected = {0: fa + fb, 1: fa - fb, 2: fa * fb, 3: fa / fb}
        prod = to16(fa * fb)
        prod_f = prod.view(np.float16).astype(np.float32) if kind == "half" else bf16_to_f32(prod)
        expected[7] = prod_f + fc
        expected[15] = fa * np.float32(0.5)
        for k, v in expected.items():
            np.testing.assert_array_equal(out[:, k], to16(v), err_msg=f"{kind} op {k}")
        np.testing.assert_array_equal(out[:, 10], out[:, 0])  # +=
        np.testing.assert_array_equal(out[:, 8], a ^ 0x8000)
        np.testing.assert_array_equal(out[:, 9], a & 0x7FFF)
        sat = to16(np.where(np.isnan(fa + fb), 0, np.clip(fa + fb, 0, 1)))
        np.testing.assert_array_equal(out[:, 11], sat)
    # fma: a*b + c exact, rounded once
    for i in range(0, n, 3):
        x, y, z = float(fa[i]), float(fb[i]), float(fc[i])
        if not all(map(math.isfinite, (x, y, z))):
            continue
        ref = round_fraction(Fraction(x) * Fraction(y) + Fraction(z), mant, exp, "rn")
        assert out[i, 4] == ref, (kind, hex(a[i]), hex(b[i]), hex(c[i]), hex(out[i, 4]), hex(ref))
        # __hfma2 on (a, b) * (b, c) + (a, b): both lanes
        assert out[i, 12] == round_fraction(Fraction(x) * Fraction(y) + Fraction(x), mant, exp, "rn")
    nan_a, nan_b = np.isnan(fa), np.isnan(fb)
    # __hmax/__hmin: a NaN loses to a number, two NaNs give canonical NaN; __hmax_nan: NaN wins
    for i in range(n):
        x, y = float(fa[i]), float(fb[i])
        if nan_a[i] and nan_b[i]:
            assert out[i, 5] == out[i, 6] == 0x7FFF
        elif nan_a[i] or nan_b[i]:
            other = b[i] if nan_a[i] else a[i]
            assert out[i, 5] == out[i, 6] == other and out[i, 14] == 0x7FFF
        elif x != y:
            assert out[i, 5] == (a[i] if x > y else b[i]) and out[i, 6] == (a[i] if x < y else b[i])
    # comparisons: ordered forms false with NaN, unordered (and C++'s !=) true
    unord = nan_a | nan_b
    with np.errstate(invalid="ignore"):
        bits = [(fa == fb), (fa != fb) & ~unord, fa < fb, fa <= fb, fa > fb, fa >= fb, (fa == fb) | unord,
                fa != fb, (fa < fb) | unord, (fa >= fb) | unord, fa == fb, fa != fb, fa < fb, nan_a]
    for k, v in enumerate(bits):
        np.testing.assert_array_equal((cmp >> k) & 1, v.astype(np.uint32), err_msg=f"{kind} comparison {k}")
    inf = np.where(np.isinf(fa), np.sign(fa), 0).astype(np.int64) + 1
    np.testing.assert_array_equal((cmp >> 14) & 3, inf)
    np.testing.assert_array_equal((cmp >> 16) & 1, (~nan_a & ~nan_b).astype(np.uint32))  # (a,b) == (a,b)
    if kind == "half":
        assert out[0, 0] == 0x4000 and out[1, 0] == 0x7C00 and out[2, 0] == 0
        # (1 + 2^-10)^2 - (1 + 2^-9) = 2^-20 (subnormal 16) by one rounding; the rounded product gives 0
        assert out[3, 4] == 0x0010 and out[3, 7] == 0


def test_float_to_integer_in_every_mode(module):
    f = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 2.7, -2.7, 0.0, -0.0, 1e10, -1e10, np.nan, np.inf, -np.inf,
                  2147483520.0, 4294967040.0, -3.2e9, 1e20, 65504, 70000, -40000.5, 123.25], np.float32)
    n = f.size
    d = f.astype(np.float64)
    d[:3] = [2.5, 2**63 + 2.0**12, -1.0]
    ints, uints, lls = np.zeros(4 * n, np.int32), np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.int64)
    dints, dulls, hshorts = np.zeros(4 * n, np.int32), np.zeros(4 * n, np.uint64), np.zeros(4 * n, np.int16)
    run(module, "float_to_int", f, d, ints, uints, lls, dints, dulls, hshorts, np.int32(n), grid=1)

    def cvt(x, lo, hi, mode):
        if math.isnan(x):
            return 0
        if math.isinf(x):
            return hi if x > 0 else lo
        fx = Fraction(x)
        r = {"rn": round(fx), "rz": math.trunc(fx), "ru": math.ceil(fx), "rd": math.floor(fx)}[mode]
        return min(max(r, lo), hi)

    for arr, values, lo, hi in [(ints, f, -2**31, 2**31 - 1), (uints, f, 0, 2**32 - 1), (lls, f, -2**63, 2**63 - 1),
                                (dints, d, -2**31, 2**31 - 1), (dulls, d, 0, 2**64 - 1),
                                (hshorts, f.astype(np.float16), -2**15, 2**15 - 1)]:
        got = arr.reshape(n, 4).tolist()
        want = [[cvt(float(x), lo, hi, m) for m in MODES] for x in values]
        assert got == want, arr.dtype


def test_integer_to_float_in_every_mode(module):
    v = np.array([2**24 + 1, 2**24 + 3, -(2**24 + 1), 2**31 - 1, -(2**31), 2**53 + 1, -(2**53 + 1), 2**63 - 1,
                  -(2**63), 0, 7, -7, 2049, 2051, 65519, 65520, 70000, -65536, 2**62 + 2**39 + 1], np.int64)
    n = v.size
    f, d = np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.uint64)
    fi, h = np.zeros(4 * n, np.uint32), np.zeros(4 * n, np.uint16)
    run(module, "int_to_float", v, f, d, fi, h, np.int32(n), grid=1)
    for i, x in enumerate(v.tolist()):
        xi = int(np.int64(x).astype(np.int32))
        for m, mode in enumerate(MODES):
            assert f[4 * i + m] == round_fraction(x, 23, 8, mode), (x, mode)
            assert d[4 * i + m] == round_fraction(x, 52, 11, mode), (x, mode)
            assert fi[4 * i + m] == round_fraction(xi, 23, 8, mode), (xi, mode)
            assert h[4 * i + m] == round_fraction(xi, 10, 5, mode), (xi, mode)


def test_rounded_float_and_double_arithmetic(module):
    rng = np.random.default_rng(5)
    n = 1500
    a = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(np.float32)
    b = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(np.float32)
    c = (rng.standard_normal(n) * 10.0 ** rng.integers(-6, 6, n)).astype(np.float32)
    a[:3], b[:3], c[:3] = [1.0, -1.0, 3e38], [2.0**-30, -(2.0**-30), 3e38], [2.0**-40, 1.0, -1.0]
    da = rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)
    db = rng.standard_normal(n) * 10.0 ** rng.integers(-20, 20, n)
    out, dout = np.zeros(16 * n, np.uint32), np.zeros(8 * n, np.uint64)
    run(module, "rounded_ops", a, b, c, da, db, out, dout, np.int32(n))
    out, dout = out.reshape(n, 16), dout.reshape(n, 8)
    for i in range(n):
        x, y, z = (Fraction(float(t[i])) for t in (a, b, c))
        exact = [x + y, x * y, x / y, x * y + z]
        for op, value in enumerate(exact):
            for m, mode in enumerate(MODES):
                assert out[i, 4 * op + m] == round_fraction(value, 23, 8, mode), (i, op, mode)
        u, w = Fraction(float(da[i])), Fraction(float(db[i]))
        for op, value in enumerate([u + w, u * w]):
            for m, mode in enumerate(MODES):
                assert dout[i, 4 * op + m] == round_fraction(value, 52, 11, mode), (i, op, mode)
    # 1 + 2^-30: only rounding up moves; 3e38 + 3e38 overflows to inf or stays at FLT_MAX
    assert out[0, :4].tolist() == [0x3F800000, 0x3F800000, 0x3F800001, 0x3F800000]
    assert out[2, :4].tolist() == [0x7F800000, 0x7F7FFFFF, 0x7F800000, 0x7F7FFFFF]
    assert np.float32(3.0).view(np.uint32) != out[0, 0]  # the checks are not vacuous


def test_fast_math_is_the_ordinary_math(module):
    x = np.array([0.5, 1.0, 2.0, 3.25, 10.0, -0.75, 1.5, 100.0], np.float32)
    out = np.zeros(8 * x.size, np.float32)
    run(module, "fast_math", x, out, np.int32(x.size), grid=1)
    out = out.reshape(x.size, 8)
    with np.errstate(invalid="ignore"):
        ref = np.stack([np.exp(x), np.log(x), np.sin(x), np.cos(x), np.power(x, np.float32(1.5)), x / np.float32(3),
                        np.clip(x, 0, 1), 1 / np.sqrt(x.astype(np.float64))], axis=1).astype(np.float32)
    np.testing.assert_allclose(out, ref, rtol=2e-7, atol=0, equal_nan=True)
    assert out[0, 7] == np.float32(2**0.5) and out[4, 6] == 1.0 and out[5, 6] == 0.0


def test_vector_loads_and_stores(module):
    n = GRID * BLOCK * 3  # several per thread (grid-stride)
    rng = np.random.default_rng(9)
    fin = rng.standard_normal(4 * n).astype(np.float32)
    iin = rng.integers(-1000, 1000, 4 * n).astype(np.int32)
    fout, iout, dout = np.zeros(4 * n, np.float32), np.zeros(4 * n, np.int32), np.zeros(2 * n, np.float64)
    for arr in (fin, iin, fout, iout, dout):
        assert arr.ctypes.data % 16 == 0
    run(module, "vectors", fin, fout, iin, iout, dout, np.int32(n))
    v, w = fin.reshape(n, 4), iin.reshape(n, 4)
    np.testing.assert_array_equal(fout.reshape(n, 4), np.stack([v[:, 3], v[:, 2] * 2, v[:, 1] + 1, v[:, 0]], 1))
    tid = np.arange(n) % BLOCK
    np.testing.assert_array_equal(iout.reshape(n, 4), np.stack([w[:, 1], w[:, 0], w[:, 3] - w[:, 2], tid], 1))
    np.testing.assert_array_equal(dout.reshape(n, 2), np.stack([v[:, 0], (np.arange(n) // BLOCK) % GRID], 1))


def test_sizes_and_alignments_are_cudas(module):
    expected = [(1, 1), (2, 2), (3, 1), (4, 4), (2, 2), (4, 4),  # char1..4, uchar2, uchar4
                (2, 2), (4, 4), (6, 2), (8, 8), (4, 4), (8, 8),  # short1..4, ushort2, ushort4
                (4, 4), (8, 8), (12, 4), (16, 16), (4, 4), (8, 8), (12, 4), (16, 16),  # int1..4, uint1..4
                (8, 8), (16, 16), (24, 8), (16, 16),  # long1..3, ulong2
                (8, 8), (16, 16), (24, 8), (16, 16),  # longlong1..3, ulonglong2
                (4, 4), (8, 8), (12, 4), (16, 16),  # float1..4
                (8, 8), (16, 16), (24, 8),  # double1..3
                (2, 2), (4, 4), (2, 2), (4, 4)]  # __half, __half2, __nv_bfloat16, __nv_bfloat162
    out = np.zeros(2 * len(expected), np.uint64)
    run(module, "layout", out, grid=1)
    assert [tuple(p) for p in out.reshape(-1, 2).tolist()] == expected


def test_half_atomic_add_from_every_thread(module):
    s = np.zeros(1, np.float16)
    s2 = np.zeros(2, np.float16)
    run(module, "half_atomics", s, s2, grid=4)  # 512 adds: exact in binary16
    assert float(s[0]) == 512.0 and s2.tolist() == [256.0, 1024.0]


def test_the_kernels_compile_for_sm90():
    pytest.importorskip("cuda.core", reason="cuda-core is not installed (pip install 'pyshmem[cuda]')")
    ptx = bytes(pcuda.compile(SOURCE, arch="sm_90", output="ptx", name="vector_half").code).decode()
    for kernel in ("half_convert", "bf16_convert", "half_arith", "bf16_arith", "float_to_int", "int_to_float",
                   "rounded_ops", "fast_math", "vectors", "layout", "half_atomics"):
        assert f".entry {kernel}(" in ptx, kernel
