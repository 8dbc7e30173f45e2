"""Run shmem4py's own unittest suite, unchanged, against pyshmem (a PE program).

Usage (every PE runs the same tests in the same order, as shmem4py's suite expects)::

    shmemrun -n 2 python tests/compat/run_shmem4py_suite.py SUITE_DIR RESULT_DIR

SUITE_DIR is the ``test/`` folder of shmem4py's sdist. The stand-in package next to
this file makes ``from shmem4py import shmem`` give pyshmem. The only tests left out
are those of shmem4py's cffi layer, listed by id in EXCLUDED with the reason. Test ids
are read from the sources (``ast``) without importing, so a module whose every test is
excluded is never imported, and an EXCLUDED id that the suite does not have is an
error (the list cannot go stale silently). KNOWN_FAILURES lists the tests that fail
today for a reason outside this change, each required to fail exactly that way.

Each PE writes ``RESULT_DIR/pe<k>.json`` (the ids that passed, failed, failed as known,
were skipped by the suite itself or excluded, with tracebacks and reasons) and prints
``shmem4py-suite pe=<k> passed=.. failed=.. known=.. skipped=.. excluded=.. stale=..``
(test methods, not subtests). The exit code is 0 when nothing failed unexpectedly and
every known failure occurred.
"""

import ast
import io
import json
import sys
import unittest
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

_FFI = "uses shmem4py's cffi `ffi` object (C data casts), which pyshmem does not have"
EXCLUDED = {
    # test_buf: shmem4py's private buffer helper over cffi.
    "test_buf.TestBuf.testGetBuffer": "tests shmem4py's private cffi helper `_getbuffer`",
    "test_buf.TestBuf.testReadOnly": "tests shmem4py's private cffi helper `_getbuffer`",
    "test_buf.TestBuf.testContiguous": "tests shmem4py's private cffi helper `_getbuffer`",
    "test_buf.TestBuf.testBadType": "tests shmem4py's private cffi helper `_getbuffer`",
    # test_rc: shmem4py.rc configures how shmem4py's cffi module initialises the C library.
    "test_rc.TestRC.testRCCall1": "tests `shmem4py.rc`, the runtime configuration of shmem4py's cffi module",
    "test_rc.TestRC.testRCCall2": "tests `shmem4py.rc`, the runtime configuration of shmem4py's cffi module",
    "test_rc.TestRC.testCallBad": "tests `shmem4py.rc`, the runtime configuration of shmem4py's cffi module",
    "test_rc.TestRC.testAttr": "tests `shmem4py.rc`, the runtime configuration of shmem4py's cffi module",
    "test_rc.TestRC.testAttrBad": "tests `shmem4py.rc`, the runtime configuration of shmem4py's cffi module",
    "test_rc.TestRC.testRepr": "tests `shmem4py.rc`, the runtime configuration of shmem4py's cffi module",
    # Tests that need `ffi` for part of their checks; the rest of each is covered in
    # tests/unit/test_api_compat.py (alloc alignment/clear/free, Ctx()/Team() constructors).
    "test_alloc.TestAlloc.testAlloc": _FFI,
    "test_ctx.TestCtx.testNew": _FFI,
    "test_team.TestTeam.testNew": _FFI,
    # Reads shmem4py's cffi `lib` (the C library's constants) to decide what to check;
    # its checks of split_strided/get_config are in tests/unit/test_api_compat.py.
    "test_team.TestTeam.testSplit": "reads `shmem.lib.SHMEM_TEAM_NUM_CONTEXTS`, shmem4py's cffi `lib` object",
}

_NUMPY2 = int(np.__version__.split(".")[0]) >= 2
# Tests that fail today for a reason pyshmem's API does not control here, each required
# to fail in exactly this way: (test id, text its subtest parameters contain, text its
# traceback contains, reason, applies). A failure that matches no entry is a failure,
# and so is an entry that matches nothing (the test was fixed: remove the entry).
KNOWN_FAILURES = [
    ("test_rma.TestRMA.testGet", "", "dst = np.full(1, -1, dtype=t)",
     "the test itself calls np.full(1, -1, dtype=uint8), which NumPy >= 2 refuses (OverflowError, NEP 50)", _NUMPY2),
    ("test_rma.TestRMA.testGetNBI", "", "dst = np.full(1, -1, dtype=t)",
     "the test itself calls np.full(1, -1, dtype=uint8), which NumPy >= 2 refuses (OverflowError, NEP 50)", _NUMPY2),
]


