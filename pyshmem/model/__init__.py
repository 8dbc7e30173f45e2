"""pyshmem.model: what a communication strategy costs on a machine you do not have yet.

``predict(collective, topology, npes, sizes)`` prices every algorithm of the table in
:mod:`pyshmem.model.algorithms` (α-β-γ cost functions: ring, tree, recursive doubling,
Rabenseifner, one-shot, two-shot, NVLS and hierarchical all-reduce; all-gather,
reduce-scatter, broadcast, all-to-all, barrier) on a topology from
:mod:`pyshmem.model.topology` (presets ``dgx-h100``, ``dgx-h200``, ``dgx-h100xN``,
``dgx-h200xN``, ``gb200-nvl72``, ``pcie-8gpu``, or a JSON file). The command line is
``python -m pyshmem.model predict allreduce --topology dgx-h200x16 --sizes 1K:8G``.

The table also has workloads (:mod:`pyshmem.model.workloads`: MoE dispatch/combine,
pipeline send/recv, KV-cache transfer) and pyshmem's own host collectives
(:mod:`pyshmem.model.pyshmem_algos`). ``shmemrun -n 2 python -m pyshmem.model
calibrate`` fits this machine into ``machine.json`` (``--topology this``);
``python -m pyshmem.model validate`` sets predictions beside measurements here and
beside published figures. Trace replay is in docs/design.md's feature-status list.
"""

from pyshmem.model import pyshmem_algos, workloads  # noqa: F401  (register in the table)
from pyshmem.model.algorithms import ALGORITHMS, BUS_FACTOR, collectives, names
from pyshmem.model.predict import Prediction, predict
from pyshmem.model.topology import Link, Topology, from_dict, load, preset_names

__all__ = ["ALGORITHMS", "BUS_FACTOR", "Link", "Prediction", "Topology", "collectives", "from_dict", "load", "names",
           "predict", "preset_names"]
