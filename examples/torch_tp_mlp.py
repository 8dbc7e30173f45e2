"""Tensor-parallel MLP in PyTorch on the torch.distributed backend "pyshmem".

The MLP y = W2 · gelu(W1 · x) is split Megatron-style over the ranks: W1 by output
columns (a column-parallel layer: each rank computes its slice of the hidden
activations, no communication), W2 by input rows (a row-parallel layer: each rank's
partial output is summed with all_reduce). Autograd needs the conjugate pair of
operations: the input is copied into the parallel region (identity forward, all_reduce
of the input gradient backward) and the output leaves it (all_reduce forward, identity
backward). The example runs a forward and a backward pass and checks the output, the
input gradient and every rank's shard of the weight gradients against the same MLP
computed whole on one rank.

Shows: pyshmem.torch.init_process_group (torchrun or shmemrun), dist.all_reduce inside
torch.autograd.Function, column- and row-parallel linear layers.

How to run (the hidden size must divide by the number of ranks; it is rounded up):
    torchrun --nproc_per_node 4 examples/torch_tp_mlp.py [--hidden 256] [--batch 8]
    shmemrun -n 4 python examples/torch_tp_mlp.py
"""

import argparse

import torch
import torch.distributed as dist

import pyshmem.torch as st


class _CopyToParallel(torch.autograd.Function):
    """Identity forward; the input gradient is summed over the ranks backward."""

    @staticmethod
    def forward(ctx, x):
        return x

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()
        dist.all_reduce(grad)
        return grad


class _ReduceFromParallel(torch.autograd.Function):
    """The ranks' partial outputs summed forward; identity backward."""

    @staticmethod
    def forward(ctx, partial):
        out = partial.contiguous().clone()
        dist.all_reduce(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        return grad


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hidden", type=int, default=256, help="hidden width of the MLP (split over the ranks)")
    parser.add_argument("--model", type=int, default=64, help="input and output width")
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    st.init_process_group()
    me, p = dist.get_rank(), dist.get_world_size()
    hidden = -(-args.hidden // p) * p
    shard = hidden // p

    # Every rank makes the whole model from one seed and keeps its shards.
    torch.manual_seed(0)
    w1 = torch.randn(hidden, args.model, dtype=torch.float64) / args.model ** 0.5
    w2 = torch.randn(args.model, hidden, dtype=torch.float64) / hidden ** 0.5
    x = torch.randn(args.batch, args.model, dtype=torch.float64)
    target = torch.randn(args.batch, args.model, dtype=torch.float64)
    w1_mine = w1[me * shard:(me + 1) * shard].clone().requires_grad_()  # column-parallel: output rows of W1
    w2_mine = w2[:, me * shard:(me + 1) * shard].clone().requires_grad_()  # row-parallel: input columns of W2

    x_tp = x.clone().requires_grad_()
    h = torch.nn.functional.gelu(_CopyToParallel.apply(x_tp) @ w1_mine.T)
    y = _ReduceFromParallel.apply(h @ w2_mine.T)
    loss = ((y - target) ** 2).mean()
    loss.backward()

    # The same MLP, whole, on this rank.
    w1_ref, w2_ref, x_ref = (t.clone().requires_grad_() for t in (w1, w2, x))
    y_ref = torch.nn.functional.gelu(x_ref @ w1_ref.T) @ w2_ref.T
    ((y_ref - target) ** 2).mean().backward()

    ok = (torch.allclose(y, y_ref, rtol=1e-12, atol=1e-12)
          and torch.allclose(x_tp.grad, x_ref.grad, rtol=1e-10, atol=1e-14)
          and torch.allclose(w1_mine.grad, w1_ref.grad[me * shard:(me + 1) * shard], rtol=1e-10, atol=1e-14)
          and torch.allclose(w2_mine.grad, w2_ref.grad[:, me * shard:(me + 1) * shard], rtol=1e-10, atol=1e-14))
    flags = torch.tensor([0 if ok else 1], dtype=torch.int64)
    dist.all_reduce(flags)
    if me == 0:
        print(f"tensor-parallel MLP {args.model}->{hidden}->{args.model} over {p} rank(s) ({shard} hidden columns "
              f"each), batch {args.batch}: forward and backward with all_reduce on the pyshmem backend")
        print("output, input gradient and every weight-gradient shard match the unsplit MLP"
              if int(flags) == 0 else f"MISMATCH on {int(flags)} rank(s)", flush=True)
    dist.destroy_process_group()
    raise SystemExit(0 if int(flags) == 0 else 1)


if __name__ == "__main__":
    main()
