"""The dependency rules of docs/design.md ("Layers"), as scripts/check_layers.py checks
them: csrc/ layers include only downward, and pyshmem/ has no import cycle.

The violations left are KNOWN, each with what it is waiting for (issue 20). The test
fails on a new one, and on a known one that is gone (take it off the list: the list
only shrinks)."""

import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

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


def _layer_compile_commands(tmp_path):
    """{source path: compile command} of the runtime's sources, as CMake configures them
    (the extension is not needed: the python layer's rule is the same)."""
    if not shutil.which("cmake") or not shutil.which("c++"):
        pytest.skip("cmake or c++ is not installed")
    build = tmp_path / "build"
    build.mkdir()
    proc = subprocess.run(["cmake", str(REPO), "-DPYSHMEM_BUILD_PYTHON=OFF", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                          cwd=build, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entries = json.loads((build / "compile_commands.json").read_text())
    return {str(Path(e["file"]).resolve().relative_to(REPO)): e for e in entries}


def test_the_build_does_not_compile_an_upward_include(tmp_path):
    # Each layer's sources are compiled with an include path that holds only csrc/include,
    # that layer and the ones below, so an include of a higher layer fails to compile, in
    # the build itself and not only in check_layers.py.
    commands = _layer_compile_commands(tmp_path)
    layers = sorted({path.split("/")[1] for path in commands})
    assert {"core", "bootstrap", "heap", "transport", "cuda", "proxy", "team", "coll", "host"} <= set(layers)
    for path, entry in commands.items():
        assert f"layer_include/{path.split('/')[1]}" in entry["command"], (path, entry["command"])
        assert f"-I{REPO}/csrc " not in entry["command"] + " ", (path, "sees every layer")

    def compile_as(layer_source, text):
        entry = commands[layer_source]
        probe = tmp_path / "probe.cpp"  # outside csrc/: only the include path can find a layer
        probe.write_text(text)
        args = shlex.split(entry["command"])
        out = args.index("-o")
        args = args[:out] + args[out + 2:]
        args[args.index("-c") + 1] = str(probe)
        return subprocess.run(args + ["-fsyntax-only"], cwd=entry["directory"], capture_output=True, text=True,
                              timeout=300)

    assert compile_as("csrc/core/log.cpp", '#include "core/env.h"\n').returncode == 0
    bad = compile_as("csrc/core/log.cpp", '#include "core/env.h"\n#include "host/host.h"\n')
    assert bad.returncode != 0 and "host/host.h" in bad.stderr, bad.stderr
    ok = compile_as("csrc/host/rma.cpp", '#include "core/env.h"\n#include "coll/coll.h"\n#include "host/host.h"\n')
    assert ok.returncode == 0, ok.stderr
    bad = compile_as("csrc/team/team.cpp", '#include "coll/coll.h"\n')
    assert bad.returncode != 0 and "coll/coll.h" in bad.stderr, bad.stderr
    # <cuda.h> is visible to the CUDA backend only (where this machine has it).
    if any("csrc/cuda/gpu_heap.cpp" == p for p in commands):
        assert compile_as("csrc/cuda/gpu_heap.cpp", "#include <cuda.h>\n").returncode == 0
        assert compile_as("csrc/host/rma.cpp", "#include <cuda.h>\n").returncode != 0
