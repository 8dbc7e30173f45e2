"""FSDP2 (fully_shard) training steps on a small MLP with the backend named in argv[1]:
the parameters after the steps, gathered, are printed (rank 0) as JSON after ``PARAMS``
so that the test compares pyshmem's run against gloo's (torchrun, any number of ranks)."""

import json
import sys

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard

import pyshmem.torch  # noqa: F401  (registers the backend)

dist.init_process_group(sys.argv[1])
me = dist.get_rank()
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 5))
for layer in model:
    if isinstance(layer, torch.nn.Linear):
        fully_shard(layer)  # each layer's parameters all-gathered and gradients reduce-scattered
fully_shard(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
torch.manual_seed(1 + me)  # different data per rank
for _ in range(3):
    loss = model(torch.randn(8, 16)).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
params = [p.full_tensor().reshape(-1).tolist() for p in model.parameters()]
if me == 0:
    print("PARAMS " + json.dumps(params), flush=True)
dist.destroy_process_group()
