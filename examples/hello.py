"""Hello, PGAS: every PE says hello, then checks in with PE 0.

What it shows
    * ``my_pe()`` / ``n_pes()``: who am I, how many of us are there.
    * ``info_get_name()`` / ``info_get_version()``: the library and the
      OpenSHMEM version it implements.
    * A symmetric array (``shmem.zeros``) and a one-sided ``put`` into PE 0's
      copy of it, made visible with ``barrier_all``.

How to run
    shmemrun -n 4 python examples/hello.py
    # from a source tree without installing:
    PYTHONPATH=. python -m pyshmem.run -n 4 python examples/hello.py

Lines from different PEs come out in whatever order the PEs reach them; shmem
makes no promise about the order of standard output.
"""

import sys

import numpy as np

import pyshmem as shmem


def main():
    me = shmem.my_pe()      # 0 .. npes-1 (the first call starts the runtime)
    npes = shmem.n_pes()

    # One write per line: with unbuffered output print() writes the text and the
    # newline separately, so lines of PEs sharing one terminal could interleave.
    if me == 0:
        major, minor = shmem.info_get_version()
        sys.stdout.write(f"{shmem.info_get_name()} {shmem.__version__} (OpenSHMEM {major}.{minor})\n")
    sys.stdout.write(f"Hello from PE {me} of {npes}\n")

    # Check in: a symmetric array exists on every PE at the same place, so each PE
    # can name "slot `me` of `roll` on PE 0" and write it there, one-sidedly.
    # Allocation is collective: every PE calls it, and it returns only when all PEs
    # have allocated and zeroed their copy (like shmem_calloc, it ends with a
    # barrier), so PE 0's copy is ready for the put right away.
    roll = shmem.zeros(npes, dtype=np.int64)
    shmem.put(roll[me:me + 1], np.array([me + 1], dtype=np.int64), 0)
    shmem.barrier_all()                                 # completes and orders all puts

    if me == 0:
        expected = np.arange(1, npes + 1)
        if not np.array_equal(roll, expected):
            print(f"FAILED: roll call on PE 0 is {roll.tolist()}, expected {expected.tolist()}")
            return 1
        print(f"All {npes} PE(s) checked in with PE 0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
