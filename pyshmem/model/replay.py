"""``python -m pyshmem.model replay TRACE_DIR --topology T``: a PYSHMEM_TRACE recording
of a real run, priced on another machine.

Every PE's top-level events (a collective's inner barrier rounds and waits are inside
its span and not priced again) are split into phases at collectives, which synchronise
the PEs: phase k holds what each PE did after collective k-1, up to and including
collective k (the last phase runs to the end). On the target topology, with PE i on
device i (``--map block``: node i // devices_per_node) or dealt round-robin over the
nodes (``--map cyclic``):

- a put, get, put_signal or proxy operation of n bytes to a peer costs α + nβ of the
  link between the two devices (the fabric's within a node; across nodes the NIC's α
  and a device's share of the node's NICs); an atomic costs α;
- a collective costs its cheapest algorithm in the table at (P, n), P the trace's PEs,
  n in the table's convention (fcollect and alltoall: the recorded block × P);
- quiet, fence, waits, allocation and local work are not communication and cost
  nothing; non-blocking operations are priced as if one after another (an upper bound).

A phase's predicted time is the slowest PE's point-to-point total in it plus its
collective; the recorded time is the slowest PE's wall time from the phase's start
to its collective's end on the trace's shared clock (pyshmem.trace.load, which puts
PEs of other hosts on PE 0's clock by init's clock-offset estimate).
"""

import math

from pyshmem.errors import InvalidArgumentError
from pyshmem.model.algorithms import ALGORITHMS, flat_link, names

_P2P_KINDS = {1, 3, 6}  # rma, signal, proxy (trace.h's TraceKind)
_AMO_KIND, _COLL_KIND = 2, 5
_COLLECTIVE_OF = (("barrier", "barrier"), ("sync", "barrier"), ("reduce", "allreduce"), ("broadcast", "broadcast"),
                  ("bcast", "broadcast"), ("fcollect", "allgather"), ("collect", "allgather"),
                  ("allgather", "allgather"), ("alltoall", "alltoall"))


def collective_of(name):
    """The model collective of a trace event's call name (``pyshmem.sum_reduce`` ->
    ``allreduce``), or None when it is none of them."""
    base = name.rsplit(".", 1)[-1].lower()
    for key, collective in _COLLECTIVE_OF:
        if key in base:
            return collective
    return None


def top_level(events):
    """The events no other event of the same thread contains, in start order."""
    out = []
    for thread in sorted({int(e["thread"]) for e in events}):
        mine = sorted((e for e in events if int(e["thread"]) == thread), key=lambda e: (int(e["t0"]), -int(e["t1"])))
        end = -math.inf
        for e in mine:
            if int(e["t0"]) >= end:
                out.append(e)
                end = int(e["t1"])
    return sorted(out, key=lambda e: int(e["t0"]))


def _node(pe, t, mapping):
    return pe // t.devices_per_node if mapping == "block" else pe % t.nodes


def p2p_cost(t, mapping, me, peer, nbytes, atomic=False):
    """Seconds of one transfer of `nbytes` between PEs `me` and `peer` on `t`."""
    if _node(me, t, mapping) == _node(peer, t, mapping):
        a, b = t.intra.latency_us * 1e-6, 1.0 / (t.intra.bandwidth_GBps * 1e9)
    else:
        a, b = flat_link(t, t.npes, "all")
    return a if atomic else a + nbytes * b


def collective_cost(t, collective, npes, nbytes):
    """(seconds, algorithm) of the cheapest algorithm of `collective` at (npes, nbytes)."""
    best = (math.inf, None)
    for algo in names(collective):
        alg = ALGORITHMS[(collective, algo)]
        if alg.intra_only and npes > t.devices_per_node:
            continue
        best = min(best, (alg.cost(t, npes, nbytes), algo), key=lambda x: x[0])
    return best


