"""Every op of the torch.distributed backend "pyshmem", next to gloo on the same inputs,
under torchrun: the default group is pyshmem's, a gloo group over the same ranks gives
the reference. Also subgroups (both backends), async_op, uneven all_to_all_single,
send/recv, sizes beyond the staging buffer (set PYSHMEM_TORCH_STAGING_SIZE small), and
the clear errors. Prints ``OK rank=<r>``.
"""

from datetime import timedelta

import torch
import torch.distributed as dist

import pyshmem.torch  # registers the backend

dist.init_process_group("pyshmem")
me, p = dist.get_rank(), dist.get_world_size()
gloo = dist.new_group(backend="gloo")
assert dist.get_backend() == "pyshmem", dist.get_backend()
torch.manual_seed(1234 + me)


def check(cond, msg):
    if not cond:
        raise AssertionError(f"rank {me}: {msg}")


def same(a, b, what):
    check(a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b), f"{what}: pyshmem {a} != gloo {b}")


def both(fn, *tensors):
    """fn(tensors, group) with pyshmem (default group) and gloo on copies: both results."""
    mine = [t.clone() for t in tensors]
    ref = [t.clone() for t in tensors]
    fn(mine, None)
    fn(ref, gloo)
    return mine, ref


SIZES = [1, 7, 1000, 70000]  # 70000 float64 > the tests' 256K staging: chunks
for n in SIZES:
    for dtype in (torch.float32, torch.float64, torch.int64, torch.int32):
        x = (torch.rand(n) * 100).to(dtype) if dtype.is_floating_point else torch.randint(-50, 50, (n,), dtype=dtype)
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.MIN, dist.ReduceOp.PRODUCT):
            if op == dist.ReduceOp.PRODUCT and n > 1000:
                continue
            a, b = both(lambda ts, g: dist.all_reduce(ts[0], op=op, group=g), x)
            if dtype.is_floating_point and op in (dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT):
                # Different summation orders may differ in the last bits; every pyshmem rank agrees exactly.
                check(torch.allclose(a[0], b[0], rtol=1e-5), f"all_reduce {op} {dtype} n={n}")
            else:
                same(a[0], b[0], f"all_reduce {op} {dtype} n={n}")
        if not dtype.is_floating_point:
            for op in (dist.ReduceOp.BAND, dist.ReduceOp.BOR, dist.ReduceOp.BXOR):
                a, b = both(lambda ts, g: dist.all_reduce(ts[0], op=op, group=g), x)
                same(a[0], b[0], f"all_reduce {op} {dtype}")
    # AVG (gloo has none): the sum over p.
    f = torch.rand(n, dtype=torch.float64)
    avg, total = f.clone(), f.clone()
    dist.all_reduce(avg, op=dist.ReduceOp.AVG)
    dist.all_reduce(total, group=gloo)
    check(torch.allclose(avg, total / p), f"all_reduce AVG n={n}")
    # Every rank holds the same bits after a pyshmem all_reduce.
    s = torch.rand(n, dtype=torch.float32)
    dist.all_reduce(s)
    g = [torch.empty_like(s) for _ in range(p)]
    dist.all_gather(g, s, group=gloo)
    check(all(torch.equal(t, s) for t in g), "all_reduce gives the same bits on every rank")

    x = torch.rand(n, dtype=torch.float64)
    for root in {0, p - 1}:
        a, b = both(lambda ts, g: dist.broadcast(ts[0], root, group=g), x)
        same(a[0], b[0], f"broadcast root={root} n={n}")
    out_a = [torch.empty_like(x) for _ in range(p)]
    out_b = [torch.empty_like(x) for _ in range(p)]
    dist.all_gather(out_a, x)
    dist.all_gather(out_b, x, group=gloo)
    for i in range(p):
        same(out_a[i], out_b[i], f"all_gather[{i}] n={n}")
    big_a, big_b = torch.empty(p * n, dtype=torch.float64), torch.empty(p * n, dtype=torch.float64)
    dist.all_gather_into_tensor(big_a, x)
    dist.all_gather_into_tensor(big_b, x, group=gloo)
    same(big_a, big_b, f"all_gather_into_tensor n={n}")
    inp = torch.randint(-9, 9, (p * n,), dtype=torch.int64)
    rs_a, rs_b = torch.empty(n, dtype=torch.int64), torch.empty(n, dtype=torch.int64)
    dist.reduce_scatter_tensor(rs_a, inp)
    dist.reduce_scatter_tensor(rs_b, inp, group=gloo)
    same(rs_a, rs_b, f"reduce_scatter_tensor n={n}")
    for root in {0, p - 1}:
        a, b = both(lambda ts, g: dist.reduce(ts[0], root, group=g), inp)
        if me == root:
            same(a[0], b[0], f"reduce root={root}")
        else:
            same(a[0], inp, "reduce leaves non-root tensors as they were")
    # all_to_all_single, even.
    ev = torch.arange(p * n, dtype=torch.float32) + 1000 * me
    ea, eb = torch.empty_like(ev), torch.empty_like(ev)
    dist.all_to_all_single(ea, ev)
    dist.all_to_all_single(eb, ev, group=gloo)
    same(ea, eb, f"all_to_all_single even n={n}")

