"""MoE token dispatch and combine in PyTorch with all_to_all_single on the
torch.distributed backend "pyshmem".

Each rank holds `--tokens` tokens of width `--hidden` and `--experts` experts per rank
(expert e lives on rank e // experts). A router sends every token to its top-k
experts: tokens are sorted by destination rank, the counts are exchanged with one
all_to_all_single, the tokens with a second one (uneven splits), each rank applies its
experts (expert e: a linear map of its own), and a third all_to_all_single with the
splits reversed brings the results home, where they are weighted by the router's
probabilities and summed per token. The result is checked against the same mixture
computed on one rank with every expert.

Shows: pyshmem.torch.init_process_group (torchrun or shmemrun), all_to_all_single with
input/output split sizes, the dispatch/combine permutation of MoE layers.

How to run:
    torchrun --nproc_per_node 4 examples/torch_moe_dispatch.py [--tokens 32] [--topk 2]
    shmemrun -n 4 python examples/torch_moe_dispatch.py
"""

import argparse

import torch
import torch.distributed as dist

import pyshmem.torch as st


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=32, help="tokens per rank")
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--experts", type=int, default=2, help="experts per rank")
    parser.add_argument("--topk", type=int, default=2)
    args = parser.parse_args()
    st.init_process_group()
    me, p = dist.get_rank(), dist.get_world_size()
    n_experts = args.experts * p
    topk = min(args.topk, n_experts)

    torch.manual_seed(7)  # the experts and the router: the same on every rank
    experts = torch.randn(n_experts, args.hidden, args.hidden, dtype=torch.float64) / args.hidden ** 0.5
    router = torch.randn(args.hidden, n_experts, dtype=torch.float64)
    gen = torch.Generator().manual_seed(100 + me)  # the tokens: each rank its own
    x = torch.randn(args.tokens, args.hidden, dtype=torch.float64, generator=gen)

    probs, chosen = torch.softmax(x @ router, dim=-1).topk(topk, dim=-1)  # [tokens, k]
    flat_expert = chosen.reshape(-1)  # token copy i*k+j goes to expert chosen[i, j]
    order = torch.argsort(flat_expert // args.experts, stable=True)  # copies sorted by destination rank
    send_tokens = x.repeat_interleave(topk, dim=0)[order]
    send_experts = flat_expert[order]
    send_counts = torch.bincount(flat_expert // args.experts, minlength=p)

    # Dispatch: counts first (one int per peer), then the tokens and their expert ids.
    recv_counts = torch.empty_like(send_counts)
    dist.all_to_all_single(recv_counts, send_counts)
    sends, recvs = send_counts.tolist(), recv_counts.tolist()
    got_tokens = torch.empty(sum(recvs), args.hidden, dtype=torch.float64)
    dist.all_to_all_single(got_tokens, send_tokens, recvs, sends)
    got_experts = torch.empty(sum(recvs), dtype=send_experts.dtype)
    dist.all_to_all_single(got_experts, send_experts, recvs, sends)

    # This rank's experts, one token copy at a time.
    out = torch.einsum("th,tho->to", got_tokens, experts[got_experts])

    # Combine: the reverse exchange, then un-permute, weight and sum the k copies.
    back = torch.empty_like(send_tokens)
    dist.all_to_all_single(back, out, sends, recvs)
    mixed = torch.empty_like(back)
    mixed[order] = back
    y = (mixed.reshape(args.tokens, topk, args.hidden) * probs.unsqueeze(-1)).sum(dim=1)

    want = (torch.einsum("th,tkho->tko", x, experts[chosen]) * probs.unsqueeze(-1)).sum(dim=1)
    ok = torch.allclose(y, want, rtol=1e-12, atol=1e-12)
    stats = torch.tensor([0 if ok else 1, sum(sends)], dtype=torch.int64)
    dist.all_reduce(stats)
    if me == 0:
        print(f"MoE dispatch/combine over {p} rank(s): {args.tokens} tokens x {args.hidden} per rank, "
              f"{n_experts} experts, top-{topk}: {int(stats[1])} token copies moved each way by all_to_all_single")
        print("every rank's combined output matches the unsplit mixture of experts"
              if int(stats[0]) == 0 else f"MISMATCH on {int(stats[0])} rank(s)", flush=True)
    dist.destroy_process_group()
    raise SystemExit(0 if int(stats[0]) == 0 else 1)


if __name__ == "__main__":
    main()