def replay(pes, t, mapping="block"):
    """Prices loaded traces (pyshmem.trace.load) on topology `t`.

    Args:
        pes: per-PE dicts with names and events on one clock.
        t: the target Topology.
        mapping: ``block`` or ``cyclic`` (PE to node).

    Returns:
        dict: phases (list of dicts: index, collective, call, bytes, algo, recorded_us,
        predicted_us, per_pe_us), per_pe_us (each PE's predicted total), total_us.

    Raises:
        InvalidArgumentError: more PEs than the topology has devices, an unknown
            mapping, or PEs whose collectives do not pair up.
    """
    npes = len(pes)
    if mapping not in ("block", "cyclic"):
        raise InvalidArgumentError(f"pyshmem.model replay: --map must be block or cyclic, not {mapping!r}")
    if npes > t.npes:
        raise InvalidArgumentError(f"pyshmem.model replay: the trace has {npes} PEs and {t.name} has {t.npes} "
                                   "devices; pick a larger topology (dgx-h200xN)")
    per_pe_phases = []
    for p in pes:
        phases, cur, start = [], [], None
        for e in top_level(p["events"]):
            name = p["names"][e["name"]] if e["name"] < len(p["names"]) else "?"
            start = int(e["t0"]) if start is None else start
            kind = int(e["kind"])
            if kind == _COLL_KIND and collective_of(name):
                phases.append({"ops": cur, "coll": (name, int(e["bytes"])), "start": start, "end": int(e["t1"])})
                cur, start = [], None
            elif kind in _P2P_KINDS and int(e["peer"]) >= 0:
                cur.append((int(e["peer"]), int(e["bytes"]), False))
            elif kind == _AMO_KIND and int(e["peer"]) >= 0:
                cur.append((int(e["peer"]), 8, True))
        if cur:
            ends = [int(e["t1"]) for e in p["events"]]
            phases.append({"ops": cur, "coll": None, "start": start, "end": max(ends) if ends else start})
        per_pe_phases.append(phases)
    counts = {len(ph) for ph in per_pe_phases}
    if len(counts) != 1:
        raise InvalidArgumentError("pyshmem.model replay: the PEs' traces have different numbers of collectives "
                                   f"({sorted(counts)}); a trace ring that dropped events (PYSHMEM_TRACE_EVENTS) or "
                                   "team collectives on some PEs only cannot be split into phases")
    out, totals = [], [0.0] * npes
    for k in range(counts.pop()):
        row = [per_pe_phases[pe][k] for pe in range(npes)]
        p2p = [sum(p2p_cost(t, mapping, pe, peer, n, amo) for peer, n, amo in ph["ops"]) for pe, ph in enumerate(row)]
        coll = row[0]["coll"]
        c_s, algo, collective, nbytes = 0.0, None, None, 0
        if coll:
            collective = collective_of(coll[0])
            nbytes = coll[1] * npes if collective in ("allgather", "alltoall") else coll[1]
            c_s, algo = collective_cost(t, collective, npes, nbytes)
        for pe in range(npes):
            totals[pe] += (p2p[pe] + c_s) * 1e6
        recorded = max(ph["end"] for ph in row) - min(ph["start"] for ph in row if ph["start"] is not None)
        out.append({"index": k, "collective": collective, "call": coll[0] if coll else None, "bytes": nbytes,
                    "algo": algo, "recorded_us": recorded / 1e3, "predicted_us": (max(p2p) + c_s) * 1e6,
                    "per_pe_us": [(x + c_s) * 1e6 for x in p2p]})
    return {"phases": out, "per_pe_us": totals, "total_us": sum(ph["predicted_us"] for ph in out)}


def main(trace_dir, topology_spec, mapping, out, as_json=False):
    """The command: loads the trace, prices it, prints per phase and per PE (or JSON).

    Raises:
        TraceError: no trace in the directory; InvalidArgumentError: see :func:`replay`.
    """
    import json

    from pyshmem.model.topology import load
    from pyshmem.trace import load as load_trace

    t = load(topology_spec)
    res = replay(load_trace(trace_dir), t, mapping)
    if as_json:
        print(json.dumps(res), file=out)
        return 0
    print(f"# {trace_dir} replayed on {t.name} ({mapping} mapping): {len(res['per_pe_us'])} PEs, "
          f"{len(res['phases'])} phases", file=out)
    print(f"{'phase':>5} {'ends with':<22} {'bytes':>10} {'algo':<14} {'recorded_us':>12} {'predicted_us':>13}",
          file=out)
    for ph in res["phases"]:
        print(f"{ph['index']:>5} {ph['call'] or '(end)':<22} {ph['bytes']:>10} {ph['algo'] or '-':<14} "
              f"{ph['recorded_us']:>12.1f} {ph['predicted_us']:>13.2f}", file=out)
    print("per PE predicted us: " + ", ".join(f"PE {i} {v:.2f}" for i, v in enumerate(res["per_pe_us"])), file=out)
    print(f"total predicted communication time: {res['total_us']:.2f} us on {t.name}", file=out)
    return 0
