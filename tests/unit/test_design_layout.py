"""docs/design.md's "Source layout, file by file" names every source file of csrc/ and
pyshmem/, and every file it names exists: the layout description stays the tree."""

import re
import subprocess
from pathlib import PurePosixPath

from conftest import REPO

SOURCE_SUFFIXES = {".h", ".cpp", ".cuh", ".def", ".py", ".cu", ".md"}


def _section():
    text = (REPO / "docs" / "design.md").read_text()
    start = text.index("## Source layout, file by file")
    return text[start:text.index("\n## ", start + 1)]


def _tracked_sources():
    # Tracked files only: build outputs (the generated NVSHMEM headers, the compiled
    # module) are not the layout.
    listed = subprocess.run(["git", "ls-files", "csrc", "pyshmem"], cwd=REPO, capture_output=True, text=True,
                            check=True, timeout=60).stdout.split()
    return [PurePosixPath(f) for f in listed if PurePosixPath(f).suffix in SOURCE_SUFFIXES]


def test_every_source_file_is_described():
    section = _section()
    names = set(re.findall(r"`([^`\s]+)`", section))
    # A file is named by its path below its directory's heading (`ucx/ucx.cpp`) or its
    # name alone; both forms count.
    missing = []
    for rel in _tracked_sources():
        parts = rel.parts
        candidates = {"/".join(parts[i:]) for i in range(len(parts))}
        if not candidates & names:
            missing.append(str(rel))
    assert not missing, "describe these in docs/design.md (Source layout): " + ", ".join(sorted(missing))


def test_every_described_file_exists():
    section = _section()
    existing = {"/".join(rel.parts[i:]) for rel in _tracked_sources() for i in range(len(rel.parts))}
    named = {n for n in re.findall(r"`([\w./-]+\.(?:h|cpp|cuh|def|py|cu|md))`", section)}
    gone = sorted(n for n in named if n not in existing and not (REPO / n).exists())
    assert not gone, "docs/design.md (Source layout) names files that do not exist: " + ", ".join(gone)
