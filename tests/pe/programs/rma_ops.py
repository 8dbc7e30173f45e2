"""RMA on every PE: put/get/put_nbi/get_nbi/iput/iget with every dtype family.

Covers 1-D and 2-D (C and F order) arrays, contiguous slices and 1-D strided views as
targets and sources, ``size=`` smaller than the arrays, size 0, large (8 MiB) transfers,
put/get to self, a ring shift and an all-to-all exchange. Remote values are checked
after barrier_all; each PE prints ``OK pe=<me>`` at the end.
"""

import numpy as np

import pyshmem as shmem
from _expect import raises

me, npes = shmem.my_pe(), shmem.n_pes()
right, left = (me + 1) % npes, (me - 1) % npes

DTYPES = [
    np.int8, np.int16, np.int32, np.int64,
    np.uint8, np.uint16, np.uint32, np.uint64,
    np.float32, np.float64, np.complex64, np.complex128,
]


def check(cond, msg):
    if not cond:
        raise AssertionError(f"PE {me}: {msg}")


def eq(actual, expected, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    if actual.shape != expected.shape or not np.array_equal(actual, expected):
        diff = np.flatnonzero(actual.ravel() != expected.ravel())[:6] if actual.shape == expected.shape else "shape"
        raise AssertionError(
            f"PE {me}: {what}: mismatch (dtype {actual.dtype}, first bad indices {diff})\n"
            f"  got      {actual.ravel()[:12]}\n  expected {expected.ravel()[:12]}"
        )


def pat(dt, pe, count, salt=0):
    """Values that differ per source PE and per element and fit every dtype (1..113),
    with the dtype's extremes in the first two elements (bit-exact copies)."""
    dt = np.dtype(dt)
    k = np.arange(count)
    v = (k * 7 + pe * 31 + salt * 13) % 113 + 1
    if dt.kind == "c":
        out = (v + 1j * ((k + 3 * pe) % 17 + 1)).astype(dt)
    else:
        out = v.astype(dt)
    if count >= 2:
        if dt.kind in "iu":
            info = np.iinfo(dt)
            out[0], out[1] = info.max - pe, info.min + (pe if dt.kind == "i" else 0)
        elif dt.kind == "f":
            info = np.finfo(dt)
            out[0], out[1] = info.max, -info.tiny * (pe + 1)
    return out


# ---------------------------------------------------------------------------------------
# Per-dtype coverage
N, M = 37, 11
for di, dt in enumerate(DTYPES):
    name = np.dtype(dt).name
    src = pat(dt, me, N, di)
    exp_l = pat(dt, left, N, di)   # what my left neighbour put into me
    exp_r = pat(dt, right, N, di)  # what my right neighbour holds in its get-source
    zero = np.zeros(N, dt)

    a = shmem.zeros(N, dt)            # put target
    c = shmem.zeros(N, dt)            # put_nbi target
    b = shmem.array(src)              # get source (array() ends with sync_all)
    sl = shmem.zeros(N, dt)           # contiguous-slice target
    st = shmem.zeros(2 * N, dt)       # a[::2] target
    st2 = shmem.zeros(3 * N, dt)      # a[1::3] target from a strided source
    sz = shmem.zeros(N, dt)           # size= smaller than the arrays
    s0 = shmem.zeros(N, dt)           # size 0
    t = shmem.zeros(2 * M, dt)        # iput tst=2 sst=3
    t2 = shmem.zeros(N, dt)           # iput default size
    t3 = shmem.zeros(4 * 5, dt)       # iput on a strided view
    me_arr = shmem.zeros(N, dt)       # put to self

    # put: blocking, the source may be reused (overwritten) as soon as put returns
    tmp = src.copy()
    shmem.put(a, tmp, right)
    tmp[:] = 0
    # put_nbi + quiet
    tmp2 = src[::-1].copy()
    shmem.put_nbi(c, tmp2, right)
    shmem.quiet()
    tmp2[:] = 0
    # contiguous slice of a symmetric array as target
    shmem.put(sl[2:7], src[10:15], right)
    # 1-D strided view as target (contiguous source)
    shmem.put(st[::2], src, right)
    # strided target and strided source: size = min(N/3 -> 37, ceil(37/2)=19)
    shmem.put(st2[1::3], src[::2], right)
    # size smaller than both arrays
    shmem.put(sz, src, right, size=5)
    # size 0 and zero-length views: nothing moves
    shmem.put(s0, src, right, size=0)
    shmem.put(s0[3:3], src[:0], right)
    shmem.iput(s0, src, right, tst=2, sst=2, size=0)
    # iput: element i of src at stride 3 -> element i of t at stride 2
    shmem.iput(t, src, right, tst=2, sst=3, size=M)
    # iput default size = min(ceil(37/3)=13, ceil(37/2)=19) = 13
    shmem.iput(t2, src, right, tst=3, sst=2)
    # iput into a strided view: view stride 2 x tst 2 -> elements 0, 4, 8, 12, 16
    shmem.iput(t3[::2], src, right, tst=2, sst=1, size=5)
    # put to self is visible locally after quiet, without a barrier
    shmem.put(me_arr, src, me, ctx=shmem.CTX_DEFAULT)
    shmem.quiet()
    eq(me_arr, src, f"{name}: put to self")

    shmem.barrier_all()

    eq(a, exp_l, f"{name}: put ring")
    eq(c, exp_l[::-1], f"{name}: put_nbi+quiet ring")
    eq(sl[2:7], exp_l[10:15], f"{name}: put into a[2:7]")
    eq(sl[:2], zero[:2], f"{name}: put into a[2:7] touched a[:2]")
    eq(sl[7:], zero[7:], f"{name}: put into a[2:7] touched a[7:]")
    eq(st[::2], exp_l, f"{name}: put into a[::2]")
    eq(st[1::2], zero, f"{name}: put into a[::2] touched the odd elements")
    k = len(exp_l[::2])
    eq(st2[1::3][:k], exp_l[::2], f"{name}: strided->strided put")
    eq(np.delete(st2, np.arange(1, 3 * k, 3)), np.zeros(3 * N - k, dt), f"{name}: strided put wrote outside")
    eq(sz[:5], exp_l[:5], f"{name}: put size=5")
    eq(sz[5:], zero[5:], f"{name}: put size=5 wrote past size")
    eq(s0, zero, f"{name}: size-0 put wrote")
    eq(t[::2], exp_l[::3][:M], f"{name}: iput tst=2 sst=3")
    eq(t[1::2], np.zeros(M, dt), f"{name}: iput wrote between strides")
    eq(t2[::3], exp_l[::2][:13], f"{name}: iput default size")
    eq(np.delete(t2, np.arange(0, N, 3)), np.zeros(N - 13, dt), f"{name}: iput default size wrote outside")
    exp_t3 = np.zeros(20, dt)
    exp_t3[0:20:4] = exp_l[:5]
    eq(t3, exp_t3, f"{name}: iput into a strided view")

    # --- gets (source b holds pat(me) on every PE since array() synced) ---
    d = np.zeros(N, dt)
    shmem.get(d, b, right)
    eq(d, exp_r, f"{name}: get ring")
    d = np.zeros(N, dt)
    shmem.get_nbi(d, b, left)
    shmem.quiet()
    eq(d, exp_l, f"{name}: get_nbi+quiet")
    d = np.zeros(N, dt)
    shmem.get(d, b, me)
    eq(d, src, f"{name}: get from self")
    d = np.zeros(N, dt)
    shmem.get(d[3:8], b[20:25], right)  # slices on both sides
    exp = zero.copy()
    exp[3:8] = exp_r[20:25]
    eq(d, exp, f"{name}: get slice->slice")
    d = np.zeros(N, dt)
    shmem.get(d[::2], b[1::2], right)  # strided local target, strided symmetric source: 18 elements
    exp = zero.copy()
    exp[::2][:18] = exp_r[1::2]
    eq(d, exp, f"{name}: get strided->strided")
    d = np.zeros(N, dt)
    shmem.get_nbi(d[::3], b[::2], right, ctx=shmem.CTX_DEFAULT)
    shmem.quiet()
    exp = zero.copy()
    exp[::3] = exp_r[::2][:13]
    eq(d, exp, f"{name}: get_nbi strided")
    d = np.zeros(N, dt)
    shmem.get(d, b, right, size=4)
    exp = zero.copy()
    exp[:4] = exp_r[:4]
    eq(d, exp, f"{name}: get size=4")
    d = np.zeros(N, dt)
    shmem.get(d, b, right, size=0)
    shmem.get_nbi(d, b, right, size=0)
    shmem.quiet()
    eq(d, zero, f"{name}: get size=0")
    d = np.zeros(3 * M, dt)
    shmem.iget(d, b, right, tst=3, sst=2, size=M)
    exp = np.zeros(3 * M, dt)
    exp[::3] = exp_r[::2][:M]
    eq(d, exp, f"{name}: iget tst=3 sst=2")
    d = np.zeros(N, dt)
    shmem.iget(d, b, right, tst=1, sst=5)  # default size ceil(37/5) = 8
    exp = zero.copy()
    exp[:8] = exp_r[::5]
    eq(d, exp, f"{name}: iget default size")

    # --- 2-D arrays, C and F order (same layout on both sides: element-wise equal) ---
    P = lambda pe: pat(dt, pe, 35, di + 1).reshape(5, 7)  # noqa: E731
    for order in "CF":
        A2 = shmem.zeros((5, 7), dt, order=order)
        B2 = shmem.array(np.asarray(P(me), order=order), order=order)
        check(A2.flags[order + "_CONTIGUOUS"] and B2.flags[order + "_CONTIGUOUS"], f"{order}-order allocation")
        shmem.put(A2, np.asarray(P(me), order=order), right)
        shmem.barrier_all()
        eq(A2, P(left), f"{name}: 2-D {order} put")
        D2 = np.zeros((5, 7), dt, order=order)
        shmem.get(D2, B2, left)
        eq(D2, P(left), f"{name}: 2-D {order} get")
        D2 = np.zeros((5, 7), dt, order=order)
        shmem.get_nbi(D2, B2, right)
        shmem.quiet()
        eq(D2, P(right), f"{name}: 2-D {order} get_nbi")
        shmem.barrier_all()
        shmem.free(B2)
        shmem.free(A2)
    # mixed layouts copy the flat memory order (shmem4py semantics)
    AC = shmem.zeros((5, 7), dt, order="C")
    AF = shmem.zeros((5, 7), dt, order="F")
    shmem.put(AC, np.asfortranarray(P(me)), right)
    shmem.put(AF[:, 3], src[:5], right)  # a contiguous column of an F-order array
    shmem.fence()  # puts to overlapping bytes land in any order without one
    shmem.put(AC[2], src[5:12], right)   # a contiguous row: overwrites row 2
    shmem.barrier_all()
    exp = P(left).ravel(order="F").reshape(5, 7).copy()
    exp[2] = exp_l[5:12]
    eq(AC, exp, f"{name}: C target from F source (+ row 2)")
    exp = np.zeros((5, 7), dt, order="F")
    exp[:, 3] = exp_l[:5]
    eq(AF, exp, f"{name}: put into an F column")

    shmem.barrier_all()  # nobody accesses these arrays any more
    for arr in (AF, AC, me_arr, t3, t2, t, s0, sz, st2, st, sl, b, c, a):
        shmem.free(arr)

# ---------------------------------------------------------------------------------------
# Argument errors (cheap; one each)
ia = shmem.zeros(8, np.int32)
raises(ValueError, shmem.put, ia, np.zeros(8, np.int32), right, size=9, match="size=9 elements exceeds the target (8 elements)")
raises(ValueError, shmem.iput, ia, np.zeros(8, np.int32), right, tst=2, sst=1, size=5,
       match="size=5 elements exceeds the target (4 elements at this stride)")
raises(TypeError, shmem.put, ia, np.zeros(8, np.int64), right, match="dtype mismatch: target is int32 but source is int64")
raises(shmem.ShmemError, shmem.put, np.zeros(8, np.int32), np.zeros(8, np.int32), right, match="target is not symmetric memory")
raises(ValueError, shmem.put, ia, np.zeros(8, np.int32), npes, match=f"PE {npes} is out of range; valid PEs are 0..{npes - 1}")
raises(ValueError, shmem.put, shmem.zeros((4, 4), np.int32)[:, ::2], np.zeros(8, np.int32), right,
       match="target is not contiguous")
shmem.barrier_all()

# shmem4py keyword names, numpy integers for pe/size, ctx=CTX_DEFAULT
kw = shmem.zeros(6, np.int32)
shmem.put(target=kw, source=np.arange(6, dtype=np.int32) + me, pe=np.int64(right), size=np.int32(3),
          ctx=shmem.CTX_DEFAULT)
shmem.iput(target=kw[3:], source=np.arange(6, dtype=np.int32) + 10 * me, pe=right, tst=1, sst=2, size=3)
shmem.quiet(ctx=shmem.CTX_DEFAULT)
shmem.barrier_all()
eq(kw, np.array([left, left + 1, left + 2, 10 * left, 10 * left + 2, 10 * left + 4], np.int32), "keyword put/iput")
d = np.zeros(6, np.int32)
shmem.get(target=d, source=kw, pe=right, size=2, ctx=shmem.Ctx(shmem.CTX_DEFAULT))
shmem.iget(target=d[2:], source=kw, pe=right, tst=1, sst=3, size=2)
eq(d, np.array([me, me + 1, me, 10 * me, 0, 0], np.int32), "keyword get/iget")
shmem.barrier_all()

# ---------------------------------------------------------------------------------------
# Large transfers: 8 MiB float64, and 8 MiB + 13 bytes of random bytes at an odd offset
BIG = 1 << 20
big = shmem.zeros(BIG, np.float64)
base = np.arange(BIG, dtype=np.float64)
shmem.put(big, base * (me + 1) + 0.5, right)
shmem.barrier_all()
eq(big, base * (left + 1) + 0.5, "8 MiB put")
d = np.empty(BIG, np.float64)
shmem.get(d, big, right)  # right holds what I put: a round trip
eq(d, base * (me + 1) + 0.5, "8 MiB get")
d = np.empty(BIG, np.float64)
shmem.get_nbi(d, big, left)
shmem.quiet()
eq(d, base * ((left - 1) % npes + 1) + 0.5, "8 MiB get_nbi")
shmem.barrier_all()

NB = (8 << 20) + 13
big8 = shmem.zeros(NB + 3, np.uint8)
rnd = np.random.default_rng(1234 + me).integers(0, 256, NB, dtype=np.uint8)
shmem.put_nbi(big8[3:], rnd, right)
shmem.quiet()
shmem.barrier_all()
eq(big8[3:], np.random.default_rng(1234 + left).integers(0, 256, NB, dtype=np.uint8), "8 MiB+13 put_nbi at offset 3")
eq(big8[:3], np.zeros(3, np.uint8), "8 MiB+13 put_nbi wrote before its target")
shmem.barrier_all()
shmem.free(big8)
shmem.free(big)

# ---------------------------------------------------------------------------------------
# Ring shift: after k steps every PE holds the token of PE (me - k) mod n
K = 64
ring = shmem.zeros(K, np.int64)
token = np.arange(K, dtype=np.int64) + 1000 * me
cur = token.copy()
for step in range(1, npes + 1):
    shmem.put(ring, cur, right)
    shmem.barrier_all()
    cur = ring.copy()
    eq(cur, np.arange(K, dtype=np.int64) + 1000 * ((me - step) % npes), f"ring shift step {step}")
    shmem.barrier_all()  # nobody overwrites ring before everyone copied it
eq(cur, token, "ring shift full circle")

# ---------------------------------------------------------------------------------------
# Halo exchange of columns: 1-D strided views on both sides (a column of a C-order 2-D
# array), the pattern of a 2-D stencil code. My last interior column goes to the right
# neighbour's left halo; my first interior column comes from the right neighbour by get.
H, W = 9, 6
grid = shmem.zeros((H, W + 2), np.float64)
grid[:, 1:W + 1] = np.arange(H * W, dtype=np.float64).reshape(H, W) + 100 * me
shmem.barrier_all()
shmem.put(grid[:, 0], grid[:, W], right)          # strided -> strided (stride W+2)
halo = np.zeros((H, 3))
shmem.get(halo[:, 2], grid[:, 1], right)          # strided local target, strided source
shmem.barrier_all()
interior = lambda pe: np.arange(H * W, dtype=np.float64).reshape(H, W) + 100 * pe  # noqa: E731
eq(grid[:, 0], interior(left)[:, W - 1], "halo column put")
eq(grid[:, W + 1], np.zeros(H), "halo put wrote the right halo")
eq(grid[:, 1:W + 1], interior(me), "halo put wrote the interior")
eq(halo[:, 2], interior(right)[:, 0], "halo column get")
eq(halo[:, :2], np.zeros((H, 2)), "halo get wrote other columns")
shmem.barrier_all()

# ---------------------------------------------------------------------------------------
# All-to-all: PE s puts row(s, p) into row s of A on every PE p; then every PE gets
# the row meant for it from every PE.


def row(s, p):
    return np.arange(K, dtype=np.int64) + 1000 * s + 100000 * p


A = shmem.zeros((npes, K), np.int64)
for p in range(npes):
    shmem.put(A[me], row(me, p), p)
shmem.barrier_all()
for q in range(npes):
    eq(A[q], row(q, me), f"all-to-all put row from PE {q}")
Bsrc = shmem.array(np.stack([row(me, q) for q in range(npes)]))
for p in range(npes):
    d = np.zeros(K, np.int64)
    shmem.get(d, Bsrc[me], p)
    eq(d, row(p, me), f"all-to-all get from PE {p}")
shmem.barrier_all()

print(f"OK pe={me}", flush=True)
