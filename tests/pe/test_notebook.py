"""Notebooks on N PEs (pyshmem.notebook, on ipyparallel): the quickstart notebook runs
headless with nbclient; a failing PE is named and the others are interrupted instead of
hanging; PEs stop and restart in one kernel, leaving no process or segment behind."""

import os
import time
from pathlib import Path

import pytest

from conftest import REPO
from latency_bounds import assert_within

nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (pip install -e '.[test]')")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("ipyparallel", reason="ipyparallel is not installed (pip install ipyparallel)")

QUICKSTART = REPO / "examples" / "notebooks" / "quickstart.ipynb"


def _text(cell):
    """A cell's printed text: streams, and the text of displayed outputs (%%px shows those)."""
    return "".join(o.get("text", "") if o.get("output_type") == "stream" else o.get("data", {}).get("text/plain", "")
                   for o in cell.get("outputs", []))


def _shm():
    return set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()


def test_quickstart_notebook_executes_headless(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setenv("PYSHMEM_SYMMETRIC_SIZE", "64M")
    before = _shm()
    nb = nbformat.read(QUICKSTART, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                            ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    out = {c.source.splitlines()[0]: _text(c) for c in code}
    assert "pyshmem: 4 PEs running" in out["%load_ext pyshmem"]
    ring = "\n".join(_text(c) for c in code if "pyshmem.put(x" in c.source)
    assert "[PE 1] x = [0 0 0 0] (from PE 0); left neighbour holds [3 3 3 3]" in ring, ring
    assert "[PE 0] x = [3 3 3 3] (from PE 3); left neighbour holds [2 2 2 2]" in ring, ring
    kernel = "\n".join(_text(c) for c in code if "@cuda.jit" in c.source)
    assert "[PE 1] kernel put arrived: [0. 1. 2.]" in kernel and "[PE 0] kernel put arrived: [30. 31. 32.]" in kernel
    summed = "\n".join(_text(c) for c in code if "sum_reduce" in c.source)
    assert all(f"[PE {k}] sum over PEs: 10.0" in summed for k in range(4)), summed
    px = "\n".join(_text(c) for c in code if c.source.startswith("%%px"))
    assert all(f"PE {k} of 4" in px for k in range(4)), px
    plots = [o for c in code if "plt.loglog" in c.source for o in c.outputs if "image/png" in o.get("data", {})]
    assert plots, "the benchmark cell drew no figure"
    assert "pyshmem: 4 PEs stopped" in out["%shmem_stop"]
    assert _shm() <= before, "the PEs left shared-memory segments behind"


def test_failure_on_one_pe_is_named_and_does_not_wedge_the_others(capsys):
    import pyshmem.notebook as nb

    with pytest.raises(RuntimeError, match=r"no PEs are running; call pyshmem.notebook.start\(n\)"):
        nb.run("print(1)")
    session = nb.start(3)
    try:
        with pytest.raises(RuntimeError, match="3 PEs are already running; call pyshmem.notebook.stop"):
            nb.start(2)
        assert nb.run("y = pyshmem.my_pe() * 10") == [None, None, None]
        assert nb.pull("y") == [0, 10, 20]
        t0 = time.monotonic()
        errors = nb.run("if pyshmem.my_pe() == 1:\n    raise ValueError('boom on PE 1')\npyshmem.barrier_all()")
        assert_within("notebook_failure", time.monotonic() - t0)
        assert [getattr(e, "ename", None) for e in errors] == ["KeyboardInterrupt", "ValueError", "KeyboardInterrupt"]
        err = capsys.readouterr().err
        assert "[PE 1] failed with ValueError:" in err and "boom on PE 1" in err
        assert "[PE 0] interrupted after PE 1 failed" in err
        pids = list(session._pids)
    finally:
        nb.stop()
    deadline = time.monotonic() + 20
    while any(Path(f"/proc/{p}").exists() for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in pids if Path(f"/proc/{p}").exists()], "PE processes outlived stop()"
    nb.start(2)  # restart in the same process
    try:
        assert nb.run("z = pyshmem.n_pes()") == [None, None] and nb.pull("z") == [2, 2]
    finally:
        nb.stop()
    assert nb.current() is None
