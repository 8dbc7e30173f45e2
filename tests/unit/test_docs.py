"""Docs that are derived from code stay in sync with it."""

import os
import re
import subprocess
import sys

from conftest import REPO


def test_environment_doc_matches_table():
    """docs/environment.md is the output of `python -m pyshmem info --env-markdown`."""
    out = subprocess.run(
        [sys.executable, "-m", "pyshmem", "info", "--env-markdown"], capture_output=True, text=True, timeout=60,
        cwd=REPO,
    )
    assert out.returncode == 0, out.stderr
    doc = (REPO / "docs" / "environment.md").read_text()
    assert doc == out.stdout, "docs/environment.md is stale: regenerate with python -m pyshmem info --env-markdown"
    assert "PYSHMEM_SYMMETRIC_SIZE" in doc and "PYSHMEM_DEBUG" in doc


def test_readme_starts_with_the_two_commands_ci_runs():
    """README's first code block: an example command, then exactly the test command of .ci/run."""
    readme = (REPO / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", readme, re.S).group(1).strip().splitlines()
    assert len(block) == 2, block
    assert "shmemrun -n 4 python examples/" in block[0]
    ci = (REPO / ".ci" / "run").read_text()
    test_cmd = re.search(r"TEST_COMMAND='(.*)'", ci).group(1)
    assert block[1] == test_cmd
    assert (REPO / block[0].split()[-1]).is_file(), "the README's example program must exist"


def test_info_runs():
    out = subprocess.run([sys.executable, "-m", "pyshmem", "info"], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "pyshmem 0.1" in out.stdout and "shm: available" in out.stdout and "PYSHMEM_SYMMETRIC_SIZE" in out.stdout


def test_info_shows_whole_first_sentences_and_marks_only_what_the_user_set():
    env = {k: v for k, v in os.environ.items() if k != "PYSHMEM_UCX_LIBRARY"}
    out = subprocess.run([sys.executable, "-m", "pyshmem", "info"], capture_output=True, text=True, timeout=60,
                         cwd=REPO, env=env).stdout
    debug = next(line for line in out.splitlines() if "PYSHMEM_DEBUG " in line)
    assert "(e.g. that every PE allocated the same size)" in debug, debug  # not cut at "e.g."
    ucx = next(line for line in out.splitlines() if "PYSHMEM_UCX_LIBRARY" in line)
    assert not ucx.lstrip().startswith("*"), f"pyshmem's own default is shown as set by the user: {ucx}"
    env["PYSHMEM_UCX_LIBRARY"] = "libucp.so.0"
    out = subprocess.run([sys.executable, "-m", "pyshmem", "info"], capture_output=True, text=True, timeout=60,
                         cwd=REPO, env=env).stdout
    assert any(line.lstrip().startswith("* PYSHMEM_UCX_LIBRARY") for line in out.splitlines()), out


def test_help_lists_every_command():
    out = subprocess.run([sys.executable, "-m", "pyshmem", "--help"], capture_output=True, text=True, timeout=60,
                         cwd=REPO)
    assert out.returncode == 0 and "info" in out.stdout and "trace DIR" in out.stdout, out.stdout + out.stderr
    bad = subprocess.run([sys.executable, "-m", "pyshmem", "nonsense"], capture_output=True, text=True, timeout=60,
                         cwd=REPO)
    assert bad.returncode == 2 and "unknown command 'nonsense'" in bad.stderr, bad.stderr
    perf = subprocess.run([sys.executable, "-m", "pyshmem.perftest", "--help"], capture_output=True, text=True,
                          timeout=60, cwd=REPO)
    assert perf.returncode == 0 and "compare" in perf.stdout and "gpu" in perf.stdout, perf.stdout


def test_notebook_extra_installs_a_jupyter_front_end():
    text = (REPO / "pyproject.toml").read_text()
    extra = re.search(r"^notebook = \[(.*?)\]", text, re.M).group(1)
    assert '"notebook"' in extra or '"jupyterlab"' in extra, extra
