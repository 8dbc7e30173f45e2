"""Runs every program in examples/ under the real launcher, on several PE counts.

Examples are discovered with a glob, so a new ``examples/*.py`` is run here without
touching this file (on 1, 2 and 4 PEs, no arguments, checked for exit code 0).
``CASES`` gives an example its own arguments (small sizes keep the suite fast), PE
counts and the text PE 0 must print. Every example checks its own result and exits
non-zero when it is wrong, so the exit code is the real test; the text checks make
sure the example actually got to its report.
"""

import re
from dataclasses import dataclass
from typing import Callable, Optional, Tuple

import pytest

from conftest import REPO, cpu_kernel_toolchain_missing, run_pes

EXAMPLES_DIR = REPO / "examples"
EXAMPLES = sorted(p.name for p in EXAMPLES_DIR.glob("*.py"))
DEFAULT_NPES = (1, 2, 4)


@dataclass(frozen=True)
class Case:
    """How to run one example: its arguments, on which PE counts, and what PE 0 prints.

    ``expect(n)`` returns regular expressions that must each match a line PE 0 printed
    on ``n`` PEs; ``every_pe(n, pe)`` the same for each PE ``pe``.
    """
    args: Tuple[str, ...] = ()
    npes: Tuple[int, ...] = DEFAULT_NPES
    expect: Callable[[int], list] = lambda n: []
    every_pe: Callable[[int, int], list] = lambda n, pe: []
    label: str = ""
    env: Optional[dict] = None
    skip_unless: Callable[[], Optional[str]] = lambda: None  # returns a reason to skip


def _moe_tokens(n, rounds, max_tokens):
    """Tokens moe_alltoall.py moves each way: its token_count summed over rounds and PE pairs."""
    return sum((src * 7 + dst * 3 + rnd * 5) % (max_tokens + 1)
               for rnd in range(rounds) for src in range(n) for dst in range(n))


def _torch_missing():
    import importlib.util

    return None if importlib.util.find_spec("torch") else "needs torch (pip install 'pyshmem[torch]')"


CASES = {
    "torch_tp_mlp.py": [Case(
        args=("--hidden", "96", "--model", "24"), npes=(1, 2, 3, 4), skip_unless=_torch_missing,
        expect=lambda n: [rf"tensor-parallel MLP 24->96->24 over {n} rank\(s\)",
                          r"output, input gradient and every weight-gradient shard match the unsplit MLP"])],
    "torch_moe_dispatch.py": [Case(
        args=("--tokens", "12", "--hidden", "8"), npes=(1, 2, 3, 4), skip_unless=_torch_missing,
        expect=lambda n: [rf"MoE dispatch/combine over {n} rank\(s\): 12 tokens x 8 per rank, {2 * n} experts, "
                          rf"top-2: {24 * n} token copies",
                          r"every rank's combined output matches the unsplit mixture of experts"])],
    "hello.py": [Case(
        expect=lambda n: [r"pyshmem \S+ \(OpenSHMEM \d+\.\d+\)$", rf"All {n} PE\(s\) checked in with PE 0$"],
        every_pe=lambda n, pe: [rf"Hello from PE {pe} of {n}$"],
    )],
    "ring_put.py": [Case(
        args=("--laps", "20", "--block", "256"),
        npes=(1, 2, 3, 4),
        expect=lambda n: [rf"block shift of 256 int64 .*: ok on {n} PE", rf"token made 20 laps = {20 * n} hops"],
    )],
    "ping_pong.py": [
        Case(npes=(1,), expect=lambda n: [r"needs at least 2 PEs"], label="one-pe"),
        Case(args=("--iters", "200", "--warmup", "20", "--elems", "16"), npes=(2, 4),
             expect=lambda n: [r"128 bytes, 200 rounds .* all echoes verified",
                               r"one-way latency: median \d+\.\d+ us"]),
    ],
    "pi_atomics.py": [Case(
        args=("--darts", "400000", "--chunk", "20000"),
        expect=lambda n: [r"pi ~ 3\.1\d+ from 400000 darts", r"chunks thrown per PE: \[\d+(, \d+){%d}\]" % (n - 1),
                          r"hits match a serial recount exactly"],
    )],
    "histogram_atomics.py": [Case(
        args=("--bins", "11", "--samples", "20000"),   # 11 bins: uneven blocks on 2, 3 and 4 PEs
        npes=(1, 2, 3, 4),
        expect=lambda n: [rf"{n} x 20000 samples, 11 bins over {n} PE\(s\) .* matches numpy.histogram"],
    )],
    "numba_ring.py": [
        Case(npes=(1, 2, 3),
             expect=lambda n: [rf"3 laps of 32-element blocks around {n} PEs from Numba kernels \(simulator, host barrier\): OK"]),
        Case(args=("--sync", "device"), npes=(1, 3), label="device-barrier",
             expect=lambda n: [rf"3 laps .* around {n} PEs .*\(simulator, device barrier\): OK"]),
    ],
    "moe_alltoall.py": [
        Case(args=("--tokens", "6", "--hidden", "16", "--rounds", "3"), npes=(1, 2, 3, 4),
             skip_unless=cpu_kernel_toolchain_missing,
             expect=lambda n: [rf"3 rounds of MoE dispatch/combine over {n} PE\(s\), grid {n}, 128 threads per block: "
                               rf"{_moe_tokens(n, 3, 6)} tokens of 16 floats",
                               r"every element verified"]),
        Case(args=("--tokens", "5", "--rounds", "2", "--blocks", "2"), npes=(3,), label="proxy",
             env={"PYSHMEM_PROXY_ALL": "1"}, skip_unless=cpu_kernel_toolchain_missing,
             expect=lambda n: [rf"2 rounds of MoE dispatch/combine over 3 PE\(s\), grid 2, 128 threads per block: "
                               rf"{_moe_tokens(3, 2, 5)} tokens"]),
    ],
    "tp_allreduce.py": [
        Case(args=("--rows", "16", "--hidden", "96", "--out", "40", "--api", "host"), npes=(1, 2, 3, 4),
             expect=lambda n: [rf"summed over {n} PE\(s\) x 1 group", r"matches NumPy bit for bit"]),
        Case(args=("--rows", "8", "--hidden", "64", "--out", "16", "--groups", "2"), npes=(2, 4), label="device",
             skip_unless=cpu_kernel_toolchain_missing,
             expect=lambda n: [r"x 2 group\(s\)", r"device API \(CPU build\): sum_reduce_block in a kernel",
                               r"matches NumPy bit for bit"]),
    ],
    "ws_allreduce.py": [
        Case(args=("--elems", "3000", "--blocks", "3", "--iters", "3"), npes=(1, 2, 4),
             skip_unless=cpu_kernel_toolchain_missing,
             expect=lambda n: [rf"warp-specialised all-reduce of 3000 float32 over {n} PE\(s\): grid 3 x 128 threads, "
                               r"2 sender \+ 2 reducer warps per block; 3 calls",
                               r"every call matches NumPy bit for bit on every PE"]),
        Case(args=("--elems", "1000", "--blocks", "2", "--send-warps", "1", "--iters", "2"), npes=(2, 4),
             label="proxy", env={"PYSHMEM_PROXY_ALL": "1"}, skip_unless=cpu_kernel_toolchain_missing,
             expect=lambda n: [rf"over {n} PE\(s\): grid 2 x 128 threads, 1 sender \+ 3 reducer warps",
                               r"matches NumPy bit for bit"]),
    ],
    "grid_reduce.py": [
        Case(args=("--cols", "2", "--block", "5"), npes=(1, 2, 3, 4),
             expect=lambda n: [rf"{n} PE\(s\) as a \d+x\d+ grid of 5x5 blocks: .* match NumPy"]),
    ],
    "halo_exchange.py": [
        Case(args=("--cells", "61", "--steps", "150", "--sync", "signal"), npes=(1, 2, 3, 4), label="signal",
             expect=lambda n: [rf"61 cells on {n} PE\(s\).*150 steps, signal sync", r"bit-identical"]),
        Case(args=("--cells", "61", "--steps", "150", "--sync", "barrier"), npes=(3, 4), label="barrier",
             expect=lambda n: [rf"61 cells on {n} PE\(s\).*150 steps, barrier sync", r"bit-identical"]),
    ],
}


