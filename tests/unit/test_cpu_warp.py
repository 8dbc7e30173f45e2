"""Warps and cooperative groups of CUDA C++ kernels on the CPU build (issue 17): every
warp intrinsic of tests/kernels/warp_suite.cu against CUDA's rules computed here, with
full and partial masks, every width, divergent branches, exited lanes and a partial
last warp; cooperative-groups tiles, coalesced groups and grid sync; the misuse CUDA
leaves undefined reported as KernelError. Each value test runs under the fixed schedule
and a seeded random one (PYSHMEM_CPU_SCHEDULE). The same source compiles for sm_90."""

from pathlib import Path

import numpy as np
import pytest

import pyshmem
import pyshmem.cuda as pcuda
from conftest import cpu_kernel_toolchain_missing

REASON = cpu_kernel_toolchain_missing()
SOURCE = (Path(__file__).resolve().parents[1] / "kernels" / "warp_suite.cu").read_text()
FULL = 0xFFFFFFFF


@pytest.fixture(scope="module")
def module():
    if REASON is not None:
        pytest.skip(str(REASON))
    return pcuda.Module(SOURCE, name="warp_suite", target="cpu")


@pytest.fixture(params=["fixed", "random:12345"])
def schedule(request, monkeypatch):
    monkeypatch.setenv("PYSHMEM_CPU_SCHEDULE", request.param)
    return request.param


def run(module, name, grid, block, *args, **kw):
    pcuda.launch(module.get_kernel(name), grid, block, *args, **kw)


def shuffle_reference(v, width):
    """What CUDA's four shuffles of the `shuffles` kernel give, per thread."""
    out = np.zeros((len(v), 4), np.int64)
    for t in range(len(v)):
        warp, lane = t - t % 32, t % 32
        seg, pos = lane & ~(width - 1), lane & (width - 1)
        val = lambda l: v[warp + l]  # noqa: E731
        out[t, 0] = val(seg + ((7 * lane + 3) & (width - 1)))
        out[t, 1] = val(lane - 3) if pos >= 3 else v[t]
        out[t, 2] = val(lane + 5) if pos + 5 < width else v[t]
        src = lane ^ 9
        out[t, 3] = val(src) if src < seg + width else v[t]
    return out


@pytest.mark.parametrize("width", [32, 16, 8, 4, 2, 1])
def test_shuffles_with_every_width(module, schedule, width):
    v = np.arange(256, dtype=np.int32) * 3 + 1
    out = np.zeros(256 * 4, np.int32)
    run(module, "shuffles", 2, 128, v, out, np.int32(width))
    np.testing.assert_array_equal(out.reshape(-1, 4), shuffle_reference(v, width))