# all_to_all_single with uneven splits (rows of a 2-D tensor, as MoE dispatch sends).
send_counts = [(me + j) % 3 + 1 for j in range(p)]
recv_counts = [(j + me) % 3 + 1 for j in range(p)]  # what rank j sends to me
x = torch.arange(sum(send_counts) * 5, dtype=torch.float32).reshape(-1, 5) + 100 * me
ua, ub = torch.empty(sum(recv_counts), 5), torch.empty(sum(recv_counts), 5)
dist.all_to_all_single(ua, x, recv_counts, send_counts)
dist.all_to_all_single(ub, x, recv_counts, send_counts, group=gloo)
same(ua, ub, "all_to_all_single uneven")
# Rank 0's splits even (2 rows to and from everyone), the others' not (their own block
# differs): every rank must still take the same path.


def cnt(src, dst):
    return 2 if 0 in (src, dst) else (src + dst) % 3 + 1


sends, recvs = [cnt(me, j) for j in range(p)], [cnt(j, me) for j in range(p)]
x = torch.arange(sum(sends) * 5, dtype=torch.float32).reshape(-1, 5) + 100 * me
ua, ub = torch.empty(sum(recvs), 5), torch.empty(sum(recvs), 5)
dist.all_to_all_single(ua, x, recvs, sends)
dist.all_to_all_single(ub, x, recvs, sends, group=gloo)
same(ua, ub, "all_to_all_single even on rank 0 only")
ins = [torch.full((3,), float(me * 10 + j)) for j in range(p)]
outs_a = [torch.empty(3) for _ in range(p)]
outs_b = [torch.empty(3) for _ in range(p)]
dist.all_to_all(outs_a, ins)
dist.all_to_all(outs_b, ins, group=gloo)
for j in range(p):
    same(outs_a[j], outs_b[j], f"all_to_all[{j}]")
# Tensors of different sizes per peer (gloo takes equal ones only): against the values.
ins = [torch.full((j + 1,), float(me * 10 + j)) for j in range(p)]
outs = [torch.empty(me + 1) for _ in range(p)]
dist.all_to_all(outs, ins)
for j in range(p):
    same(outs[j], torch.full((me + 1,), float(j * 10 + me)), f"all_to_all uneven[{j}]")

# gather / scatter.
x = torch.full((3,), float(me))
ga = [torch.empty(3) for _ in range(p)] if me == 0 else None
gb = [torch.empty(3) for _ in range(p)] if me == 0 else None
dist.gather(x, ga, dst=0)
dist.gather(x, gb, dst=0, group=gloo)
if me == 0:
    for i in range(p):
        same(ga[i], gb[i], f"gather[{i}]")
sa, sb = torch.empty(4), torch.empty(4)
chunks = [torch.full((4,), float(10 * j)) for j in range(p)] if me == p - 1 else None
dist.scatter(sa, chunks, src=p - 1)
dist.scatter(sb, chunks, src=p - 1, group=gloo)
same(sa, sb, "scatter")

# async_op: a work handle whose wait() returns; the future holds the tensors.
t = torch.ones(10)
work = dist.all_reduce(t, async_op=True)
check(work.wait() and torch.equal(t, torch.full((10,), float(p))), "async all_reduce")
fut = dist.all_reduce(torch.ones(2), async_op=True).get_future()
check(torch.equal(fut.wait()[0], torch.full((2,), float(p))), f"future value {fut.wait()}")
dist.barrier()

