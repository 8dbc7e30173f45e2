"""The CPU build's kernel suite on a GPU (tests/gpu): every deterministic case of
tests/kernels/warp_suite.cu runs on the GPU (GPU arrays) and on the CPU build (NumPy
arrays) in the same process, and the outputs must be equal (floating-point sums to
1e-6). A difference is a place where the CPU execution model is not faithful. Prints
"OK pe=<k>"."""

from pathlib import Path

import numpy as np

import pyshmem as shmem
import pyshmem.cuda as pc

SOURCE = (Path(__file__).resolve().parents[2] / "kernels" / "warp_suite.cu").read_text()
rng = np.random.default_rng(3)
i32 = np.int32
u32 = np.uint32
CASES = [  # kernel, grid, block, inputs (arrays are copied to both), outputs, scalars, cooperative
    *[("shuffles", 2, 128, [np.arange(256, dtype=i32) * 3 + 1], [np.zeros(1024, i32)], [i32(w)], False)
      for w in (32, 16, 8, 4, 2, 1)],
    ("shuffle_types", 1, 64, [np.linspace(-1, 1, 64) * 1e30, (np.arange(64, dtype=np.int64) << 40) - 7],
     [np.zeros(64), np.zeros(64, np.int64), np.zeros(64, np.float32)], [], False),
    *[("votes", 1, 96, [(rng.random(96) < 0.5).astype(i32)], [np.zeros(384, u32)], [u32(m)], False)
      for m in (0xFFFFFFFF, 0xAAAAAAAA, 0x0000FFFF, 0x1)],
    *[("match_reduce", 1, 64, [rng.integers(-4, 4, 64).astype(i32)], [np.zeros(704, u32)], [u32(m)], False)
      for m in (0xFFFFFFFF, 0x0F0F0F0F, 0x3)],
    ("divergent", 1, 64, [], [np.zeros(64, u32)], [], False),
    *[("exited_lanes", 1, b, [], [np.zeros(2 * b, u32)], [u32(live)], False) for b, live in ((64, 20), (48, 32))],
    *[("block_sum", 4, t, [rng.random(1 << 16).astype(np.float32)], [np.zeros(4, np.float32)], [i32(1 << 16)], False)
      for t in (32, 128, 256, 1024)],
    *[(f"tiles{n}", 1, 96, [], [np.zeros(768, u32)], [], False) for n in (4, 8, 16, 32)],
    ("grid_rounds", 8, 64, [], [np.zeros(8, i32), np.zeros(25, i32)], [i32(3)], True),
]


def run(mod, case, on_gpu):
    name, grid, block, inputs, outputs, scalars, coop = case
    if on_gpu:
        arrays = []
        for a in inputs + outputs:
            g = pc.empty(a.shape, a.dtype)
            g.copy_from_host(a)
            arrays.append(g)
    else:
        arrays = [a.copy() for a in inputs + outputs]
    pc.launch(mod.get_kernel(name), grid, block, *arrays, *scalars, cooperative=coop)
    got = [a.copy_to_host() if on_gpu else a for a in arrays[len(inputs):]]
    if on_gpu:
        for a in arrays:
            pc.free(a)
    return got


me = shmem.my_pe()
gpu = pc.Module(SOURCE, name="warp_suite", target="gpu")
cpu = pc.Module(SOURCE, name="warp_suite", target="cpu")
for case in CASES:
    for g, c in zip(run(gpu, case, True), run(cpu, case, False)):
        if g.dtype.kind == "f" and case[0] == "block_sum":
            np.testing.assert_allclose(c, g, rtol=1e-6, err_msg=case[0])
        else:
            np.testing.assert_array_equal(c, g, err_msg=f"{case[0]} {case[5]}")
print(f"OK pe={me}")
