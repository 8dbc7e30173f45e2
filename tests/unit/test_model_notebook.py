"""examples/notebooks/moe_dispatch_model.ipynb ("is a hierarchical MoE dispatch worth it
at 256 GPUs?") runs top to bottom headless and reaches its answer."""

import os

import pytest

from conftest import REPO

nbclient = pytest.importorskip("nbclient", reason="nbclient is not installed (pip install -e '.[test]')")
nbformat = pytest.importorskip("nbformat")
pytest.importorskip("matplotlib")

NOTEBOOK = REPO / "examples" / "notebooks" / "moe_dispatch_model.ipynb"


def test_moe_dispatch_notebook_answers_its_question(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                            ).execute()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "dgx-h200x32: 256 GPUs in 32 nodes" in text, text
    assert "At 256 GPUs the hierarchical dispatch is 1.10x the direct one with uniform routing and 2.15x with " \
           "4-node routing: worth it when routing is node-limited." in text, text
    assert "gain by GPUs: 8: 1.00x" in text  # one node: nothing to deduplicate
    png = tmp_path / "moe_dispatch_gain.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 5000
