"""Machine descriptions for pyshmem.model: devices per node, the fabric inside a node,
the NICs and the network between nodes, and the presets with their sources.

A topology is a :class:`Topology` (or the same fields as a dict / JSON object, read by
:func:`from_dict`). Bandwidths are per direction, per device (intra-node) or per NIC,
in GB/s (10^9 bytes/s); latencies are one-way small-message latencies in µs.
"""

import dataclasses
import json
import os
import re

from pyshmem.errors import InvalidArgumentError


@dataclasses.dataclass(frozen=True)
class Link:
    """One kind of link: per-direction bandwidth (GB/s) and one-way latency (µs)."""

    bandwidth_GBps: float
    latency_us: float


@dataclasses.dataclass(frozen=True)
class Topology:
    """A cluster of `nodes` identical nodes of `devices_per_node` devices.

    Fields:
        name: the preset's or file's name.
        nodes, devices_per_node: the shape; P = nodes * devices_per_node ranks, one per device.
        intra: a device's link to its node's fabric (NVLink through NVSwitch, PCIe, or
            shared memory for CPU PEs): bandwidth per direction per device.
        intra_multicast: the intra-node switch multicasts and reduces (NVLink SHARP, "NVLS").
        nic: one NIC's link to the network (bandwidth per direction).
        nics_per_node: NICs per node (rails); a device's share is nics_per_node / devices_per_node.
        oversubscription: the network's bisection oversubscription (1: non-blocking fat tree).
        reduce_GBps: a device's reduction throughput in GB/s of input (γ = 1/this): one
            number, or per dtype ``{"float32": 20, "float64": 18, "default": 20}``.
        sync_latency_us: one round of a barrier (a flag written, seen by a waiting peer);
            0: the link's latency.
        gap_us: LogGP's g, the least interval between two messages a device sends (its
            message rate's inverse); 0: no limit beyond bandwidth.
        overhead_us: LogGP's o, the CPU time of one host call (pyshmem's own collectives
            and barrier pay it once per call); 0 for devices that issue from kernels.
        tflops: a device's dense compute rate (TFLOP/s) for ``overlap``; 0: unknown.
        bandwidth_curve: ((bytes, GB/s), ...) ascending: a device's copy bandwidth in
            the node against the copy's size with every device copying at once, as
            calibration measures it; () for none (the link's figure then).
        nic_curve: the same for transfers between nodes (a device's share of the NICs,
            all devices sending at once), as calibration over UCX measures it.
        incast_curve: ((k, GB/s), ...) with k ascending: the bandwidth one device takes
            in, all senders together, when k peers write to it at once (contention at
            the receiver), as calibration measures it; () for none (a device then
            takes in at its link's bandwidth however many send).
    """

    name: str
    nodes: int
    devices_per_node: int
    intra: Link
    intra_multicast: bool
    nic: Link
    nics_per_node: int
    oversubscription: float = 1.0
    reduce_GBps: object = 1000.0
    sync_latency_us: float = 0.0
    gap_us: float = 0.0
    overhead_us: float = 0.0
    tflops: float = 0.0
    bandwidth_curve: tuple = ()
    nic_curve: tuple = ()
    incast_curve: tuple = ()

    @property
    def npes(self):
        """Ranks (devices) in the whole cluster."""
        return self.nodes * self.devices_per_node

    def reduce_throughput(self, dtype="float32"):
        """GB/s of reduction input for `dtype` (the per-type figure, else ``default``)."""
        r = self.reduce_GBps
        if not isinstance(r, dict):
            return r
        return r.get(str(dtype), r.get("default", next(iter(r.values()))))


def _field(d, key, kind, where, positive=True, allow_zero=False):
    if key not in d:
        raise InvalidArgumentError(f"pyshmem.model: topology {where}: missing field '{key}'")
    v = d[key]
    if kind is bool:
        if not isinstance(v, bool):
            raise InvalidArgumentError(f"pyshmem.model: topology {where}: field '{key}' must be true or false, not {v!r}")
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (kind is int and not float(v).is_integer()):
        raise InvalidArgumentError(f"pyshmem.model: topology {where}: field '{key}' must be a number"
                                   f"{' (a whole one)' if kind is int else ''}, not {v!r}")
    if positive and (v < 0 or (v == 0 and not allow_zero)):
        raise InvalidArgumentError(f"pyshmem.model: topology {where}: field '{key}' must be positive, not {v!r}")
    return kind(v)


