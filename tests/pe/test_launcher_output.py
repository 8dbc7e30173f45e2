"""shmemrun forwards each PE's output a whole line at a time, with and without
--tag-output (pyshmem/run_output.py), and names the PE of every Python stack it dumps.

Like tests/pe/test_launcher.py, the launcher runs by file path on programs that use
only the standard library.
"""

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAUNCHER = [sys.executable, str(REPO / "pyshmem" / "run.py")]
PROGRAM = Path(__file__).resolve().parent / "programs" / "output_lines.py"
NPES = 3
N_LINES = 42  # len(output_lines.LENGTHS)
TRACEBACK = (rb"Traceback \(most recent call last\):", rb'  File ".*output_lines\.py", line \d+, in <module>',
             rb'    raise RuntimeError\(f"boom from pe \{PE\}"\)', rb" *[~^]+")


def _shmemrun(*args, timeout=60):
    return subprocess.run(LAUNCHER + [str(a) for a in args], capture_output=True, timeout=timeout)


def _pe_lines(data: bytes, stream: str, tagged: bool) -> dict:
    """Checks that every line of `data` is one PE's complete line; returns, per PE, what
    it printed in order: line numbers of the self-checking lines, and the extras."""
    seen = {pe: [] for pe in range(NPES)}
    for raw in data.split(b"\n")[:-1]:
        line, tag = raw, None
        if tagged:
            m = re.fullmatch(rb"\[pe (\d+)\] (.*)", raw, re.S)
            assert m, f"untagged line {raw[:120]!r}"
            tag, line = int(m.group(1)), m.group(2)
        m = re.fullmatch(rb"(out|err)(\d+) n(\d+) len(\d+) ([a-h]*)", line)
        extra = re.fullmatch(rb"(?:bin(\d+) \xff\xfe\x80 end|tail(\d+)|RuntimeError: boom from pe (\d+))", line)
        if m:
            pe, length = int(m.group(2)), int(m.group(4))
            assert m.group(1).decode() == stream and len(line) == length, f"cut or mixed: {line[:120]!r}..."
            assert set(m.group(5)) == {b"abcdefgh"[pe]}, f"mixed: {line[:120]!r}..."
            seen[pe].append(int(m.group(3)))
        elif extra:
            pe = int(next(g for g in extra.groups() if g))
            seen[pe].append(line.split(b" ")[0].rstrip(b"0123456789").decode())
        elif stream == "err" and any(re.fullmatch(p, line) for p in TRACEBACK):
            if tag is not None and line.startswith(b"Traceback"):
                seen[tag].append("Traceback")
            continue
        else:
            raise AssertionError(f"not one PE's whole line: {line[:200]!r}")
        assert tag is None or tag == pe, f"PE {pe}'s line tagged [pe {tag}]"
    return seen


@pytest.mark.parametrize("tagged", [False, True], ids=["plain", "tag-output"])
def test_lines_of_concurrent_pes_stay_whole(tmp_path, tagged):
    res = _shmemrun("-n", NPES, *(["--tag-output"] if tagged else []), PROGRAM, tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    out, err = _pe_lines(res.stdout, "out", tagged), _pe_lines(res.stderr, "err", tagged)
    for pe in range(NPES):  # everything arrived, in each PE's order
        assert out[pe] == list(range(N_LINES)) + ["bin", "tail"], (pe, out[pe])
        assert err[pe] == list(range(0, N_LINES, 4)) + ["Traceback"] * tagged + ["RuntimeError:"], (pe, err[pe])
    assert res.stderr.count(b"Traceback (most recent call last):") == NPES


def test_stack_dumps_name_their_pe(tmp_path):
    child = tmp_path / "nap.py"
    child.write_text(textwrap.dedent('''\
        import faulthandler, signal, sys, time
        faulthandler.register(signal.SIGUSR1, all_threads=True)  # what pyshmem does under shmemrun
        def nap():
            print("napping", flush=True)
            time.sleep(60)
        nap()
        '''))
    res = _shmemrun("-n", NPES, "--timeout", 3, child)
    assert res.returncode == 124, res.stderr.decode()
    lines = res.stderr.decode().splitlines()
    headers = [k for k, line in enumerate(lines) if re.fullmatch(r"shmemrun: PE \d+'s Python stack:", line)]
    assert sorted(int(lines[k].split()[2][:-2]) for k in headers) == list(range(NPES)), res.stderr.decode()
    for k in headers:  # each stack follows its header as one block
        block = lines[k + 1:k + 5]
        assert re.fullmatch(r"Current thread 0x[0-9a-f]+ \(most recent call first\):", block[0]), block
        assert 'nap.py", line 5 in nap' in block[1] and 'nap.py", line 6 in <module>' in block[2], block