# send / recv around a ring, both directions at once (a send does not wait for its recv),
# plus one message larger than a send slot.
right, left = (me + 1) % p, (me - 1) % p
if p > 1:
    dist.send(torch.full((5,), float(me)), right)
    got = torch.empty(5)
    src = dist.recv(got, left)
    check(src == left and torch.equal(got, torch.full((5,), float(left))), f"recv {got} from {src}")
    big = torch.arange(300000, dtype=torch.float32) + me  # 1.2 MB: several slot-sized pieces
    if me % 2 == 0:
        dist.send(big, right)
        back = torch.empty_like(big)
        dist.recv(back, left)
    else:
        back = torch.empty_like(big)
        dist.recv(back, left)
        dist.send(big, right)
    check(torch.equal(back, torch.arange(300000, dtype=torch.float32) + left), "large send/recv")
    req = dist.isend(torch.tensor([me]), right)
    r = torch.tensor([-1])
    dist.irecv(r, left).wait()
    req.wait()
    check(int(r) == left, "isend/irecv")
    # batch_isend_irecv: both ways at once with messages of several slots, and two
    # messages to one peer before either is received (a pipeline stage's pattern).
    for n in (300000, 5):
        a = torch.arange(n, dtype=torch.float32) + 10 * me
        ga, gb = torch.empty(n), torch.empty(n)
        ops = [dist.P2POp(dist.isend, a, right), dist.P2POp(dist.isend, a * 2, right),
               dist.P2POp(dist.irecv, ga, left), dist.P2POp(dist.irecv, gb, left)]
        for w in dist.batch_isend_irecv(ops):
            w.wait()
        want = torch.arange(n, dtype=torch.float32) + 10 * left
        check(torch.equal(ga, want) and torch.equal(gb, want * 2), f"batch_isend_irecv n={n}")
    # An isend progresses while its sender sits in a collective that its receiver joins
    # only after receiving; and its wait(timeout) says when nobody takes it in time.
    big = torch.arange(300000, dtype=torch.float32)
    one = torch.ones(1)
    if me == 0:
        w = dist.isend(big, 1)
        dist.all_reduce(one)
        w.wait()
        w = dist.isend(big, 1)
        try:
            w.wait(timeout=timedelta(seconds=0.5))
        except RuntimeError as e:
            check("send to rank 1: the receiver did not take the message within 0.5 s" in str(e), str(e))
        else:
            check(False, "an isend nobody received completed")
        dist.barrier()
        w.wait()
    elif me == 1:
        got = torch.empty_like(big)
        dist.recv(got, 0)
        dist.all_reduce(one)
        check(torch.equal(got, big), "isend progressing during a collective")
        dist.barrier()
        got.zero_()
        dist.recv(got, 0)
        check(torch.equal(got, big), "isend received after its wait timed out")
    else:
        dist.all_reduce(one)
        dist.barrier()
    # Messages on two groups between one pair arrive in send order; a recv on the other
    # group is an error naming both, not a silent swap.
    all_ranks = dist.new_group(list(range(p)))
    if me == 0:
        dist.send(torch.full((3,), 1.0), 1, group=all_ranks)
        dist.send(torch.full((3,), 2.0), 1)
    elif me == 1:
        r3 = torch.empty(3)
        try:
            dist.recv(r3, 0)
        except RuntimeError as e:
            check("on group of every rank #" in str(e) and "on the default group" in str(e), str(e))
        else:
            check(False, f"a message sent on a subgroup was received on the default group: {r3}")
        dist.recv(r3, 0)
        check(torch.equal(r3, torch.full((3,), 2.0)), f"the default-group message after the mismatch: {r3}")
    dist.destroy_process_group(all_ranks)
    w = dist.isend(torch.ones(1), right)
    dist.irecv(torch.empty(1), left).wait()
    try:
        w.get_future()
    except RuntimeError as e:
        check("get_future() is not supported" in str(e), str(e))
    else:
        check(False, "a send's work handle gave a future")
    w.wait()