def _link(d, key, where):
    v = d.get(key)
    if not isinstance(v, dict):
        raise InvalidArgumentError(f"pyshmem.model: topology {where}: field '{key}' must be an object with "
                                   f"bandwidth_GBps and latency_us, not {v!r}")
    return Link(_field(v, "bandwidth_GBps", float, f"{where}.{key}"),
                _field(v, "latency_us", float, f"{where}.{key}", allow_zero=True))


_KEYS = {f.name for f in dataclasses.fields(Topology)}


def from_dict(d, name=None):
    """A :class:`Topology` from a dict (JSON object) with Topology's fields.

    Args:
        d: the fields; ``intra`` and ``nic`` are objects with ``bandwidth_GBps`` and
            ``latency_us``; ``oversubscription`` and ``reduce_GBps`` are optional.
        name: used when `d` has no ``name``.

    Returns:
        Topology.

    Raises:
        InvalidArgumentError: a missing, unknown or ill-typed field, named with its path.
    """
    if not isinstance(d, dict):
        raise InvalidArgumentError(f"pyshmem.model: a topology must be an object, not {type(d).__name__}")
    where = repr(d.get("name", name or "?"))
    unknown = sorted(set(d) - _KEYS - {"calibration"})  # calibration: what `calibrate` measured, for people
    if unknown:
        raise InvalidArgumentError(f"pyshmem.model: topology {where}: unknown field(s) {', '.join(unknown)} "
                                   f"(known: {', '.join(sorted(_KEYS))})")
    return Topology(name=str(d.get("name", name or "custom")),
                    nodes=_field(d, "nodes", int, where), devices_per_node=_field(d, "devices_per_node", int, where),
                    intra=_link(d, "intra", where), intra_multicast=_field(d, "intra_multicast", bool, where),
                    nic=_link(d, "nic", where), nics_per_node=_field(d, "nics_per_node", int, where, allow_zero=True),
                    oversubscription=_optional(d, "oversubscription", 1.0, where),
                    reduce_GBps=_reduce(d, where),
                    sync_latency_us=_optional(d, "sync_latency_us", 0.0, where, allow_zero=True),
                    gap_us=_optional(d, "gap_us", 0.0, where, allow_zero=True),
                    overhead_us=_optional(d, "overhead_us", 0.0, where, allow_zero=True),
                    tflops=_optional(d, "tflops", 0.0, where, allow_zero=True),
                    bandwidth_curve=_curve(d, where), nic_curve=_curve(d, where, "nic_curve"),
                    incast_curve=_curve(d, where, "incast_curve", "senders"))


def _curve(d, where, key="bandwidth_curve", x="bytes"):
    v = d.get(key, [])
    ok = isinstance(v, list) and all(isinstance(p, list) and len(p) == 2 for p in v)
    pts = []
    if ok:
        for i, (n, gbps) in enumerate(v):
            pts.append((_field({x: n}, x, int, f"{where}.{key}[{i}]"),
                        _field({"GBps": gbps}, "GBps", float, f"{where}.{key}[{i}]")))
    if not ok or [n for n, _ in pts] != sorted({n for n, _ in pts}):
        raise InvalidArgumentError(f"pyshmem.model: topology {where}: field '{key}' must be a list of "
                                   f"[{x}, GB/s] pairs with {x} ascending, each once")
    return tuple(pts)


def _optional(d, key, default, where, allow_zero=False):
    return _field({key: d.get(key, default)}, key, float, where, allow_zero=allow_zero)


def _reduce(d, where):
    v = d.get("reduce_GBps", 1000.0)
    if not isinstance(v, dict):
        return _field({"reduce_GBps": v}, "reduce_GBps", float, where)
    if not v:
        raise InvalidArgumentError(f"pyshmem.model: topology {where}: field 'reduce_GBps' is an empty object; give "
                                   "a number or {dtype: GB/s}")
    return {str(k): _field(v, k, float, f"{where}.reduce_GBps") for k in v}


