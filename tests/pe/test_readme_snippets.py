"""The README's runnable snippets run as shown."""

import re

import pytest

from conftest import REPO, run_pes


def _snippet(marker):
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), re.S)
    found = [b for b in blocks if marker in b]
    assert len(found) == 1, f"expected one README snippet containing {marker!r}"
    return "\n".join(line[2:] if line.startswith("  ") else line for line in found[0].splitlines())


def test_numba_device_api_snippet_runs_under_the_simulator(tmp_path):
    pytest.importorskip("numba.cuda", reason="numba-cuda is not installed (pip install 'pyshmem[numba]')")
    prog = tmp_path / "ring_numba.py"
    prog.write_text(_snippet("@cuda.jit"))
    proc = run_pes(prog, 2, timeout=180, launcher_args=("--sim",))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for pe in range(2):
        assert f"PE {pe} got PE {(pe - 1) % 2}'s outbox" in proc.stdout, proc.stdout + proc.stderr
