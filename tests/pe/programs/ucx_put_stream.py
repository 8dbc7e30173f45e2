"""Put streams over UCX (run with PYSHMEM_REMOTE_ONLY=1), PE 0 -> PE 1. Case (argv[1]):
  stream     more put_nbi bytes than UCX may have in flight (1 MiB: 320 distinct 64 KiB
             chunks, 20 MiB) and blocking puts of 4 KiB + 1 byte (not bounced), then
             quiet: PE 1 checks every byte, twice (the second round reuses the
             requests' memory)
  busy_wait  PE 1 waits for a flag that never comes while PE 0 streams puts into it:
             the wait polls on while its progress calls apply the stream, and still
             ends with PYSHMEM_TIMEOUT's report (its hang checks run all the same)
Prints "OK pe=<k>" (stream).
"""

import sys
import time

import numpy as np

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
CASE = sys.argv[1]
CHUNK, CHUNKS = 64 << 10, 320
dst = shmem.zeros(CHUNK * CHUNKS, np.uint8)
src = shmem.zeros(CHUNK * CHUNKS, np.uint8)
flag = shmem.zeros(1, np.int64)
shmem.barrier_all()

if CASE == "stream":
    odd = 4097
    for rnd in range(2):
        pattern = ((np.arange(CHUNK * CHUNKS, dtype=np.int64) * 7 + 13 * rnd + 1) % 251).astype(np.uint8)
        if me == 0:
            src[:] = pattern
            for c in range(CHUNKS):
                shmem.put_nbi(dst[c * CHUNK:(c + 1) * CHUNK], src[c * CHUNK:(c + 1) * CHUNK], 1)
            shmem.quiet()
            for c in range(8):  # blocking puts just over the bounce size overwrite the first bytes
                shmem.put(dst[c * odd:(c + 1) * odd], src[c * odd:(c + 1) * odd][::-1].copy(), 1)
        shmem.barrier_all()
        if me == 1:
            want = pattern.copy()
            for c in range(8):
                want[c * odd:(c + 1) * odd] = pattern[c * odd:(c + 1) * odd][::-1]
            bad = np.flatnonzero(dst != want)
            assert bad.size == 0, f"round {rnd}: {bad.size} wrong bytes, first at {bad[:4]}"
        shmem.barrier_all()
    print(f"OK pe={me}", flush=True)
elif CASE == "busy_wait":
    if me == 0:
        end = time.monotonic() + 30
        while time.monotonic() < end:  # until the hang report ends the job
            for c in range(CHUNKS):
                shmem.put_nbi(dst[c * CHUNK:(c + 1) * CHUNK], src[c * CHUNK:(c + 1) * CHUNK], 1)
            shmem.quiet()
    else:
        shmem.wait_until(flag, shmem.CMP_EQ, 1)  # never: PE 0 only streams
shmem.finalize()
