"""With PYSHMEM_MAX_TEAMS=4 (world + shared + 2), the third split fails on every PE with
the variable to raise, and destroying a team makes room again. Prints "OK pe=<k>"."""

import pyshmem as shmem

me = shmem.my_pe()
a = shmem.TEAM_WORLD.split_strided(0, 1, shmem.n_pes())
b = shmem.TEAM_WORLD.split_strided(0, 1, shmem.n_pes())
try:
    shmem.TEAM_WORLD.split_strided(0, 1, shmem.n_pes())
    raise AssertionError(f"PE {me}: a fifth team was created with PYSHMEM_MAX_TEAMS=4")
except shmem.CollectiveMismatchError as e:
    assert "PYSHMEM_MAX_TEAMS=4" in str(e) and f"PE {me}" in str(e), str(e)
a.destroy()
c = shmem.TEAM_WORLD.split_strided(0, 1, shmem.n_pes())
c.sync()
b.destroy()
c.destroy()
print(f"OK pe={me}", flush=True)
