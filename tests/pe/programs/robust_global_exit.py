"""PE 1 calls global_exit(0) while the others wait in a barrier that can never
complete: every PE must end (the waiters notice the global-exit word) with status 0."""
import pyshmem as shmem

me = shmem.my_pe()
shmem.barrier_all()
if me == 1:
    shmem.global_exit(0)
shmem.barrier_all()  # PE 1 never arrives
print(f"PASSED-BARRIER pe={me}", flush=True)