# ---- presets --------------------------------------------------------------------
# Bandwidths per direction. Sources:
#  [H100] NVIDIA H100 Tensor Core GPU datasheet: H100 SXM, NVLink 900 GB/s (both
#         directions together: 450 GB/s per direction), 18 NVLink 4 links.
#  [H200] NVIDIA H200 Tensor Core GPU datasheet: NVLink 900 GB/s, as H100 SXM.
#  [DGX]  NVIDIA DGX H100/H200 user guide: 8 GPUs, 4 NVSwitch chips (NVLink SHARP),
#         8 single-port ConnectX-7 400 Gb/s (50 GB/s) NICs for the compute fabric.
#  [NVL72] NVIDIA GB200 NVL72 product page: 72 Blackwell GPUs in one NVLink domain,
#         NVLink 5 at 1.8 TB/s per GPU (900 GB/s per direction).
#  [PCIe] PCI Express 5.0 x16: 32 GT/s x 16 lanes, 128b/130b: 63 GB/s per direction.
#  [H800] NVIDIA H800 SXM: NVLink 400 GB/s (200 GB/s per direction); DeepEP's README
#         (docs/legacy.md, "Performance") describes its test H800s as "~160 GB/s NVLink
#         maximum bandwidth", each with one CX7 400 Gb/s InfiniBand NIC ("~50 GB/s").
# Compute (`tflops`, dense BF16 tensor-core TFLOP/s, for the overlap model): 989 for
# H100/H200/H800 SXM and 756 for H100 PCIe [H100][H200] (the datasheets' 1,979 and
# 1,513 are "with sparsity", twice the dense rate); 2,500 per Blackwell GPU of an NVL72
# [NVL72: 180 PFLOPS dense FP16/BF16 over 72 GPUs].
# Latencies and reduction throughputs are assumptions (no datasheet gives them): 1 µs
# for a small NVLink transfer through NVSwitch, 2 µs over PCIe, 3 µs NIC to NIC through
# one InfiniBand switch; a GPU reduces at 1,000 GB/s of input (of its ~3.35-4.8 TB/s
# HBM bandwidth [H100][H200], reading two inputs and writing one). They are to be
# replaced by calibrated figures (`pyshmem.model calibrate` measures this machine's).
_NVLINK4 = Link(450.0, 1.0)
_NDR_NIC = Link(50.0, 3.0)


def _dgx(name, nodes):
    if name.startswith("hgx-h800"):
        return Topology(name=name, nodes=nodes, devices_per_node=8, intra=Link(200.0, 1.0), intra_multicast=True,
                        nic=_NDR_NIC, nics_per_node=8, tflops=989.0)
    return Topology(name=name, nodes=nodes, devices_per_node=8, intra=_NVLINK4, intra_multicast=True, nic=_NDR_NIC,
                    nics_per_node=8, tflops=989.0)


PRESETS = {
    "dgx-h100": lambda: _dgx("dgx-h100", 1),
    "dgx-h200": lambda: _dgx("dgx-h200", 1),
    "hgx-h800": lambda: _dgx("hgx-h800", 1),
    "gb200-nvl72": lambda: Topology(name="gb200-nvl72", nodes=1, devices_per_node=72, intra=Link(900.0, 1.0),
                                    intra_multicast=True, nic=Link(100.0, 3.0), nics_per_node=72, tflops=2500.0),
    "pcie-8gpu": lambda: Topology(name="pcie-8gpu", nodes=1, devices_per_node=8, intra=Link(63.0, 2.0),
                                  intra_multicast=False, nic=Link(50.0, 3.0), nics_per_node=1, tflops=756.0),
}
MULTI_NODE = ("dgx-h100", "dgx-h200", "hgx-h800")  # presets that come as N nodes: <name>xN
_MULTI = re.compile(rf"^({'|'.join(MULTI_NODE)})x([1-9][0-9]*)$")


def preset_names():
    """The preset names (``dgx-h100xN``/``dgx-h200xN``/``hgx-h800xN`` for any N as well)."""
    return sorted(PRESETS) + ["dgx-h100xN", "dgx-h200xN", "hgx-h800xN"]


def load(spec):
    """A topology by preset name (``dgx-h200x16``: 16 DGX H200 nodes), JSON file path,
    or ``this``: ./machine.json, as ``pyshmem.model calibrate`` writes it.

    Args:
        spec: a name from :func:`preset_names`, or the path of a JSON file whose object
            has Topology's fields.

    Returns:
        Topology.

    Raises:
        InvalidArgumentError: an unknown name, an unreadable or missing file, or a bad field.
    """
    if spec in PRESETS:
        return PRESETS[spec]()
    m = _MULTI.match(spec)
    if m:
        return _dgx(spec, int(m.group(2)))
    if spec == "this":
        if not os.path.exists("machine.json"):
            raise InvalidArgumentError("pyshmem.model: 'this' is the machine.json that `shmemrun -n 2 python -m "
                                       "pyshmem.model calibrate` writes here; there is none in this directory")
        spec = "machine.json"
    if spec.endswith(".json"):
        try:
            with open(spec) as f:
                return from_dict(json.load(f), name=spec)
        except (OSError, ValueError) as e:
            raise InvalidArgumentError(f"pyshmem.model: cannot read topology file {spec}: {e}") from None
    raise InvalidArgumentError(f"pyshmem.model: unknown topology {spec!r}; presets: {', '.join(preset_names())}, "
                               "or a .json file")
