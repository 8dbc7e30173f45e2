"""pyshmem.model: what a communication strategy costs on a machine you do not have yet.

``predict(collective, topology, npes, sizes)`` prices every algorithm of the table in
:mod:`pyshmem.model.algorithms` (α-β-γ cost functions: ring, tree, recursive doubling,
Rabenseifner, one-shot, two-shot, NVLS and hierarchical all-reduce; all-gather,
reduce-scatter, broadcast, all-to-all, barrier) on a topology from
:mod:`pyshmem.model.topology` (presets ``dgx-h100``, ``dgx-h200``, ``dgx-h100xN``,
``dgx-h200xN``, ``gb200-nvl72``, ``pcie-8gpu``, or a JSON file). The command line is
``python -m pyshmem.model predict allreduce --topology dgx-h200x16 --sizes 1K:8G``.

``shmemrun -n 2 python -m pyshmem.model calibrate`` fits this machine's α, β and γ into
``machine.json`` (``--topology this``). Trace replay and validation against
measurements are in docs/design.md's feature-status list; their commands say so.
"""

from pyshmem.model.algorithms import ALGORITHMS, BUS_FACTOR, collectives, names
from pyshmem.model.predict import Prediction, predict
from pyshmem.model.topology import Link, Topology, from_dict, load, preset_names

__all__ = ["ALGORITHMS", "BUS_FACTOR", "Link", "Prediction", "Topology", "collectives", "from_dict", "load", "names",
           "predict", "preset_names"]
