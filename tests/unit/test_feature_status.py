"""One feature-status list: docs/design.md's "Not built yet". Docs, READMEs and source
comments elsewhere do not make their own "not built yet" / "in a later issue" claims,
which go stale when the feature lands (issue 20, item 5). A user-facing error message
for a call that is not built (a quoted string in the code) is not such a claim."""

import re

from conftest import REPO

CLAIM = re.compile(r"not (yet )?built yet|not yet built|later (issue|increment|session)|future increment", re.I)
QUOTED = re.compile(r'"[^"]*"')
SOURCES = ("*.py", "*.h", "*.cpp", "*.cuh", "*.cu", "*.def", "*.md", "*.sh")
SKIP = {REPO / "docs" / "design.md"}


def _files():
    for top in ("README.md", "docs", "pyshmem", "csrc", "scripts", "examples", "benchmarks", "tests"):
        root = REPO / top
        paths = [root] if root.is_file() else [p for pattern in SOURCES for p in root.rglob(pattern)]
        for p in paths:
            if p not in SKIP and "nvshmem_include" not in p.parts and p.name != "test_feature_status.py":
                yield p


def test_not_built_claims_live_only_in_the_design_docs_list():
    found = []
    for path in _files():
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if CLAIM.search(QUOTED.sub('""', line)):
                found.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert not found, "move these to docs/design.md's 'Not built yet' (or say what the code does):\n" + "\n".join(found)


def test_the_design_doc_has_the_list():
    text = (REPO / "docs" / "design.md").read_text()
    assert "\n## Not built yet\n" in text
