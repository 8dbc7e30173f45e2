"""The memory model proven by one-way producer/consumer programs (memory_model_oneway.py).

Each rule (fence, quiet, put_signal[_nbi], put_nbi + quiet, get_nbi + quiet, AMOs after
a fence, barrier_all, and the device API's fence/quiet/put_signal/put_nbi from a CUDA
C++ kernel of the CPU build) must hold in the normal mode and under the ordering check
(PYSHMEM_ORDER_CHECK=1) for many seeds; and with the guarantee removed by the test hook
(pyshmem's ``break_guarantee``), the ordering check must make the same program fail:
the check is what turns a green run into proof, since on one node a put is a memcpy.
"""

import re

import pytest

from conftest import assert_ok, cpu_kernel_toolchain_missing, run_pes, ucx_unavailable

PROGRAM = "memory_model_oneway.py"
LATE = "the data arrived after what ordered it"


def _rules():
    """Every rule, or only the host-API ones where CPU kernels cannot be built."""
    return "host" if cpu_kernel_toolchain_missing() else "all"


def _check_env(seed):
    return {"PYSHMEM_ORDER_CHECK": "1", "PYSHMEM_ORDER_CHECK_SEED": str(seed)}


@pytest.mark.parametrize("npes", [2, 3])
def test_rules_hold_in_normal_mode(npes):
    assert_ok(run_pes(PROGRAM, npes, _rules(), timeout=120), npes)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5, 6])
def test_rules_hold_under_ordering_check(seed):
    proc = run_pes(PROGRAM, 2 if seed % 3 else 3, _rules(), timeout=150, env=_check_env(seed))
    assert_ok(proc, 2 if seed % 3 else 3)


@pytest.mark.parametrize("check", [False, True], ids=["normal", "ordering-check"])
def test_rules_hold_over_ucx(check):
    """PYSHMEM_REMOTE_ONLY=1: every peer through UCX; its fence/quiet are then the real
    transport's, and the check applies its held operations through UCX."""
    if ucx_unavailable():
        pytest.skip(ucx_unavailable())
    env = dict(_check_env(8) if check else {}, PYSHMEM_REMOTE_ONLY="1")
    assert_ok(run_pes(PROGRAM, 2, _rules(), timeout=150, env=env), 2)


def test_removed_fence_is_caught_over_ucx():
    if ucx_unavailable():
        pytest.skip(ucx_unavailable())
    env = dict(_check_env(9), PYSHMEM_REMOTE_ONLY="1", PYSHMEM_ORDER_CHECK_DELAY_US="20000")
    proc = run_pes(PROGRAM, 2, "fence", 60, "--break", "fence", timeout=120, env=env)
    assert proc.returncode != 0 and LATE in proc.stdout + proc.stderr, proc.stdout + proc.stderr


# (rule, the guarantee it relies on): removing that guarantee must fail the rule's check.
CAUGHT = [
    ("fence", "fence"),
    ("quiet", "quiet"),
    ("put_signal", "put_signal"),
    ("put_signal_nbi", "put_signal"),
    ("put_signal_strided", "put_signal"),
    ("put_nbi_quiet", "quiet"),
    ("get_nbi_quiet", "quiet"),
    ("amo_fence", "fence"),
    ("barrier", "quiet"),
    ("device_fence", "fence"),
    ("device_quiet", "quiet"),
    ("device_put_signal", "put_signal"),
    ("device_put_nbi_quiet", "quiet"),
]


@pytest.mark.parametrize("rule,guarantee", CAUGHT, ids=[f"{r}-without-{g}" for r, g in CAUGHT])
def test_removed_guarantee_is_caught(rule, guarantee):
    if rule.startswith("device_") and cpu_kernel_toolchain_missing():
        pytest.skip(cpu_kernel_toolchain_missing())
    # A long delay: the consumer sees the late data missing even on a loaded machine
    # (with 20 ms, a consumer descheduled past the delay on a busy 2-core machine missed
    # every reordering of a run now and then). The run stops at the first one caught, so
    # the delay costs little.
    env = dict(_check_env(7), PYSHMEM_ORDER_CHECK_DELAY_US="200000")
    proc = run_pes(PROGRAM, 2, rule, 60, "--break", guarantee, timeout=120, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"rule {rule} passed with {guarantee} removed:\n{out}"
    assert f"rule {rule}, iteration" in out and LATE in out, out
    # shmemrun names the seed that replays the run
    assert "PYSHMEM_ORDER_CHECK_SEED=7 replays its choices" in out, out


def test_user_bug_sync_all_instead_of_quiet():
    """put + sync_all is a bug (sync_all completes no put): fine on one node, caught by
    the check (the example in docs/memory_model.md)."""
    assert_ok(run_pes(PROGRAM, 2, "sync_bug", timeout=60), 2)
    proc = run_pes(PROGRAM, 2, "sync_bug", timeout=60,
                   env={"PYSHMEM_ORDER_CHECK": "1", "PYSHMEM_ORDER_CHECK_DELAY_US": "20000"})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "rule sync_bug, iteration" in out and LATE in out, out
    seed = re.search(r"PYSHMEM_ORDER_CHECK_SEED=(\d+) replays", out)
    assert seed, f"shmemrun did not print the seed it drew:\n{out}"
    # The printed seed replays: the same bug fails again.
    again = run_pes(PROGRAM, 2, "sync_bug", timeout=60,
                    env=dict(_check_env(seed.group(1)), PYSHMEM_ORDER_CHECK_DELAY_US="20000"))
    assert again.returncode != 0 and LATE in again.stdout + again.stderr, again.stdout + again.stderr


def test_bad_seed_is_rejected():
    proc = run_pes("team_names.py", 2, timeout=60, env=_check_env("twelve"))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "PYSHMEM_ORDER_CHECK_SEED='twelve' is not a non-negative integer" in out, out


def test_ordering_check_refuses_the_cuda_backend(fake_driver):
    """GPU memory operations complete at once and are not held: with the cuda backend
    the check would miss or misreport them, so init refuses it with how to fix it."""
    env = dict(_check_env(3), PYSHMEM_BACKEND="cuda", PYSHMEM_CUDA_DRIVER=fake_driver,
               PYSHMEM_CUDA_SYMMETRIC_SIZE="8M")
    proc = run_pes("team_names.py", 2, timeout=60, env=env)
    out = proc.stdout + proc.stderr
    if "built without the CUDA headers" in out:
        pytest.skip("the core was built without the CUDA backend")
    assert proc.returncode != 0, out
    assert "PYSHMEM_ORDER_CHECK=1 checks the host heap and CPU-build kernels, so it needs the cpu backend" in out, out
