"""pyshmem.perftest: NVSHMEM-style benchmarks of pyshmem, run under the launcher.

    shmemrun -n 2 python -m pyshmem.perftest put_latency -b 8 -e 1M -f 2
    shmemrun -n 4 python -m pyshmem.perftest reduction -o sum -d float32 --json

Point-to-point tests (``put_latency``, ``get_latency``, ``p_latency``, ``g_latency``,
``put_bw`` [--bidir], ``get_bw``, ``atomic_latency``/``atomic_bw`` [-a op],
``put_ping_pong``, ``signal_ping_pong``, ``put_signal_ping_pong``) need 2 PEs (PE 0
drives, PE 1 is the peer); collectives (``barrier``, ``sync``, ``bcast``, ``fcollect``,
``alltoall``, ``reduction`` [-o op -d dtype]) run on every PE. Each test checks the
data it moved and fails (exit status 1) when it is wrong. Output: a table, or
``--json`` (one object per line) / ``--csv`` for machines, printed by PE 0.

``--api device [--scope thread|warp|block]`` times the device API inside kernels
(``kernels.cu``: the CPU build without a GPU, GPU kernels on the cuda backend) for
every test (reductions: every -o op on every -d type it is defined for).

``python -m pyshmem.perftest compare [--out DIR]`` (from a shell) runs pyshmem's host
and device APIs side by side with shmem4py, Open MPI's OpenSHMEM from C, mpi4py RMA,
ucx_perftest and a memcpy ceiling, whichever are installed, and writes a Markdown
report, JSON and PNG plots (pyshmem/perftest/compare.py).
"""

from pyshmem.perftest.cli import main

__all__ = ["main"]
