"""Port of shmem4py's demo/ping.py: PE 0 asks whether every PE can be reached.

Every PE runs the check here (PE 0 in the demo): all PEs of the job are accessible,
numbers outside 0..n_pes()-1 are not. Prints ``OK pe=<me>``.
"""

import pyshmem as shmem

mype, npes = shmem.my_pe(), shmem.n_pes()
for pe in range(npes):
    ok = shmem.pe_accessible(pe)
    assert ok is True, f"PE {mype}: pe_accessible({pe}) returned {ok!r}"
    if mype == 0:
        print(f"PE {pe} is accessible from PE 0", flush=True)
for pe in (-1, npes, npes + 7):
    assert shmem.pe_accessible(pe) is False, f"PE {mype}: pe_accessible({pe}) should be False"
print(f"OK pe={mype}", flush=True)