# Subgroups: the even ranks, pyshmem and gloo; every rank calls new_group.
evens = list(range(0, p, 2))
sub = dist.new_group(evens)
sub_gloo = dist.new_group(evens, backend="gloo")
odds = list(range(1, p, 2))
sub_odd = dist.new_group(odds) if odds else None
if me in evens:
    for n in (3, 70000):
        x = torch.rand(n, dtype=torch.float64)
        a, b = both(lambda ts, g: dist.all_reduce(ts[0], group=sub if g is None else sub_gloo), x)
        check(torch.allclose(a[0], b[0]), f"subgroup all_reduce n={n}")
        a, b = both(lambda ts, g: dist.all_reduce(ts[0], op=dist.ReduceOp.MAX, group=sub if g is None else sub_gloo), x)
        same(a[0], b[0], f"subgroup all_reduce max n={n}")
        a, b = both(lambda ts, g: dist.broadcast(ts[0], evens[-1], group=sub if g is None else sub_gloo), x)
        same(a[0], b[0], f"subgroup broadcast n={n}")
        k = len(evens)
        oa, ob = torch.empty(k * n, dtype=torch.float64), torch.empty(k * n, dtype=torch.float64)
        dist.all_gather_into_tensor(oa, x, group=sub)
        dist.all_gather_into_tensor(ob, x, group=sub_gloo)
        same(oa, ob, f"subgroup all_gather_into_tensor n={n}")
        ri = torch.randint(0, 5, (k * 4,), dtype=torch.int32)
        ra, rb = torch.empty(4, dtype=torch.int32), torch.empty(4, dtype=torch.int32)
        dist.reduce_scatter_tensor(ra, ri, group=sub)
        dist.reduce_scatter_tensor(rb, ri, group=sub_gloo)
        same(ra, rb, "subgroup reduce_scatter_tensor")
    ev = torch.arange(len(evens) * 2, dtype=torch.int64) + 10 * me
    ea, eb = torch.empty_like(ev), torch.empty_like(ev)
    dist.all_to_all_single(ea, ev, group=sub)
    dist.all_to_all_single(eb, ev, group=sub_gloo)
    same(ea, eb, "subgroup all_to_all_single")
    dist.barrier(group=sub)
    if len(evens) > 1:  # send/recv inside the subgroup (global ranks)
        nxt = evens[(evens.index(me) + 1) % len(evens)]
        prv = evens[(evens.index(me) - 1) % len(evens)]
        dist.send(torch.tensor([me * 7]), nxt, group=sub)
        rr = torch.tensor([0])
        dist.recv(rr, prv, group=sub)
        check(int(rr) == prv * 7, "subgroup send/recv")
elif sub_odd is not None:  # the odd ranks meanwhile run their own subgroup's ops
    x = torch.full((4,), float(me))
    dist.all_reduce(x, group=sub_odd)
    check(torch.equal(x, torch.full((4,), float(sum(odds)))), f"odd subgroup all_reduce {x}")

# bfloat16 / float16 / bool all_reduce.
for dtype in (torch.bfloat16, torch.float16):
    h = torch.full((6,), 0.5 + me, dtype=dtype)
    dist.all_reduce(h)
    check(h.dtype == dtype and torch.allclose(h.float(), torch.full((6,), sum(0.5 + r for r in range(p)))),
          f"{dtype} all_reduce {h}")
bl = torch.tensor([me == 0, False, True])
dist.all_reduce(bl)
check(torch.equal(bl, torch.tensor([True, False, True])), f"bool all_reduce (OR) {bl}")

# Symmetric tensors (pyshmem.torch) of >= IN_PLACE_MIN bytes at the same heap offset on
# every rank are reduced / broadcast in place; a rank with an ordinary tensor, or views
# at different offsets, fall back to staging. Values against gloo either way, and the
# path taken is recorded through the agreement function.
from pyshmem import torch_backend  # noqa: E402

agreed = []
_agree = torch_backend._staging.agree  # records whether each agreement allowed the in-place path
torch_backend._staging.agree = lambda values: agreed.append(all(_agree(values))) or [agreed[-1]] * len(values)
n_big = torch_backend.IN_PLACE_MIN // 8 + 3  # float64 elements: over the threshold, beyond the 256K staging too
for n in (n_big, 70000):
    sym = pyshmem.torch.empty((n + 1,), dtype=torch.float64)
    sym.copy_(torch.rand(n + 1, dtype=torch.float64))
    ref = sym.clone()
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.AVG):
        agreed.clear()
        x = sym[:n]
        dist.all_reduce(x, op=op)
        r = ref[:n].clone()
        dist.all_reduce(r, op=dist.ReduceOp.SUM if op == dist.ReduceOp.AVG else op, group=gloo)
        if op == dist.ReduceOp.AVG:
            r /= p
        check(torch.allclose(x, r, rtol=1e-12), f"in-place all_reduce {op} n={n}")
        check(agreed == [True], f"in-place all_reduce {op} n={n}: the agreement said {agreed}")
        check(sym[n] == ref[n], "in-place all_reduce wrote past the tensor")
        sym.copy_(ref)
    for root in {0, p - 1}:
        agreed.clear()
        dist.broadcast(sym[:n], root)
        r = ref[:n].clone()
        dist.broadcast(r, root, group=gloo)
        same(sym[:n], r, f"in-place broadcast root={root} n={n}")
        check(agreed == [True], f"in-place broadcast: the agreement said {agreed}")
        sym.copy_(ref)
    # Rank 0 passes the symmetric tensor, the others an ordinary copy: staged, same values.
    agreed.clear()
    x = sym[:n] if me == 0 else ref[:n].clone()
    dist.all_reduce(x)
    r = ref[:n].clone()
    dist.all_reduce(r, group=gloo)
    check(torch.allclose(x, r, rtol=1e-12) and agreed == [False], f"mixed symmetric/ordinary all_reduce {agreed}")
    sym.copy_(ref)
    # Views at different offsets on different ranks: staged.
    agreed.clear()
    x = sym[me % 2:me % 2 + n - 1]
    src = x.clone()
    dist.all_reduce(x)
    r = src.clone()
    dist.all_reduce(r, group=gloo)
    check(torch.allclose(x, r, rtol=1e-12) and agreed == [p == 1], f"offset-mismatch all_reduce {agreed}")
    pyshmem.torch.free(sym)