def _params():
    for name in EXAMPLES:
        for case in CASES.get(name, [Case()]):
            for n in case.npes:
                label = f"-{case.label}" if case.label else ""
                yield pytest.param(name, case, n, id=f"{name[:-3]}{label}-{n}pe")


def _lines_of(stdout, pe):
    """Lines PE `pe` printed (the launcher runs with --tag-output: '[pe k] text')."""
    prefix = f"[pe {pe}] "
    return [line[len(prefix):] for line in stdout.splitlines() if line.startswith(prefix)]


@pytest.mark.parametrize("name, case, npes", list(_params()))
def test_example(name, case, npes):
    _run_case(name, case, npes, case.env)


def _ordering_check_params():
    """Every case once more under the ordering check, with two seeds of its own: on its
    largest PE count, and on its smallest above one when that differs."""
    for i, name in enumerate(EXAMPLES):
        for j, case in enumerate(CASES.get(name, [Case()])):
            label = f"-{case.label}" if case.label else ""
            counts = sorted({max(case.npes), min((n for n in case.npes if n > 1), default=1)} - {1})
            for k, n in enumerate(counts):
                seed = 1000 * i + 10 * j + k + 1
                yield pytest.param(name, case, n, seed, id=f"{name[:-3]}{label}-{n}pe-seed{seed}")


@pytest.mark.parametrize("name, case, npes, seed", list(_ordering_check_params()))
def test_example_under_ordering_check(name, case, npes, seed):
    """The examples synchronise correctly: they pass when puts, atomics and signals toward
    other PEs are held and applied late, in any order the memory model allows."""
    env = dict(case.env or {}, PYSHMEM_ORDER_CHECK="1", PYSHMEM_ORDER_CHECK_SEED=str(seed))
    _run_case(name, case, npes, env)


def _run_case(name, case, npes, env):
    reason = case.skip_unless()
    if reason:
        pytest.skip(reason)
    proc = run_pes(EXAMPLES_DIR / name, npes, *case.args, timeout=60, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{name} on {npes} PE(s) exited {proc.returncode}\n{out}"
    assert "Traceback" not in out and "FAILED" not in out, out
    for pe in range(npes):
        lines = _lines_of(proc.stdout, pe)
        patterns = case.every_pe(npes, pe) + (case.expect(npes) if pe == 0 else [])
        for pattern in patterns:
            assert any(re.search(pattern, line) for line in lines), \
                f"PE {pe} of {name} printed no line matching {pattern!r}\n{out}"


def test_examples_exist():
    """The glob must find the examples (a wrong path would silently test nothing)."""
    assert set(CASES) <= set(EXAMPLES), f"CASES names missing examples: {set(CASES) - set(EXAMPLES)}"
    assert len(EXAMPLES) >= len(CASES)


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_is_documented(name):
    """Each example says what it shows and how to run it, and the README lists it."""
    source = (EXAMPLES_DIR / name).read_text()
    assert source.lstrip().startswith('"""'), f"{name} has no module docstring"
    assert "How to run" in source, f"{name}: the docstring should say how to run it"
    assert f"examples/{name}" in (EXAMPLES_DIR / "README.md").read_text(), f"examples/README.md does not list {name}"
