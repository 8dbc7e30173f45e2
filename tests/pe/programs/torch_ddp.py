"""DistributedDataParallel on the "pyshmem" backend next to gloo, under torchrun: the
same small model, seed and per-rank batches in two DDP replicas, one per backend; after
every step the gradients and then the parameters must agree (to float32 rounding: the
two backends add the ranks' gradients in different orders). Prints ``OK rank=<r>`` and
the mean step times of both as ``STEP pyshmem=<us> gloo=<us>``.
"""

import gc
import statistics
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import pyshmem.torch  # noqa: F401 - registers the backend

dist.init_process_group("pyshmem")
me, p = dist.get_rank(), dist.get_world_size()
gloo = dist.new_group(backend="gloo")


def model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 64), torch.nn.ReLU(),
                               torch.nn.Linear(64, 10))


nets = {"pyshmem": DDP(model()), "gloo": DDP(model(), process_group=gloo)}
opts = {k: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) for k, m in nets.items()}
times = {k: [] for k in nets}
gen = torch.Generator().manual_seed(100 + me)  # each rank its own batches
for step in range(8):
    x = torch.randn(16, 32, generator=gen)
    y = torch.randint(0, 10, (16,), generator=gen)
    for name, net in nets.items():
        t0 = time.perf_counter()
        opts[name].zero_grad()
        torch.nn.functional.cross_entropy(net(x), y).backward()
        opts[name].step()
        times[name].append(time.perf_counter() - t0)
    for (n1, a), (n2, b) in zip(nets["pyshmem"].named_parameters(), nets["gloo"].named_parameters()):
        assert torch.allclose(a.grad, b.grad, rtol=1e-5, atol=1e-7), f"rank {me} step {step}: grad of {n1} differs"
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), f"rank {me} step {step}: {n1} differs"
# The replicas on every rank hold the same parameters (DDP's premise).
flat = torch.cat([q.detach().reshape(-1) for q in nets["pyshmem"].parameters()])
every = [torch.empty_like(flat) for _ in range(p)]
dist.all_gather(every, flat)
assert all(torch.equal(e, flat) for e in every), f"rank {me}: replicas diverged"
print(f"OK rank={me}", flush=True)
if me == 0:
    med = {k: statistics.median(v[2:]) * 1e6 for k, v in times.items()}
    print(f"STEP pyshmem={med['pyshmem']:.0f} gloo={med['gloo']:.0f}", flush=True)
# The DDP replicas go before their groups: a gloo worker thread that finishes one of
# their works during interpreter teardown calls into Python there and aborts the process.
del nets, opts
gc.collect()
dist.barrier(group=gloo)
dist.destroy_process_group()
