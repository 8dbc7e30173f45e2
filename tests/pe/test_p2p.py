"""Point-to-point operations and the OpenSHMEM memory model, on 1, 2 and 4 real PEs.

Each case starts a program from tests/pe/programs under the real launcher (shmemrun);
the program asserts on values and prints ``OK pe=<k>`` on every PE. What each program
covers is in its docstring:

  rma_ops.py          put/get/put_nbi/get_nbi/iput/iget, every dtype family, 2-D C/F,
                      slices and strided views, size=, size 0, 8 MiB, self, ring, all-to-all
  amo_ops.py          every AMO (+ _nbi, generic atomic_op/atomic_fetch_op[_nbi]), contention
                      totals, fetch_add permutation, compare_swap race
  signal_wait_ops.py  put_signal[_nbi] SET/ADD, signal_fetch/wait_until, wait_until with every
                      CMP spelling, wait_until_all/any/some[_vector] and test* with status masks
  lock_ops.py         set/test/clear_lock mutual exclusion, test_lock semantics, Lock class
  memory_model.py     put_signal ordering, put+fence+flag, put+quiet+atomic, ping-pong, ptr(),
                      barrier_all completion, sync_all with atomics, wait_until_some gather

On a 2-core machine 4 PEs are oversubscribed; waits back off, so the runs stay short.
"""

import pytest

from conftest import assert_ok, run_pes

NPES = [1, 2, 4]
TIMEOUT = 90  # hard limit per launch; each program takes a few seconds


def _run(program, npes, env=None):
    proc = run_pes(program, npes, timeout=TIMEOUT, env=env)
    assert_ok(proc, npes)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    return proc


@pytest.mark.parametrize("npes", NPES)
def test_rma(npes):
    _run("rma_ops.py", npes)


@pytest.mark.parametrize("npes", NPES)
def test_amo(npes):
    _run("amo_ops.py", npes)


@pytest.mark.parametrize("npes", NPES)
def test_signals_and_waits(npes):
    _run("signal_wait_ops.py", npes)


@pytest.mark.parametrize("npes", NPES)
def test_locks(npes):
    _run("lock_ops.py", npes)


@pytest.mark.parametrize("npes", NPES)
def test_memory_model(npes):
    _run("memory_model.py", npes)


# --- a few extra schedules for the ordering-sensitive programs ---------------------------


@pytest.mark.parametrize("program", ["memory_model.py", "lock_ops.py", "amo_ops.py"])
def test_odd_pe_count(program):
    """3 PEs: a non-power-of-two job (odd ring, unpaired ping-pong PE, 2-round barrier)."""
    _run(program, 3)


def test_memory_model_soak_no_spin():
    """Longer memory-model run with waits that yield/sleep at once (SPIN_ITERS=0), so
    producers and consumers interleave differently on oversubscribed cores."""
    _run("memory_model.py", 4, env={"MM_SCALE": "3", "PYSHMEM_SPIN_ITERS": "0"})


def test_lock_contention_no_spin():
    """More lock iterations from 4 PEs with sleeping waits: exact counts, one holder."""
    _run("lock_ops.py", 4, env={"LOCK_ITERS": "120", "PYSHMEM_SPIN_ITERS": "0"})