# all_gather_into_tensor and even all_to_all_single: in place when input and output are
# both symmetric (and apart); an output that holds the input (as FSDP passes) is staged.


def symmetric_pair(n_in, n_out, op):
    """A symmetric input (rank-distinct values) and zeroed output, and gloo's result of
    `op` on the same input."""
    inp = pyshmem.torch.empty((n_in,), dtype=torch.float64)
    inp.copy_(torch.arange(n_in, dtype=torch.float64) + 1000.0 * me)
    want = torch.empty(n_out, dtype=torch.float64)
    op(want, inp.clone(), group=gloo)
    return inp, pyshmem.torch.zeros((n_out,), dtype=torch.float64), want


for n in (n_big // p + 1, 1000):
    big = p * n * 8 >= torch_backend.IN_PLACE_MIN
    inp, out, want = symmetric_pair(n, p * n, dist.all_gather_into_tensor)
    agreed.clear()
    dist.all_gather_into_tensor(out, inp)
    same(out, want, f"symmetric all_gather_into_tensor n={n}")
    check(agreed == ([True] if big else []), f"all_gather_into_tensor n={n}: the agreement said {agreed}")
    out.zero_()
    out[me * n:(me + 1) * n].copy_(inp)
    agreed.clear()
    dist.all_gather_into_tensor(out, out[me * n:(me + 1) * n])
    same(out, want, f"all_gather_into_tensor from its own block n={n}")
    check(agreed == ([False] if big else []), f"all_gather_into_tensor own block: the agreement said {agreed}")
    pyshmem.torch.free(out)
    pyshmem.torch.free(inp)
    a_in, a_out, want = symmetric_pair(p * n, p * n, dist.all_to_all_single)
    agreed.clear()
    dist.all_to_all_single(a_out, a_in)
    same(a_out, want, f"symmetric all_to_all_single n={n}")
    check(agreed == [big], f"all_to_all_single n={n}: {agreed}")
    plain = torch.zeros(p * n, dtype=torch.float64)
    agreed.clear()
    dist.all_to_all_single(plain if me == 0 else a_out, a_in)  # rank 0's output is ordinary memory
    same(plain if me == 0 else a_out, want, f"mixed all_to_all_single n={n}")
    check(agreed == [False], f"mixed all_to_all_single: {agreed}")
    pyshmem.torch.free(a_out)
    pyshmem.torch.free(a_in)
torch_backend._staging.agree = _agree

# Clear errors.
def raises(fn, match):
    try:
        fn()
    except RuntimeError as e:
        check(match in str(e), f"{match!r} not in {e}")
        return
    raise AssertionError(f"rank {me}: no RuntimeError for {match!r}")


raises(lambda: dist.recv(torch.empty(1)), "pyshmem backend: recv_anysource is not supported")
raises(lambda: dist.all_reduce(torch.ones(4)[::2]), "pyshmem backend: all_reduce: tensors must be contiguous")
raises(lambda: dist.all_reduce(torch.ones(2), op=dist.ReduceOp.BAND), "BAND needs an integer tensor")
raises(lambda: dist.all_gather_into_tensor(torch.empty(p + 1), torch.ones(1)), "output must have")
dist.barrier()
print(f"OK rank={me}", flush=True)
dist.destroy_process_group()