def suite_ids(suite_dir):
    """Test ids ``module.Class.method`` of a unittest folder, in file/definition order.

    Args:
        suite_dir: folder of ``test_*.py`` files.

    Returns:
        dict: module name -> list of test ids (classes deriving from a ``*TestCase``
        name, methods named ``test*``).
    """
    ids = {}
    for path in sorted(Path(suite_dir).glob("test_*.py")):
        tree = ast.parse(path.read_text(), str(path))
        mod = path.stem
        ids[mod] = []
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            bases = [getattr(b, "attr", getattr(b, "id", "")) for b in node.bases]
            if not any(b.endswith("TestCase") for b in bases):
                continue
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name.startswith("test"):
                    ids[mod].append(f"{mod}.{node.name}.{item.name}")
    return ids


def build_suite(suite_dir):
    """The unittest suite to run and the ids left out.

    Args:
        suite_dir: shmem4py's ``test/`` folder.

    Returns:
        tuple: (unittest.TestSuite, list of excluded ids present in the suite).

    Raises:
        SystemExit: an id in EXCLUDED is not in the suite.
    """
    ids = suite_ids(suite_dir)
    every = {i for mod_ids in ids.values() for i in mod_ids}
    stale = sorted(set(EXCLUDED) - every)
    if stale:
        raise SystemExit(f"run_shmem4py_suite: EXCLUDED names tests the suite does not have: {stale}")
    loader = unittest.TestLoader()
    suite = unittest.TestSuite()
    for mod, mod_ids in ids.items():
        keep = [i for i in mod_ids if i not in EXCLUDED]
        if keep:
            suite.addTests(loader.loadTestsFromNames(keep))
    return suite, sorted(set(EXCLUDED) & every)


def _base_id(test):
    """``module.Class.method`` of a test or of one of its subtests."""
    return getattr(test, "test_case", test).id()


def classify(result, ran_ids):
    """Each test method's outcome, with every failure matched against KNOWN_FAILURES.

    Args:
        result: the unittest result.
        ran_ids: ids of the test methods that ran, in order.

    Returns:
        dict: ``passed``, ``known`` (failed only as KNOWN_FAILURES says), ``failed``
        (id -> list of failure texts), ``skipped`` (id -> reason) and ``stale`` (known
        failures that did not occur).
    """
    problems = [(t, tb) for t, tb in result.failures + result.errors]
    problems += [(t, "unexpected success") for t in result.unexpectedSuccesses]
    active = [k for k in KNOWN_FAILURES if k[4]]
    hit = set()
    known, failed = {}, {}
    for test, tb in problems:
        base = _base_id(test)
        params = test._subDescription() if hasattr(test, "test_case") else ""
        match = next((i for i, (tid, sub, text, _, _) in enumerate(active)
                      if tid == base and sub in params and text in tb), None)
        if match is None:
            failed.setdefault(base, []).append(f"{test.id()}\n{tb}")
        else:
            hit.add(match)
            known.setdefault(base, []).append(f"{test.id()}: {active[match][3]}")
    skipped = {_base_id(t): why for t, why in result.skipped}
    stale = [f"{k[0]} ({k[1] or 'any subtest'}): expected to fail ({k[3]}) but did not"
             for i, k in enumerate(active) if i not in hit]
    for tid in set(known) & set(failed):
        del known[tid]  # a test with any unexplained failure counts as failed
    passed = [t for t in ran_ids if t not in known and t not in failed and t not in skipped]
    return {"passed": passed, "known": known, "failed": failed, "skipped": skipped, "stale": stale}


def main(argv):
    """Run the suite on this PE.

    Args:
        argv: [SUITE_DIR, RESULT_DIR].

    Returns:
        int: 0 when every test passed, was skipped by the suite itself, or failed only
        as KNOWN_FAILURES says (and each known failure occurred); else 1.
    """
    suite_dir, result_dir = (Path(a).resolve() for a in argv)
    sys.path[:0] = [str(HERE), str(suite_dir)]
    import pyshmem

    me = pyshmem.my_pe()
    suite, excluded = build_suite(suite_dir)
    ran_ids = [t.id() for t in _flatten(suite)]
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=2).run(suite)
    report = classify(result, ran_ids)
    report.update(pe=me, n_pes=pyshmem.n_pes(), excluded={i: EXCLUDED[i] for i in excluded})
    Path(result_dir).mkdir(parents=True, exist_ok=True)
    (Path(result_dir) / f"pe{me}.json").write_text(json.dumps(report, indent=1))
    bad = bool(report["failed"] or report["stale"])
    if me == 0 or bad:
        sys.stdout.write(stream.getvalue())
        for line in report["stale"]:
            print(f"STALE KNOWN FAILURE: {line}")
    if me == 0:
        for tid, lines in report["known"].items():
            print(f"KNOWN FAILURE: {tid}: {lines[0].split(': ', 1)[1]}")
    print(f"shmem4py-suite pe={me} passed={len(report['passed'])} failed={len(report['failed'])} "
          f"known={len(report['known'])} skipped={len(report['skipped'])} excluded={len(excluded)} "
          f"stale={len(report['stale'])}", flush=True)
    return 1 if bad else 0


def _flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _flatten(item)
        else:
            yield item


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
