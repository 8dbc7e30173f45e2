"""Every pyshmem exception names the call, the PE and the fix.

Two halves:

- a sweep that provokes one error per API family in this process (PE 0 of a one-PE
  job) and checks the shape of each message: ``pyshmem.<call> on PE 0: <what>; <fix>``;
- source checks that keep new code to that shape: C++ errors name a ``pyshmem.*``
  call (or are raised below the API with ``fail_inner``, which the binding locates),
  and the Python modules that run inside a PE build their prefix with
  ``runtime.where`` instead of a hard-coded ``"pyshmem.x:"`` (which never names the PE).
"""

import re
from pathlib import Path

import numpy as np
import pytest

import pyshmem as shmem

REPO = Path(__file__).resolve().parents[2]

# A fix is something to do (use/pass/call/set ...) or the rule the argument must meet.
FIX = re.compile(r"\b(use|pass|call|set|raise|lower|allocate|free|convert|install|import|unset|create|destroy|"
                 r"skip|check|run|start|give|must be|must lie|valid PEs are|take|takes|only)\b")


@pytest.fixture(scope="module")
def arrays():
    a = {
        "i64": shmem.zeros(8, np.int64),
        "i32": shmem.zeros(8, np.int32),
        "f64": shmem.zeros(8, np.float64),
        "u8": shmem.zeros(8, np.uint8),
        "sig": shmem.new_signal(),
        "lock": shmem.new_lock(),
    }
    yield a
    shmem.barrier_all()


def _bad_calls(a):
    """(call name, exception type, thunk) for one error of each kind."""
    host = np.zeros(8, np.int64)
    return [
        ("put", shmem.InvalidArgumentError, lambda: shmem.put(a["i64"], np.zeros(8, np.int64), 5)),
        ("put", shmem.InvalidArgumentError, lambda: shmem.put(host, np.zeros(8, np.int64), 0)),
        ("put", shmem.ShmemTypeError, lambda: shmem.put(a["i64"], np.zeros(8, np.int32), 0)),
        ("put", shmem.InvalidArgumentError, lambda: shmem.put(a["i64"], np.zeros(8, np.int64), 0, size=9)),
        ("get", shmem.InvalidArgumentError, lambda: shmem.get(np.zeros(8, np.int64), a["i64"], -1)),
        ("iput", shmem.InvalidArgumentError, lambda: shmem.iput(a["i64"], np.zeros(8, np.int64), 0, 2, 0)),
        ("atomic_add", shmem.ShmemTypeError, lambda: shmem.atomic_add(a["f64"][:1], 1.0, 0)),
        ("atomic_set", OverflowError, lambda: shmem.atomic_set(a["i32"][:1], 2**40, 0)),
        ("atomic_fetch", shmem.InvalidArgumentError, lambda: shmem.atomic_fetch(a["i64"][:2], 0)),
        ("wait_until", shmem.InvalidArgumentError, lambda: shmem.wait_until(a["i64"][:1], "~", 0)),
        ("wait_until", shmem.ShmemTypeError, lambda: shmem.wait_until(a["f64"][:1], shmem.CMP.EQ, 0)),
        ("wait_until_all_vector", shmem.InvalidArgumentError,
         lambda: shmem.wait_until_all_vector(a["i64"], shmem.CMP.EQ, np.zeros(3, np.int64))),
        ("put_signal", shmem.InvalidArgumentError,
         lambda: shmem.put_signal(a["i64"], np.zeros(8, np.int64), 0, a["sig"], 1, 7)),
        ("signal_wait_until", shmem.InvalidArgumentError,
         lambda: shmem.signal_wait_until(a["i64"][:1], shmem.CMP.EQ, 0)),
        ("clear_lock", shmem.InvalidArgumentError, lambda: shmem.clear_lock(a["lock"])),
        ("set_lock", shmem.InvalidArgumentError, lambda: shmem.set_lock(a["i64"][:2])),
        ("broadcast", shmem.InvalidArgumentError, lambda: shmem.broadcast(a["i64"], a["i64"], 3)),
        ("reduce", shmem.ShmemTypeError, lambda: shmem.reduce(a["f64"], a["f64"], op="xor")),
        ("reduce", shmem.InvalidArgumentError, lambda: shmem.reduce(a["i64"], a["i64"], op="avg")),
        ("alltoalls", shmem.InvalidArgumentError, lambda: shmem.alltoalls(a["i64"], a["i64"], tst=0)),
        ("fcollect", shmem.ShmemTypeError, lambda: shmem.fcollect(a["i64"], a["i64"], team=3)),
        ("alloc", shmem.InvalidArgumentError, lambda: shmem.alloc(-1)),
        ("alloc", shmem.HeapExhaustedError, lambda: shmem.alloc(1 << 46)),
        ("free", shmem.InvalidArgumentError, lambda: shmem.free(host)),
        ("free", shmem.InvalidArgumentError, lambda: shmem.free(a["i64"][2:])),
        ("fromalloc", shmem.InvalidArgumentError, lambda: shmem.fromalloc(shmem.alloc(8), (4,), np.int64)),
        ("new_array", shmem.ShmemTypeError, lambda: shmem.new_array(2, object)),
        ("ptr", shmem.InvalidArgumentError, lambda: shmem.ptr(a["i64"], 4)),
        ("Ctx.create", shmem.InvalidArgumentError, lambda: shmem.Ctx.create(1 << 20)),
        ("Team.split_strided", shmem.InvalidArgumentError, lambda: shmem.TEAM_WORLD.split_strided(0, 0, 2)),
        ("Team.split_2d", shmem.InvalidArgumentError, lambda: shmem.TEAM_WORLD.split_2d(0)),
        ("init_thread", shmem.InvalidArgumentError, lambda: shmem.init_thread("many")),
        ("global_exit", shmem.ShmemTypeError, lambda: shmem.global_exit("1")),
    ]


