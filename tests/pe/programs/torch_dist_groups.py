"""Subgroups of the "pyshmem" backend come and go: 300 groups of changing members and
sizes, each used and destroyed, so barrier slots are handed from one group to a later
one of another size; then 256 live groups hold every slot of ranks 0 and 1 and the next
one is a clear RuntimeError on its members. Prints ``OK rank=<r>``."""

import gc

import torch
import torch.distributed as dist

import pyshmem.torch  # noqa: F401 - registers the backend

dist.init_process_group("pyshmem")
me, p = dist.get_rank(), dist.get_world_size()
for i in range(300):
    k = 2 + i % max(1, p - 1)  # 2 .. p members
    members = [(i + j) % p for j in range(min(k, p))]
    g = dist.new_group(sorted(members))
    if me in members:
        t = torch.full((3,), float(me + i))
        dist.all_reduce(t, group=g)
        want = float(sum(m + i for m in members))
        assert torch.equal(t, torch.full((3,), want)), f"rank {me} group {i} {members}: {t} != {want}"
        dist.barrier(group=g)
    dist.destroy_process_group(g)
    del g
    gc.collect()
dist.barrier()
if p >= 3:  # [0, 1] is a subgroup (with p == 2 it is the default group's ranks)
    held = [dist.new_group([0, 1]) for _ in range(256)]
    try:
        extra = dist.new_group([0, 1])
        failed = None
    except RuntimeError as e:
        failed = str(e)
    if me in (0, 1):
        assert failed and "every one of the 256 barrier slots is held by a live group" in failed, failed
        x = torch.ones(2)
        dist.all_reduce(x, group=held[-1])  # the live groups still work
        assert torch.equal(x, torch.full((2,), 2.0)), x
dist.barrier()
print(f"OK rank={me}", flush=True)
dist.destroy_process_group()
