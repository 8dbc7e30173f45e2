"""The device API executing on a GPU: one PE, heap in device memory (harness.py).
Skipped without a GPU; scripts/gpu_check.sh runs it on a GPU machine."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import GpuPE, compile_kernels, gpu_available, i32, ptr, u64  # noqa: E402

AVAILABLE, WHY = gpu_available()
pytestmark = pytest.mark.skipif(not AVAILABLE, reason=f"needs a GPU: {WHY}")


@pytest.fixture(scope="module")
def pe():
    g = GpuPE(heap_bytes=64 << 20)
    return g.load(compile_kernels(g.arch))


def test_thread_scope_calls(pe):
    sym, sig, out = pe.alloc(64 * 8), pe.alloc(8), pe.scratch(16 * 8)
    pe.launch("check_thread_calls", 1, 32, ptr(sym), ptr(sig), ptr(out))
    got = pe.from_device(out, 15, np.int64).tolist()
    assert got == [0, 1, 42, 84, 0, 5, 9, 9, 5, 4, 18, 7, 10, 1, 1], got
    assert pe.from_device(sym + 32 * 8, 8, np.int64).tolist() == [3 * i for i in range(8)]


def test_atomics_under_contention(pe):
    counter = pe.alloc(8)
    pe.launch("contended_add", 80, 256, ptr(counter), i32(20))
    assert int(pe.from_device(counter, 1, np.uint64)[0]) == 80 * 256 * 20


@pytest.mark.parametrize("scope", [0, 1, 2], ids=["thread", "warp", "block"])
def test_scoped_puts_move_every_byte(pe, scope):
    n = 1 << 20
    src, dst = pe.alloc(n), pe.alloc(n)
    data = (np.arange(n, dtype=np.uint64) * 2654435761 % 251).astype(np.uint8)
    pe.to_device(src, data)
    pe.launch("put_scoped", 8, 128, ptr(dst), ptr(src), u64(n), i32(scope), i32(1))
    assert np.array_equal(pe.from_device(dst, n, np.uint8), data)


def test_block_put_signal(pe):
    n = 4096
    src, dst, sig = pe.alloc(4 * n), pe.alloc(4 * n), pe.alloc(8)
    pe.to_device(src, np.arange(n, dtype=np.float32))
    pe.launch("block_put_signal", 1, 256, ptr(dst), ptr(src), u64(n), ptr(sig))
    assert np.array_equal(pe.from_device(dst, n, np.float32), np.arange(n, dtype=np.float32))
    assert int(pe.from_device(sig, 1, np.uint64)[0]) == 1


def test_debug_mode_traps_bad_pe():
    g = GpuPE(heap_bytes=16 << 20, debug=True)
    g.load(compile_kernels(g.arch))
    sym = g.alloc(8)
    with pytest.raises(RuntimeError, match="CUDA driver call failed"):
        g.launch("bad_pe", 1, 1, ptr(sym))
