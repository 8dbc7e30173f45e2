"""Rank 1 skips a collective that rank 0 enters: with the default group's timeout short,
the job must end with pyshmem's hang report instead of hanging (torchrun, 2 ranks).
Argument: the timeout in seconds."""

import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

import pyshmem.torch  # noqa: F401  (registers the backend)

dist.init_process_group("pyshmem", timeout=timedelta(seconds=float(sys.argv[1])))
t = torch.ones(4)
dist.all_reduce(t)  # both ranks: the job is up
print(f"up rank={dist.get_rank()}", flush=True)
if dist.get_rank() == 0:
    dist.all_reduce(t)  # rank 1 never joins
else:
    time.sleep(60)
print(f"not reached rank={dist.get_rank()}", flush=True)
