"""The torch.distributed backend "pyshmem" (pyshmem/torch_backend.py) under torchrun:
every op against gloo on the same inputs (2, 3 and 4 ranks, a staging buffer small
enough that large tensors go in chunks), DDP gradients against gloo's, and the
examples that use it."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import PROGRAMS, REPO

torch = pytest.importorskip("torch")


def run_torchrun(program, nproc, *args, env=None, timeout=300):
    """`torchrun --standalone --nproc_per_node nproc program args` (CompletedProcess).
    On a timeout the whole session is killed: torchrun's workers outlive a killed agent."""
    full = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    full.update(env or {})
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", str(nproc),
           str(program), *map(str, args)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full, cwd=str(REPO),
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"torchrun {program.name} did not end in {timeout} s:\n{out[-4000:]}{err[-8000:]}")
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)


@pytest.mark.parametrize("nproc", [2, 3, 4])
def test_every_backend_op_matches_gloo(nproc):
    proc = run_torchrun(PROGRAMS / "torch_dist_ops.py", nproc, env={"PYSHMEM_TORCH_STAGING_SIZE": "256K"})
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    for r in range(nproc):
        assert f"OK rank={r}" in proc.stdout, proc.stdout


@pytest.mark.parametrize("program, nproc", [("torch_dist_groups.py", 3), ("torch_dist_groups.py", 4),
                                            ("torch_dtensor.py", 2), ("torch_dtensor.py", 3)])
def test_subgroups_dtensor_and_coalesced_ops(program, nproc):
    # torch_dist_groups: subgroups come and go, and running out of slots is clear;
    # torch_dtensor: DTensor, functional collectives and coalesced ops against gloo.
    proc = run_torchrun(PROGRAMS / program, nproc)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    for r in range(nproc):
        assert f"OK rank={r}" in proc.stdout, proc.stdout


def test_ddp_gradients_equal_gloos():
    proc = run_torchrun(PROGRAMS / "torch_ddp.py", 2)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    assert "OK rank=0" in proc.stdout and "OK rank=1" in proc.stdout and "STEP pyshmem=" in proc.stdout, proc.stdout


def test_backend_without_torchrun_is_a_clear_error():
    # Not registered without importing pyshmem.torch: torch's own message.
    code = ("import torch.distributed as dist\ntry:\n    dist.init_process_group('pyshmem', rank=0, world_size=1, "
            "init_method='tcp://127.0.0.1:0')\nexcept Exception as e:\n    print(type(e).__name__, e)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert "pyshmem" in proc.stdout.lower(), proc.stdout + proc.stderr
    # Registered, one process: works as a group of one.
    code = ("import torch, torch.distributed as dist, pyshmem.torch\n"
            "dist.init_process_group('pyshmem', rank=0, world_size=1, init_method='tcp://127.0.0.1:0')\n"
            "t = torch.ones(3); dist.all_reduce(t); dist.broadcast(t, 0); dist.barrier()\n"
            "print('single', t.tolist(), dist.get_backend())\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert proc.returncode == 0 and "single [1.0, 1.0, 1.0] pyshmem" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("example, expect", [
    ("torch_tp_mlp.py", "every weight-gradient shard match the unsplit MLP"),
    ("torch_moe_dispatch.py", "every rank's combined output matches the unsplit mixture of experts"),
])
def test_torch_examples_under_torchrun(example, expect):
    proc = run_torchrun(REPO / "examples" / example, 4)
    assert proc.returncode == 0 and expect in proc.stdout, proc.stdout[-4000:] + proc.stderr[-8000:]


def test_benchmark_runs_side_by_side_with_gloo(tmp_path):
    out, png = tmp_path / "td.json", tmp_path / "td.png"
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "bench_torch_dist.py"), "--quick", "--ranks", "2",
                           "--sizes", "8,4096,512K", "--json", str(out), "--plot", str(png)],
                          capture_output=True, text=True, cwd=REPO, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    import json

    rows = json.loads(out.read_text())
    ops = {(r["op"], r["bytes"]) for r in rows}
    assert {("all_reduce", 8), ("all_to_all_single", 4096), ("broadcast", 8)} <= ops, ops
    assert any(r["op"] == "ddp_step" for r in rows)
    assert all(r["pyshmem_us"] > 0 and r["gloo_us"] > 0 for r in rows)
    assert all(r["pyshmem_sym_us"] > 0 for r in rows if r["op"] in ("all_reduce", "broadcast")), rows
    assert "| all_reduce | 2 | 8 B |" in proc.stdout, proc.stdout
    assert png.stat().st_size > 1000


def test_staging_that_does_not_fit_the_heap_is_a_clear_error():
    proc = run_torchrun(PROGRAMS / "torch_dist_ops.py", 2,
                        env={"PYSHMEM_SYMMETRIC_SIZE": "8M", "PYSHMEM_TORCH_STAGING_SIZE": "16M"}, timeout=120)
    assert proc.returncode != 0
    both = proc.stdout + proc.stderr
    assert "pyshmem backend: its staging buffers (twice PYSHMEM_TORCH_STAGING_SIZE, 33554432 bytes) do not fit" in both, \
        both[-4000:]


def test_a_rank_that_skips_a_collective_ends_the_job_at_the_groups_timeout():
    # torch's timeout= of the default group bounds pyshmem's waits (PYSHMEM_TIMEOUT, unless
    # the user set it): the hung all_reduce ends the job with the report of who waits for what.
    t0 = time.monotonic()
    proc = run_torchrun(PROGRAMS / "torch_dist_timeout.py", 2, 2, timeout=120)
    elapsed = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "up rank=0" in out and "up rank=1" in out and "not reached" not in out, out
    assert "pyshmem: PYSHMEM_TIMEOUT=2.00 s expired on PE 0" in out, out[-6000:]
    assert "PE 0: waits in pyshmem." in out, out[-6000:]
    assert elapsed < 50, f"the job took {elapsed:.0f} s to end"


def test_fsdp2_trains_as_on_gloo():
    params = {}
    for backend in ("gloo", "pyshmem"):
        proc = run_torchrun(PROGRAMS / "torch_fsdp.py", 2, backend)
        assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
        line = next(ln for ln in proc.stdout.splitlines() if ln.startswith("PARAMS "))
        params[backend] = [torch.tensor(p) for p in json.loads(line[len("PARAMS "):])]
    assert len(params["pyshmem"]) == 4
    for a, b in zip(params["pyshmem"], params["gloo"]):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), (a, b)
