"""python -m pyshmem.perftest compare: every system it finds runs with tiny sizes and
reports each figure; missing peers are reported as skipped (never faked); a wrong
transfer fails the run; the report, JSON and PNG plots are written. Timings are never
asserted: only that figures exist, are positive, and that the target arithmetic is right."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, cpu_kernel_toolchain_missing

from pyshmem.perftest import compare as cmp

TINY = ("--sizes", "8,64K", "--iters", "8", "--batches", "1", "--rounds", "1", "--timeout", "240")
needs_kernels = pytest.mark.skipif(cpu_kernel_toolchain_missing() is not None,
                                   reason=str(cpu_kernel_toolchain_missing()))


def _compare(*args, env=None):
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PYSHMEM_")}
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    full_env["PYSHMEM_SYMMETRIC_SIZE"] = "64M"
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-m", "pyshmem.perftest", "compare", *args], capture_output=True,
                          text=True, timeout=900, env=full_env, cwd=str(REPO))


@needs_kernels
def test_compare_measures_what_is_installed_and_skips_the_rest(tmp_path):
    proc = _compare("--systems", "pyshmem,device,memcpy,mpi4py,ucx_perftest,shmem4py,oshmem", *TINY,
                    "--oshrun", "/nonexistent/oshrun", "--oshcc", "/nonexistent/oshcc", "--out", str(tmp_path),
                    "--rounds", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((tmp_path / "compare.json").read_text())
    st = report["systems"]
    assert st["oshmem"] == {"status": "skipped", "reason": st["oshmem"]["reason"]}
    assert "oshcc not found (/nonexistent/oshcc)" in st["oshmem"]["reason"]
    assert st["shmem4py"]["status"] == "skipped"  # not installed, or no oshrun to start it with
    assert "not installed" in st["shmem4py"]["reason"] or "oshrun not found" in st["shmem4py"]["reason"]
    for s in ("pyshmem", "device", "memcpy", "mpi4py", "ucx_perftest"):
        assert st[s]["status"] == "measured", (s, st[s])
    got = {(r["system"], r["figure"], r["bytes"]) for r in report["rows"]}
    for s in ("pyshmem", "device", "mpi4py"):
        for fig in cmp.FIGURES:
            for n in (8, 65536):
                assert (s, fig, n) in got, (s, fig, n)
    assert {("memcpy", "put_bw", 8), ("ucx_perftest", "ping_pong", 65536), ("ucx_perftest", "put_bw", 8)} <= got
    assert not any(r["system"] in ("oshmem", "shmem4py") for r in report["rows"])  # nothing faked
    assert all(r["value"] > 0 for r in report["rows"])
    # every figure is the median of the two interleaved rounds
    assert all(len(r["rounds"]) == 2 and r["value"] == pytest.approx(sum(r["rounds"]) / 2) for r in report["rows"])
    assert "median over 2 interleaved runs" in proc.stdout
    verdicts = {t["target"]: t["verdict"] for t in report["targets"]}
    assert all(v == "not measured" for t, v in verdicts.items() if "shmem4py" in t or "OSHMEM" in t), verdicts
    assert verdicts["Device API (CPU): put bandwidth >= 64 KiB >= 0.9x the memcpy ceiling"] in ("met", "missed")
    md = (tmp_path / "compare.md").read_text()
    assert "### put_latency (us, lower is better)" in md and "| 64 KiB |" in md and "pyshmem / mpi4py" in md
    assert "- OSHMEM C: skipped (oshcc not found" in md and md in proc.stdout
    for png in ("latency.png", "bandwidth.png"):
        assert (tmp_path / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", png


@needs_kernels
def test_compare_fails_loudly_on_wrong_data(tmp_path):
    proc = _compare("--systems", "pyshmem,device,mpi4py", *TINY, "--inject-error", "--no-plots", "--out",
                    str(tmp_path))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    st = json.loads((tmp_path / "compare.json").read_text())["systems"]
    assert {s: st[s]["status"] for s in ("pyshmem", "device", "mpi4py")} == dict.fromkeys(
        ("pyshmem", "device", "mpi4py"), "failed")
    assert "shmem_p2p (pyshmem) on rank 1: wrong data after put_latency 8 B" in st["pyshmem"]["reason"]
    assert "device_p2p on rank 1: wrong data after put_latency 8 B" in st["device"]["reason"]
    assert "mpi_rma on rank 1: wrong data after put_latency 8 B" in st["mpi4py"]["reason"]
    assert not (tmp_path / "latency.png").exists()


@pytest.mark.skipif(not (shutil.which("oshrun") and shutil.which("oshcc")), reason="no OpenSHMEM (oshrun/oshcc)")
def test_compare_runs_the_openshmem_peers():
    systems = "oshmem,shmem4py" if importlib.util.find_spec("shmem4py") else "oshmem"
    proc = _compare("--systems", systems, *TINY, "--no-plots")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for s in systems.split(","):
        assert f"- {cmp.LABELS[s]}: measured" in proc.stdout, proc.stdout


def test_compare_refuses_bad_arguments_and_the_launcher():
    bad = _compare("--systems", "pyshmem,nccl")
    assert bad.returncode == 2 and "need --systems from pyshmem, device" in bad.stderr and "(got nccl)" in bad.stderr
    sizes = _compare("--sizes", "8,lots")
    assert sizes.returncode == 2 and "'lots' is not a size" in sizes.stderr
    nested = _compare("--systems", "pyshmem", env={"PYSHMEM_PE": "0"})
    assert nested.returncode == 2 and "not under shmemrun" in nested.stderr


def test_target_verdicts_and_ratio_tables():
    rows = [{"system": s, "figure": f, "bytes": n, "value": v} for s, f, n, v in (
        ("pyshmem", "put_latency", 8, 0.3), ("shmem4py", "put_latency", 8, 4.5),   # 15x faster: met
        ("pyshmem", "ping_pong", 8, 1.0), ("shmem4py", "ping_pong", 8, 5.0),       # 5x: missed
        ("pyshmem", "put_bw", 65536, 20.0), ("shmem4py", "put_bw", 65536, 10.0),
        ("pyshmem", "put_bw", 1 << 20, 9.0), ("shmem4py", "put_bw", 1 << 20, 10.0),  # worst 0.9: missed
        ("pyshmem", "put_bw", 8, 0.001), ("shmem4py", "put_bw", 8, 1.0),           # < 64 KiB: ignored
        ("device", "put_latency", 8, 0.06), ("oshmem", "put_latency", 8, 0.05))]  # 1.2x: met (<=)
    verdicts = {t["target"]: (t["verdict"], t["ratio"]) for t in cmp.evaluate_targets(rows)}
    assert verdicts["Python host API: 8-byte put + quiet >= 10x faster than shmem4py"] == ("met", pytest.approx(15))
    assert verdicts["Python host API: ping-pong >= 7x faster than shmem4py"] == ("missed", pytest.approx(5))
    assert verdicts["Python host API: put bandwidth >= 64 KiB >= 1.0x shmem4py"] == ("missed", pytest.approx(0.9))
    assert verdicts["Device API (CPU): 8-byte put + quiet <= 1.2x OSHMEM C's latency"] == ("met", pytest.approx(1.2))
    assert verdicts["Device API (CPU): ping-pong <= 1.2x OSHMEM C's"] == ("not measured", None)
    status = {s: {"status": "measured" if s in ("pyshmem", "shmem4py", "device", "oshmem") else "skipped",
                  "reason": "" if s in ("pyshmem", "shmem4py", "device", "oshmem") else "not here"}
              for s in cmp.SYSTEMS}
    md = cmp.markdown(rows, status, cmp.evaluate_targets(rows), "## header")
    assert "| 8 B | 0.3 | 0.06 | 4.5 | 0.05 | 0.07 | 1.20 |" in md, md
    assert "| 1 MiB | 9 | 10 | 0.90 |" in md, md
    assert "- mpi4py RMA: skipped (not here)" in md


def _update_performance():
    spec = importlib.util.spec_from_file_location("update_performance", REPO / "benchmarks" / "update_performance.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_doc_blocks_are_spliced_between_their_markers():
    splice = _update_performance().splice
    doc = "intro\n<!-- generated: compare -->\nold\ntable\n<!-- end generated: compare -->\nprose $1 \\1\n"
    assert splice(doc, "compare", "new $1 \\g<0>\n") == (
        "intro\n<!-- generated: compare -->\nnew $1 \\g<0>\n<!-- end generated: compare -->\nprose $1 \\1\n")
    with pytest.raises(ValueError, match="no '<!-- generated: collectives -->'"):
        splice(doc, "collectives", "x")


@needs_kernels
def test_update_performance_regenerates_a_copy_of_the_doc(tmp_path):
    """The one command that regenerates docs/performance.md, run --quick on a copy."""
    doc = tmp_path / "performance.md"
    doc.write_text((REPO / "docs" / "performance.md").read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYSHMEM_")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "update_performance.py"), "--doc", str(doc),
                           "--quick"], capture_output=True, text=True, timeout=900, env=env, cwd=str(REPO))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = doc.read_text()
    compare_block = text.split("<!-- generated: compare -->")[1].split("<!-- end generated: compare -->")[0]
    assert "### put_bw (GB/s, higher is better)" in compare_block and "![bandwidth vs size](perf/bandwidth.png)" in \
        compare_block
    coll_block = text.split("<!-- generated: collectives -->")[1].split("<!-- end generated: collectives -->")[0]
    assert "| barrier_all | 2 |" in coll_block and "| sum_reduce | 2 | 1024 |" in coll_block
    assert (tmp_path / "perf" / "latency.png").exists() and (tmp_path / "perf" / "compare.json").exists()
    assert text.count("<!-- end generated:") == 2 and "## Collectives (issue 5's measure)" in text  # prose kept
