"""The dependency rules of docs/design.md ("Layers"), as scripts/check_layers.py checks
them: csrc/ layers include only downward, and pyshmem/ has no import cycle.

The violations left are KNOWN, each with what it is waiting for (issue 20). The test
fails on a new one, and on a known one that is gone (take it off the list: the list
only shrinks)."""

import json
import subprocess
import sys

import pytest

from conftest import REPO

KNOWN_UPWARD_INCLUDES = set()  # none left: keep it so
KNOWN_IMPORT_CYCLES = []  # none left: keep it so


def _check():
    proc = subprocess.run([sys.executable, str(REPO / "scripts" / "check_layers.py"), "--json"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0 or proc.stdout, proc.stderr
    return json.loads(proc.stdout)


def test_no_new_upward_include_and_none_left_on_the_list():
    found = {(path, target) for path, _line, target in _check()["upward_includes"]}
    assert not found - KNOWN_UPWARD_INCLUDES, f"an include of a higher layer: {sorted(found - KNOWN_UPWARD_INCLUDES)}"
    assert not KNOWN_UPWARD_INCLUDES - found, f"fixed, take it off KNOWN: {sorted(KNOWN_UPWARD_INCLUDES - found)}"


def test_no_new_import_cycle_and_none_left_on_the_list():
    cycles = _check()["import_cycles"]
    assert [c for c in cycles if c not in KNOWN_IMPORT_CYCLES] == [], cycles
    assert [c for c in KNOWN_IMPORT_CYCLES if c not in cycles] == [], f"fixed, take it off KNOWN: {cycles}"


def test_the_checker_finds_what_it_is_for(tmp_path):
    # A planted upward include and a planted import cycle are reported.
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import check_layers
    finally:
        sys.path.pop(0)
    (tmp_path / "csrc" / "core").mkdir(parents=True)
    (tmp_path / "csrc" / "core" / "x.cpp").write_text('#include "core/ok.h"\n\n#include "host/host.h"\n'
                                                      '#include <host/host.h>\n#include "cuda/std/atomic"\n')
    (tmp_path / "csrc" / "host").mkdir()
    (tmp_path / "csrc" / "host" / "host.h").write_text("")
    (tmp_path / "csrc" / "include" / "pyshmem").mkdir(parents=True)
    (tmp_path / "csrc" / "include" / "pyshmem" / "api.h").write_text('#include "pyshmem/types.h"\n#include "core/env.h"\n')
    (tmp_path / "csrc" / "core" / "env.h").write_text("")
    assert check_layers.upward_includes(tmp_path) == [("csrc/include/pyshmem/api.h", 2, "core"),
                                                      ("csrc/core/x.cpp", 3, "host"), ("csrc/core/x.cpp", 4, "host")]
    (tmp_path / "csrc" / "newlayer").mkdir()
    with pytest.raises(SystemExit, match="csrc/newlayer/ is no known layer"):
        check_layers.upward_includes(tmp_path)
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from pkg.c import g\n")
    (pkg / "c.py").write_text("from . import a\n")
    (pkg / "d.py").write_text("import pkg.a\n")
    assert check_layers.import_cycles(check_layers.import_graph(tmp_path, "pkg")) == [["pkg.a", "pkg.b", "pkg.c"]]
