"""The host-API programs of tests/pe/programs under the ordering check (PYSHMEM_ORDER_CHECK=1).

Each program asserts on the values it moved; here they run with puts, non-blocking
gets, atomics without fetch and signals toward other PEs held and applied late, in a
seeded random order the memory model allows. A program that passes only because a put
on one node is a memcpy (a missing fence or quiet) fails here. The check found such
bugs in these programs when it was written: rma_ops.py (two puts to overlapping bytes,
no fence), team_ops.py (a put and an atomic_add on one word, no fence) and
put_nbi_sources.py (which assumed put_nbi completes at once on one node); and in the C
API ring (tests/cpp/c_api_ring.c, run under the check by tests/unit/test_cpp.py).
"""

import pytest

from conftest import assert_ok, run_pes

# (program, arguments): the programs whose behaviour is the host API's, not a failure's.
PROGRAMS = [
    ("rma_ops.py", ()),
    ("amo_ops.py", ()),
    ("signal_wait_ops.py", ()),
    ("lock_ops.py", ()),
    ("memory_model.py", ()),
    ("coll_ops.py", ()),
    ("team_ops.py", ()),
    ("team_names.py", ()),
    ("put_nbi_sources.py", ()),
    ("bad_input_ops.py", ()),
    ("trace_ops.py", ()),
    ("launcher_env_ring.py", ()),
]


def _params():
    for i, (program, args) in enumerate(PROGRAMS):
        for npes, seed in ((4, 10 + i), (2, 50 + i)):
            yield pytest.param(program, args, npes, seed, id=f"{program[:-3]}-{npes}pe-seed{seed}")


@pytest.mark.parametrize("program, args, npes, seed", list(_params()))
def test_program_under_ordering_check(program, args, npes, seed):
    env = {"PYSHMEM_ORDER_CHECK": "1", "PYSHMEM_ORDER_CHECK_SEED": str(seed)}
    proc = run_pes(program, npes, *args, timeout=150, env=env)
    assert_ok(proc, npes)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
