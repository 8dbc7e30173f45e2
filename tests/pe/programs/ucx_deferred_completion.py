"""Operations a PE issues over UCX that complete at the next quiet, not on return (with
PYSHMEM_REMOTE_ONLY=1): atomic sets (a SWAP whose old value nobody reads), and blocking
puts of up to 4 KiB, which go out of a copy of their source. Checks the values each
target ends with: the last of 10,000 sets without a quiet between them (more requests
than are kept before the completed ones are freed), a source overwritten right after
each blocking put returns, puts on both sides of the 4 KiB copy limit, and put, fence,
set as a message and its flag. Prints "OK pe=<k>"."""

import numpy as np

import pyshmem as shmem

me, n = shmem.my_pe(), shmem.n_pes()
peer, left = (me + 1) % n, (me - 1) % n
word = shmem.zeros(1, np.int64)
slots = shmem.zeros(64, np.int64)
big = shmem.zeros(4097, np.uint8)
flag = shmem.zeros(1, np.int64)
shmem.barrier_all()

for i in range(10_000):
    shmem.atomic_set(word, 1_000_000 * me + i, peer)
shmem.quiet()
shmem.barrier_all()
assert int(word[0]) == 1_000_000 * left + 9_999, int(word[0])

src = np.zeros(1, np.int64)
for i in range(6_000):
    src[0] = 10 * i + me
    shmem.put(slots[i % 64:i % 64 + 1], src, peer)
    src[0] = -1  # the put returned: its source may be reused at once
shmem.barrier_all()
last = [max(i for i in range(6_000) if i % 64 == j) for j in range(64)]
assert (slots == np.array([10 * i + left for i in last])).all(), slots

for size in (4095, 4096, 4097):
    data = np.full(size, (size + me) % 251, np.uint8)
    shmem.put(big[:size], data, peer)
    data[:] = 0
    shmem.barrier_all()
    assert (big[:size] == (size + left) % 251).all(), (size, np.unique(big[:size]))
    shmem.barrier_all()

for r in range(1, 200):  # the message before its flag (put, fence, set), in both directions
    shmem.put(slots[:1], np.array([r * 7 + me], np.int64), peer)
    shmem.fence()
    shmem.atomic_set(flag, r, peer)
    shmem.wait_until(flag, shmem.CMP_GE, r)
    assert int(slots[0]) == r * 7 + left, (r, int(slots[0]))
    shmem.barrier_all()
print(f"OK pe={me}")
