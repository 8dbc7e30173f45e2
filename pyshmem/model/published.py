"""Published measurements the presets are compared with by ``validate``, each with where
it comes from and how the model is asked the same question. Nothing here was fitted:
the presets' figures are datasheet bandwidths and stated assumptions
(:mod:`pyshmem.model.topology`), and the model is not tuned to these answers.

Sources:
  [NCCL-H100] nccl-tests all_reduce_perf on one 8 × H100 SXM node (NVLink 4 through
      NVSwitch): bus bandwidth about 370 GB/s with the ring algorithm and about 480 GB/s
      with NVLS at ≥ 256 MB, as issue 22 of this project quotes them; published nccl-tests
      guides give 460-480 GB/s for 8 × H100 SXM5 at large sizes (NVLS, NCCL's default there).
  [NCCL-2N] the same on 2 nodes of 8 × H100 with 8 × 400 Gb/s RoCE NICs each:
      330-430 GB/s bus bandwidth (issue 22); compared with the range's middle, 380.
  [DeepEP-V1] DeepEP docs/legacy.md, "Normal kernels with NVLink and RDMA forwarding":
      H800 (~160 GB/s NVLink), one CX7 400 Gb/s NIC per GPU, 4,096 tokens per batch,
      hidden 7,168, top-8 of 256 experts in at most 4 nodes (DeepSeek-V3's group-limited
      routing), FP8 dispatch (7,168 + 7,168/128 × 4 bytes of scales per token), BF16
      combine. "Bottleneck bandwidth": intranode, the bytes of every token copy a rank
      receives (its own included) per second; internode, the bytes of tokens sent per
      destination node (its own node included) per second.
  [DeepEP-V2] DeepEP README "Performance" (V2): SM90 with CX7, 8,192 tokens, the same
      model, "logical bandwidth" including local-rank traffic: EP 8 × 2 dispatch 90 GB/s,
      combine 81; EP 8 × 4: 61 and 61.
"""

import math

from pyshmem.model import topology
from pyshmem.model.algorithms import ALGORITHMS
from pyshmem.model.workloads import moe_fanout

_FP8_TOKEN = 7168 + 7168 // 128 * 4
_BF16_TOKEN = 7168 * 2

# (case, source, topology, collective, algo, npes, bytes or tokens, published GB/s)
FIGURES = [
    ("8 x H100 all-reduce, ring, 1 GiB busbw", "NCCL-H100", "dgx-h100", "allreduce", "ring", 8, 1 << 30, 370.0),
    ("8 x H100 all-reduce, NVLS, 1 GiB busbw", "NCCL-H100", "dgx-h100", "allreduce", "nvls", 8, 1 << 30, 480.0),
    ("2 x 8 H100 all-reduce, ring, 1 GiB busbw", "NCCL-2N", "dgx-h100x2", "allreduce", "ring", 16, 1 << 30, 380.0),
    ("DeepEP V1 EP8 dispatch (NVLink)", "DeepEP-V1", "hgx-h800", "moe_dispatch", "hierarchical", 8, 4096, 153.0),
    ("DeepEP V1 EP8 combine (NVLink)", "DeepEP-V1", "hgx-h800", "moe_combine", "hierarchical", 8, 4096, 158.0),
    ("DeepEP V1 EP16 dispatch (RDMA)", "DeepEP-V1", "hgx-h800x2", "moe_dispatch", "hierarchical", 16, 4096, 43.0),
    ("DeepEP V1 EP16 combine (RDMA)", "DeepEP-V1", "hgx-h800x2", "moe_combine", "hierarchical", 16, 4096, 43.0),
    ("DeepEP V1 EP32 dispatch (RDMA)", "DeepEP-V1", "hgx-h800x4", "moe_dispatch", "hierarchical", 32, 4096, 58.0),
    ("DeepEP V1 EP32 combine (RDMA)", "DeepEP-V1", "hgx-h800x4", "moe_combine", "hierarchical", 32, 4096, 57.0),
    ("DeepEP V1 EP64 dispatch (RDMA)", "DeepEP-V1", "hgx-h800x8", "moe_dispatch", "hierarchical", 64, 4096, 51.0),
    ("DeepEP V1 EP64 combine (RDMA)", "DeepEP-V1", "hgx-h800x8", "moe_combine", "hierarchical", 64, 4096, 50.0),
    ("DeepEP V2 EP 8x2 dispatch (RDMA)", "DeepEP-V2", "hgx-h800x2", "moe_dispatch", "hierarchical", 16, 8192, 90.0),
    ("DeepEP V2 EP 8x2 combine (RDMA)", "DeepEP-V2", "hgx-h800x2", "moe_combine", "hierarchical", 16, 8192, 81.0),
    ("DeepEP V2 EP 8x4 dispatch (RDMA)", "DeepEP-V2", "hgx-h800x4", "moe_dispatch", "hierarchical", 32, 8192, 61.0),
    ("DeepEP V2 EP 8x4 combine (RDMA)", "DeepEP-V2", "hgx-h800x4", "moe_combine", "hierarchical", 32, 8192, 61.0),
]
DEEPSEEK = {"topk": 8, "node_limit": 4}  # experts_per_pe = 256 / P


def _model_GBps(topo_name, collective, algo, p, size):
    t = topology.load(topo_name)
    alg = ALGORITHMS[(collective, algo)]
    if collective == "allreduce":
        secs = alg.cost(t, p, size, "bfloat16")
        return size / secs / 1e9 * 2 * (p - 1) / p  # nccl-tests' busbw
    tokens = size
    token_bytes = _FP8_TOKEN if collective == "moe_dispatch" else _BF16_TOKEN
    params = {**DEEPSEEK, "experts_per_pe": 256 // p}
    secs = alg.cost(t, p, tokens * token_bytes, "bfloat16", **params)
    r, q = moe_fanout(t, p, params["topk"], params["experts_per_pe"], params["node_limit"])
    copies = r if p <= t.devices_per_node else q  # DeepEP's counting (see the module doc)
    return tokens * copies * token_bytes / secs / 1e9


def compare():
    """Every published figure with the model's answer to the same question.

    Returns:
        list of dicts: case, source, published_GBps, model_GBps, error_pct (|ln| error
        as a percentage: exp(|ln(model/published)|) - 1).
    """
    out = []
    for case, source, topo, collective, algo, p, size, pub in FIGURES:
        got = _model_GBps(topo, collective, algo, p, size)
        out.append({"case": case, "source": source, "topology": topo, "published_GBps": pub, "model_GBps": got,
                    "error_pct": (math.exp(abs(math.log(got / pub))) - 1) * 100})
    return out


def print_table(rows, out):
    """Prints `rows` (from :func:`compare`) and their geometric-mean error."""
    print(f"# published figures (sources in pyshmem/model/published.py): {'case':<40} {'published':>9} "
          f"{'model':>9} {'error':>7}", file=out)
    for r in rows:
        print(f"{r['case']:<40} [{r['source']:<9}] {r['topology']:<11} {r['published_GBps']:>7.0f} GB/s "
              f"{r['model_GBps']:>7.0f} GB/s {r['error_pct']:>6.0f}%", file=out)
    errs = [math.log(1 + r["error_pct"] / 100) for r in rows]
    gm = (math.exp(sum(errs) / len(errs)) - 1) * 100 if errs else 0.0
    print(f"published: geometric-mean error {gm:.1f} % over {len(rows)} figures", file=out)
