"""Docs that are derived from code stay in sync with it."""

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