def test_every_error_names_call_pe_and_fix(arrays):
    problems = []
    for call, exc_type, thunk in _bad_calls(arrays):
        try:
            thunk()
        except BaseException as exc:  # noqa: BLE001 - every outcome is checked below
            msg = str(exc)
            head = f"pyshmem.{call} on PE 0: "
            if not isinstance(exc, exc_type) or not isinstance(exc, shmem.ShmemError):
                problems.append(f"{call}: raised {type(exc).__name__}, expected {exc_type.__name__}: {msg}")
            elif not msg.startswith(head):
                problems.append(f"{call}: message does not start with {head!r}: {msg}")
            elif not FIX.search(msg[len(head):]):
                problems.append(f"{call}: message states no fix: {msg}")
        else:
            problems.append(f"{call}: no error")
    assert not problems, "\n".join(problems)


def test_the_fix_pattern_rejects_bare_statements():
    # The sweep above means something only if FIX does not match any message at all.
    for bare in ("pyshmem.put on PE 0: it failed", "too many ivars", "lock is not 8-byte aligned"):
        assert not FIX.search(bare.split(": ", 1)[-1]), bare


# --- source checks --------------------------------------------------------------------

CALL_LITERAL = re.compile(r'\b(fail|fail_errno|require_init)\(\s*(?:PYSHMEM_ERR_\w+,\s*)?"([\w.]*)"\s*[,)]')


def test_cpp_errors_name_a_pyshmem_call():
    bad = []
    for path in sorted((REPO / "csrc").rglob("*")):
        if path.suffix not in (".cpp", ".h"):
            continue
        text = path.read_text()
        for m in CALL_LITERAL.finditer(text):
            if not m.group(2).startswith("pyshmem"):
                line = text.count("\n", 0, m.start()) + 1
                bad.append(f"{path.relative_to(REPO)}:{line}: {m.group(1)}(\"{m.group(2)}\")")
    assert not bad, "errors must name the API call as 'pyshmem.<call>':\n" + "\n".join(bad)


def test_cpp_throws_go_through_fail():
    """A bare `throw Error(...)` names neither call nor PE; only relocations (located=true) may."""
    bad = []
    for path in sorted((REPO / "csrc").rglob("*")):
        if path.suffix not in (".cpp", ".h") or path.name == "error.cpp":
            continue
        text = path.read_text()
        for m in re.finditer(r"throw Error\(([^;]*);", text, re.S):
            if not m.group(1).rstrip().endswith("true)"):
                bad.append(f"{path.relative_to(REPO)}:{text.count(chr(10), 0, m.start()) + 1}")
    assert not bad, "use fail(status, call, ...) or fail_inner(status, layer, ...):\n" + "\n".join(bad)


# Modules whose code runs inside a PE; launcher/notebook-client/trace-tool modules have
# no PE to name.
PE_SIDE = ["memory.py", "rma.py", "amo.py", "signal.py", "waits.py", "lock.py", "team.py", "collective.py",
           "runtime.py", "cuda.py", "_gpu_kernels.py", "_gpu_arrays.py", "_gpu_coll.py", "_gpu_host_ops.py", "_cpu_kernels.py",
           "device/__init__.py", "device/gpu.py", "device/sim.py"]


def test_python_pe_side_messages_use_where():
    bad = []
    for name in PE_SIDE:
        path = REPO / "pyshmem" / name
        if not path.exists():
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r'(?<!["f])f?"pyshmem\.[\w.{}]+: ', line):
                bad.append(f"pyshmem/{name}:{i}: {line.strip()}")
    assert not bad, "start PE-side messages with runtime.where(call), which names the PE:\n" + "\n".join(bad)
