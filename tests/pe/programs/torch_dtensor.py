"""DTensor, functional collectives and torch's coalescing manager on the pyshmem
backend (they issue the *_coalesced forms and the functional c10d ops), values against
the same calls on gloo. Prints ``OK rank=<r>`` (torchrun, any number of ranks)."""

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as fc
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor import Partial, Replicate, Shard, distribute_tensor

import pyshmem.torch  # noqa: F401  (registers the backend)

from pyshmem.torch_backend import ProcessGroupPyshmem  # noqa: E402

# The coalesced forms must be what these APIs reach (they were refused before): counted.
called = set()
for _form in ("all_gather_single_coalesced", "reduce_scatter_single_coalesced", "allreduce_coalesced"):
    def _counted(self, *args, _f=getattr(ProcessGroupPyshmem, _form), _n=_form):
        called.add(_n)
        return _f(self, *args)
    setattr(ProcessGroupPyshmem, _form, _counted)

dist.init_process_group("pyshmem")
me, p = dist.get_rank(), dist.get_world_size()
gloo = dist.new_group(backend="gloo")


def check(cond, msg):
    if not cond:
        raise AssertionError(f"rank {me}: {msg}")


def same(a, b, what):
    check(a.shape == b.shape and torch.equal(a, b), f"{what}: {a} vs {b}")


# DTensor on a 1-D mesh: shard, replicate (all-gather), partial -> shard (reduce-scatter),
# partial -> replicate (all-reduce), and a sharded matmul.
mesh = init_device_mesh("cpu", (p,))
full = torch.arange(24.0 * p).reshape(4 * p, 6)
d = distribute_tensor(full, mesh, [Shard(0)])
same(d.to_local(), full[4 * me:4 * (me + 1)], "Shard(0)")
same(d.redistribute(mesh, [Replicate()]).to_local(), full, "Shard(0) -> Replicate")
part = torch.distributed.tensor.DTensor.from_local(torch.full((2 * p, 3), float(me + 1)), mesh, [Partial()])
total = float(p * (p + 1) // 2)
same(part.redistribute(mesh, [Shard(0)]).to_local(), torch.full((2, 3), total), "Partial -> Shard(0)")
same(part.redistribute(mesh, [Replicate()]).to_local(), torch.full((2 * p, 3), total), "Partial -> Replicate")
w = distribute_tensor(torch.arange(12.0).reshape(6, 2), mesh, [Replicate()])
same((d @ w).full_tensor(), full @ torch.arange(12.0).reshape(6, 2), "sharded matmul")

# Functional collectives (torch.compile's form of the ops), against gloo's.
x = torch.arange(4.0 * p) + 10 * me
for name, call in {
    "all_reduce": lambda g: fc.all_reduce(x, "sum", g),
    "all_gather_tensor": lambda g: fc.all_gather_tensor(x, 0, g),
    "reduce_scatter_tensor": lambda g: fc.reduce_scatter_tensor(x, "sum", 0, g),
    "all_to_all_single": lambda g: fc.all_to_all_single(x, None, None, g),
}.items():
    same(fc.wait_tensor(call(dist.group.WORLD)), fc.wait_tensor(call(gloo)), f"functional {name}")

# torch's coalescing manager: several ops issued as one coalesced call.
ins = [torch.arange(3.0) + me, torch.arange(5.0) * (me + 1)]


def gathered(group):
    outs = [torch.empty(p * t.numel()) for t in ins]
    with dist._coalescing_manager(group=group):
        for o, t in zip(outs, ins):
            dist.all_gather_into_tensor(o, t, group=group)
    return outs


def scattered(group):
    outs = [torch.empty(t.numel()) for t in ins]
    with dist._coalescing_manager(group=group):
        for o, t in zip(outs, ins):
            dist.reduce_scatter_tensor(o, t.repeat(p), group=group)
    return outs


def reduced(group):
    ts = [t.clone() for t in ins]
    with dist._coalescing_manager(group=group):
        for t in ts:
            dist.all_reduce(t, group=group)
    return ts


for name, fn in {"all_gather_into_tensor": gathered, "reduce_scatter_tensor": scattered, "all_reduce": reduced}.items():
    for a, b in zip(fn(None), fn(gloo)):
        same(a, b, f"coalesced {name}")
check(called == {"all_gather_single_coalesced", "reduce_scatter_single_coalesced", "allreduce_coalesced"},
      f"coalesced forms reached: {sorted(called)}")
dist.barrier()
print(f"OK rank={me}", flush=True)
dist.destroy_process_group()
