"""PE 1 calls sys.exit(3) while PE 0 waits for a signal from it: the job must end with
code 3 at once (PE 1 must not sit in a collective finalize at exit)."""
import sys

import pyshmem as shmem

me = shmem.my_pe()
sig = shmem.new_signal()
if me == 1:
    sys.exit(3)
shmem.signal_wait_until(sig, shmem.CMP.EQ, 1)
