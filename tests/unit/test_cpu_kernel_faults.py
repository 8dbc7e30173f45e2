"""printf, assert, __trap, forward progress and the random schedule of CUDA C++ kernels
on the CPU build (issue 17), with tests/kernels/faults_and_schedule.cu: printf lines of
concurrent blocks never mix; an assert or trap raises KernelError naming kernel, block,
thread, source line and PE, and stops blocks that wait for something that will never
come; a spin on an atomic flag set by another thread of the block finishes; the seeded
random schedule finds a planted missing __syncthreads that the fixed order hides."""

import re
import time
from pathlib import Path

import numpy as np
import pytest

import pyshmem
import pyshmem.cuda as pcuda
from conftest import cpu_kernel_toolchain_missing
from latency_bounds import assert_within

REASON = cpu_kernel_toolchain_missing()
SOURCE = (Path(__file__).resolve().parents[1] / "kernels" / "faults_and_schedule.cu").read_text()


@pytest.fixture(scope="module")
def module():
    if REASON is not None:
        pytest.skip(str(REASON))
    return pcuda.Module(SOURCE, name="faults_and_schedule", target="cpu")


def run(module, name, grid, block, *args, **kw):
    pcuda.launch(module.get_kernel(name), grid, block, *args, **kw)


def test_printf_lines_are_whole(module, capfd):
    run(module, "print_lines", 8, 64, np.int32(280))  # 8 blocks at once, lines over 300 bytes
    out = capfd.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("line ")]
    assert len(lines) == 8 * 64, out[-2000:]
    seen = set()
    for line in lines:
        m = re.fullmatch(r"line block=(\d+) thread=(\d+) ([a-z]{280}) end", line)
        assert m, line
        b, t = int(m.group(1)), int(m.group(2))
        assert m.group(3) == "".join(chr(97 + (t + i) % 26) for i in range(280))
        seen.add((b, t))
    assert len(seen) == 8 * 64


@pytest.mark.parametrize("kind, what", [(0, r"faults_and_schedule\.cu:\d+: .*fail_while_others_wait.*: "
                                            r"Assertion `threadIdx\.x != bad_thread' failed"),
                                        (1, r"__trap\(\) called")])
def test_assert_and_trap_fail_the_launch_and_stop_the_waiting_blocks(module, kind, what):
    flag = np.zeros(1, np.int32)
    started = time.monotonic()
    with pytest.raises(pyshmem.KernelError, match=what) as info:
        run(module, "fail_while_others_wait", 6, 64, flag, np.int32(kind), np.uint32(3), np.uint32(37))
    print(f"failed launch: {time.monotonic() - started:.2f} s")
    assert_within("kernel_fault_stop", time.monotonic() - started, cap=120)
    text = str(info.value)
    assert "thread (37,0,0) of block (3,0,0) of kernel fail_while_others_wait" in text
    assert "pyshmem.cuda.launch on PE 0" in text
    assert "more blocks" not in text  # the stopped blocks are not errors of their own
    # The module stays usable.
    slots, sums = np.zeros(64, np.int32), np.zeros(1, np.int32)
    run(module, "with_syncthreads", 1, 64, slots, sums)
    assert sums[0] == 64 * 65 // 2


def test_a_spin_on_an_atomic_flag_lets_the_block_run(module):
    flag, seen = np.zeros(1, np.int32), np.zeros(2, np.int32)
    run(module, "atomic_spin", 1, 256, flag, seen)
    assert seen.tolist() == [1, 1]


def sums_under(module, monkeypatch, schedule, kernel, blocks=4, threads=64):
    monkeypatch.setenv("PYSHMEM_CPU_SCHEDULE", schedule)
    slots, sums = np.zeros(blocks * threads, np.int32), np.zeros(blocks, np.int32)
    run(module, kernel, blocks, threads, slots, sums)
    return sums.tolist()


def test_random_schedule_finds_a_missing_syncthreads(module, monkeypatch):
    right = [64 * 65 // 2] * 4
    # The fixed order hides the bug: the last thread always runs last.
    assert sums_under(module, monkeypatch, "fixed", "missing_syncthreads") == right
    wrong = [seed for seed in range(1, 6)
             if sums_under(module, monkeypatch, f"random:{seed}", "missing_syncthreads") != right]
    assert wrong, "no seed exposed the missing __syncthreads"
    # A seed replays the same interleaving of each block's threads.
    seed = wrong[0]
    assert sums_under(module, monkeypatch, f"random:{seed}", "missing_syncthreads") == \
        sums_under(module, monkeypatch, f"random:{seed}", "missing_syncthreads")
    # The correct kernel is right under every seed.
    for s in range(1, 6):
        assert sums_under(module, monkeypatch, f"random:{s}", "with_syncthreads") == right


def test_the_sources_compile_for_sm90():
    pytest.importorskip("cuda.core", reason="cuda-core is not installed (pip install 'pyshmem[cuda]')")
    ptx = bytes(pcuda.compile(SOURCE, arch="sm_90", output="ptx", name="faults_and_schedule").code).decode()
    for kernel in ("print_lines", "fail_while_others_wait", "atomic_spin", "missing_syncthreads", "bad_pe", "blind_spin"):
        assert f".entry {kernel}(" in ptx, kernel


@pytest.mark.parametrize("kind", [0, 1, 2], ids=["volatile_same_warp", "volatile_other_warp", "atomic_ref"])
def test_a_blind_spin_is_preempted(module, kind):
    """Thread 0 spins with plain volatile loads or cuda::atomic_ref, which are no switch
    points, on a flag its own block sets: the spinning fiber is preempted after 10-20 ms
    of CPU time so the setter runs (and the preemption is counted)."""
    flag, seen = np.zeros(1, np.int32), np.zeros(1, np.int32)
    before = module._lib.pyshmem_cpu_preemptions()
    run(module, "blind_spin", 1, 128, flag, seen, np.int32(kind))
    assert seen[0] == 1 and flag[0] == 1
    assert module._lib.pyshmem_cpu_preemptions() > before


def test_preempted_threads_keep_their_registers(module):
    """16 threads of one block each grind for tens of ms of CPU without a switch point:
    they are preempted mid-loop (every register, flags and vector state saved and
    restored), and their results equal those of 16 one-thread blocks, which are never
    preempted."""
    iters = np.int32(15_000_000)
    preempted, alone = np.zeros(32), np.zeros(32)
    before = module._lib.pyshmem_cpu_preemptions()
    run(module, "grind", 1, 16, preempted, iters)
    assert module._lib.pyshmem_cpu_preemptions() > before
    run(module, "grind", 16, 1, alone, iters)
    np.testing.assert_array_equal(preempted, alone)


def test_preemption_works_for_every_kernel_library():
    """Each kernel library installs its own SIGURG handler over the previous one's: a
    tick for a block of the first library passes through the second's handler."""
    first = pcuda.Module(SOURCE, name="faults_and_schedule", target="cpu")
    second = pcuda.Module(SOURCE + "\n// another library\n", name="faults_and_schedule_b", target="cpu")
    for mod in (second, first):
        flag, seen = np.zeros(1, np.int32), np.zeros(1, np.int32)
        pcuda.launch(mod.get_kernel("blind_spin"), 1, 64, flag, seen, np.int32(1))
        assert seen[0] == 1
