"""Port of shmem4py's demo/hello.py: every PE greets, then checks who it is.

argv[1]: the number of PEs the job was started with. Prints ``OK pe=<me>``.
"""

import sys

import pyshmem as shmem

mype = shmem.my_pe()
npes = shmem.n_pes()
print(f"Hello from PE {mype} of {npes}", flush=True)
assert npes == int(sys.argv[1]), f"n_pes() is {npes}, the job has {sys.argv[1]}"
assert 0 <= mype < npes, f"my_pe() {mype} outside 0..{npes - 1}"
print(f"OK pe={mype}", flush=True)