def test_shuffles_of_8_byte_and_float_values(module, schedule):
    d = np.linspace(-1, 1, 64) * 1e30 + 1e-300
    q = (np.arange(64, dtype=np.int64) << 40) - 7
    dout, qout, fout = np.zeros(64), np.zeros(64, np.int64), np.zeros(64, np.float32)
    run(module, "shuffle_types", 1, 64, d, q, dout, qout, fout)
    np.testing.assert_array_equal(dout, d[np.arange(64) ^ 1])
    np.testing.assert_array_equal(qout, q[(np.arange(64) // 32) * 32 + 31 - np.arange(64) % 32])
    down = np.where(np.arange(64) % 32 < 31, np.arange(64) + 1, np.arange(64))
    np.testing.assert_array_equal(fout, d[down].astype(np.float32))


@pytest.mark.parametrize("mask", [FULL, 0xAAAAAAAA, 0x0000FFFF, 0x00000001, 0x80000001])
def test_votes_with_full_and_partial_masks(module, schedule, mask):
    rng = np.random.default_rng(mask)
    pred = (rng.random(96) < 0.5).astype(np.int32)
    pred[64:] = 1  # a warp where every lane votes yes
    out = np.zeros(96 * 4, np.uint32)
    run(module, "votes", 1, 96, pred, out, np.uint32(mask))
    out = out.reshape(-1, 4)
    for t in range(96):
        lane, warp = t % 32, t // 32
        if not mask >> lane & 1:
            assert out[t].tolist() == [0, 0, 0, 0], t
            continue
        lanes = [l for l in range(32) if mask >> l & 1]
        ballot = sum(1 << l for l in lanes if pred[32 * warp + l])
        assert out[t].tolist() == [ballot, int(ballot != 0), int(ballot == mask), 1], t


@pytest.mark.parametrize("mask", [FULL, 0x0F0F0F0F, 0x00000003])
def test_matches_and_reductions(module, schedule, mask):
    rng = np.random.default_rng(7)
    v = rng.integers(-4, 4, 64).astype(np.int32)
    v[32:] = -3  # all equal: match_all succeeds there
    out = np.zeros(64 * 11, np.uint32)
    run(module, "match_reduce", 1, 64, v, out, np.uint32(mask))
    out = out.reshape(-1, 11).astype(np.int64)
    for t in range(64):
        lane, base = t % 32, t - t % 32
        if not mask >> lane & 1:
            assert not out[t].any(), t
            continue
        lanes = [l for l in range(32) if mask >> l & 1]
        vals = [int(v[base + l]) for l in lanes]
        u = [x & FULL for x in vals]
        same = len(set(vals)) == 1
        expected = [sum(1 << l for l in lanes if v[base + l] == v[t]), mask if same else 0, int(same),
                    sum(vals) & FULL, min(vals) & FULL, max(vals) & FULL, min(u), max(u),
                    np.bitwise_and.reduce(u), np.bitwise_or.reduce(u), np.bitwise_xor.reduce(u)]
        assert out[t].tolist() == [int(x) for x in expected], t


def test_divergent_branches_meet_separately(module, schedule):
    out = np.zeros(64, np.uint32)
    run(module, "divergent", 1, 64, out)
    for t in range(64):
        lane, base = t % 32, t - t % 32
        if lane % 2 == 0:
            assert out[t] == (base + (lane + 2) % 32) * 10, t
        else:
            assert out[t] == sum(1 << l for l in range(1, 32, 2) if l % 3 == 0), t


@pytest.mark.parametrize("live", [32, 20, 1])
def test_exited_lanes_drop_out_of_full_mask_intrinsics(module, schedule, live):
    out = np.zeros(2 * 64, np.uint32)
    run(module, "exited_lanes", 1, 64, out, np.uint32(live))
    out = out.reshape(-1, 2)
    for t in range(64):
        if t % 32 < live:
            assert out[t].tolist() == [(1 << live) - 1, live * (live - 1) // 2], t
        else:
            assert out[t].tolist() == [0, 0], t


def test_partial_last_warp(module, schedule):
    """A 48-thread block: its second warp has 16 lanes, the full mask means those."""
    out = np.zeros(2 * 48, np.uint32)
    run(module, "exited_lanes", 1, 48, out, np.uint32(32))
    out = out.reshape(-1, 2)
    assert out[:32].tolist() == [[FULL, 496]] * 32
    assert out[32:].tolist() == [[0xFFFF, 120]] * 16


@pytest.mark.parametrize("threads", [32, 128, 256, 1024])
def test_block_reduction_with_shuffles(module, schedule, threads):
    x = np.random.default_rng(threads).random(1 << 16).astype(np.float32)
    out = np.zeros(4, np.float32)
    run(module, "block_sum", 4, threads, x, out, np.int32(len(x)))
    np.testing.assert_allclose(out.sum(), x.sum(dtype=np.float64), rtol=1e-5)
    expect = [x[b * threads:].reshape(-1)[np.arange(len(x) - b * threads) % (4 * threads) < threads].sum()
              for b in range(4)]
    np.testing.assert_allclose(out, expect, rtol=1e-4)


def test_warp_aggregated_atomics_with_activemask(module, schedule):
    counter, leaders = np.zeros(1, np.int32), np.zeros(1, np.int32)
    slot = np.full(512, -1, np.int32)
    run(module, "aggregated", 4, 128, counter, slot, leaders)
    taken = slot[np.arange(512) % 3 == 0]
    assert counter[0] == len(taken)
    assert sorted(taken.tolist()) == list(range(len(taken)))  # every slot reserved once
    assert (slot[np.arange(512) % 3 != 0] == -1).all()
    # A leader per group of lanes found together: one per warp when the branch's lanes
    # of a warp meet, more when the schedule splits them (never fewer than warps).
    assert 16 <= leaders[0] <= len(taken)
    if schedule == "fixed":
        assert leaders[0] == 16


@pytest.mark.parametrize("n", [4, 8, 16, 32])
def test_cooperative_groups_tiles(module, schedule, n):
    out = np.zeros(8 * 96, np.uint32)
    run(module, f"tiles{n}", 1, 96, out)
    out = out.reshape(-1, 8)
    for t in range(96):
        first = t - t % n
        rank = t % n
        ballot = sum(1 << r for r in range(n) if r & 1)
        down = t + 1 if rank + 1 < n else t
        assert out[t].tolist() == [sum(range(first, first + n)), ballot, first, down, rank, t // n, rank, n], t


def test_coalesced_threads(module, schedule):
    out = np.zeros(3 * 64, np.uint32)
    run(module, "coalesced", 1, 64, out)
    out = out.reshape(-1, 3)
    for t in range(64):
        if t % 4 != 1:
            assert out[t].tolist() == [0, 0, 0]
            continue
        members = [m for m in range(t - t % 32, t - t % 32 + 32) if m % 4 == 1]
        size, rank, total = out[t].tolist()
        if schedule == "fixed":  # all 8 lanes of the branch are found together
            assert [size, rank, total] == [8, members.index(t), sum(members)], t
        else:  # a subset of them that includes t
            assert 1 <= size <= 8 and rank < size and total >= t, t


@pytest.mark.parametrize("blocks", [1, 8, 33])
def test_grid_sync_under_a_cooperative_launch(module, schedule, blocks):
    cells = np.zeros(blocks, np.int32)
    sums = np.zeros(3 * blocks + 1, np.int32)
    run(module, "grid_rounds", blocks, 64, cells, sums, np.int32(3), cooperative=True)
    for r in range(3):
        assert (sums[r * blocks:(r + 1) * blocks] == sum(range(blocks)) + 100 * r * blocks).all(), r
    assert sums[-1] == blocks * 1000 + 1


@pytest.mark.parametrize("kind, message", [
    (0, r"__shfl_sync\(mask=0x0000ffff\): lane \d+ reads lane 20, which is not in mask"),
    (1, r"__ballot_sync\(mask=0x00000001\): the calling thread's lane 3 is not in mask.*thread \(3,0,0\)"),
    (2, r"__shfl_sync: width 3 is not a power of two"),
    (3, r"meet at different warp intrinsics: this lane \(\d+\) at __\w+_sync, lane \d+ at __\w+_sync"),
    (4, r"cannot finish: threads 9 wait at __syncthreads\(\); threads 0-8, 10-31 wait at warp intrinsics "
        r"\(thread 0 at __reduce_add_sync with mask 0xffffffff\)"),
    (5, r"this_grid\(\)\.sync\(\) needs a cooperative launch: pyshmem\.cuda\.launch\(\.\.\., cooperative=True\)"),
])
def test_misuse_is_reported(module, kind, message):
    out = np.zeros(32, np.int32)
    with pytest.raises(pyshmem.KernelError, match=message) as info:
        run(module, "misuse", 1, 32, out, np.int32(kind))
    assert "kernel misuse" in str(info.value) and "on PE 0" in str(info.value)


def test_grid_sync_that_a_block_never_reaches_is_reported(module):
    out = np.zeros(32, np.int32)
    with pytest.raises(pyshmem.KernelError, match="a block of the grid ended without reaching it"):
        run(module, "misuse", 2, 32, out, np.int32(6), cooperative=True)


def test_cooperative_must_be_a_bool(module):
    with pytest.raises(pyshmem.InvalidArgumentError, match="cooperative must be True or False"):
        run(module, "grid_rounds", 1, 32, np.zeros(1, np.int32), np.zeros(4, np.int32), np.int32(1), cooperative=1)


def test_bad_schedule_is_rejected(module, monkeypatch):
    monkeypatch.setenv("PYSHMEM_CPU_SCHEDULE", "shuffle")
    with pytest.raises(pyshmem.InvalidArgumentError, match="PYSHMEM_CPU_SCHEDULE='shuffle'.*random:SEED"):
        run(module, "divergent", 1, 32, np.zeros(32, np.uint32))


def test_the_suite_compiles_for_sm90():
    pytest.importorskip("cuda.core", reason="cuda-core is not installed (pip install 'pyshmem[cuda]')")
    ptx = bytes(pcuda.compile(SOURCE, arch="sm_90", output="ptx", name="warp_suite").code).decode()
    for kernel in ("shuffles", "votes", "match_reduce", "divergent", "exited_lanes", "block_sum", "aggregated",
                   "tiles8", "coalesced", "grid_rounds", "misuse"):
        assert f".entry {kernel}(" in ptx, kernel
