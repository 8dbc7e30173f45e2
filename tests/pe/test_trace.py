"""PYSHMEM_TRACE and `python -m pyshmem trace`: a traced 4-PE run gives a valid
Chrome-trace JSON with every PE's lane and every put paired with a marker on its target
PE, a PNG timeline, and a summary whose byte counts are exactly what the program sent."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO, assert_ok, run_pes, ucx_unavailable


def _trace_cli(*args):
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "pyshmem", "trace", *map(str, args)], capture_output=True, text=True,
                          timeout=120, env=env, cwd=str(REPO))


def test_traced_run_merges_into_a_chrome_trace_png_and_summary(tmp_path):
    npes = 4
    proc = run_pes("trace_ops.py", npes, env={"PYSHMEM_TRACE": str(tmp_path)})
    assert_ok(proc, npes)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"trace-pe{k}.bin" for k in range(npes)]
    out = tmp_path / "merged"
    cli = _trace_cli(tmp_path, "-o", out)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    trace = json.loads((out / "trace.json").read_text())
    events = trace["traceEvents"]
    lanes = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert lanes == {k: f"PE {k}" for k in range(npes)}
    slices = [e for e in events if e["ph"] == "X"]
    for k in range(npes):
        mine = [e for e in slices if e["pid"] == k]
        names = {e["name"] for e in mine}
        assert {"pyshmem.put", "pyshmem.atomic_add", "pyshmem.put_signal", "pyshmem.reduce",
                "pyshmem.barrier_all"} <= names, (k, names)
        assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in mine)
        puts = [e for e in mine if e["name"] == "pyshmem.put"]
        assert [(e["args"]["peer"], e["args"]["bytes"], e["cat"]) for e in puts] == [((k + 1) % npes, 32, "rma")]
        # the put's pair: a marker on the target PE's lane naming this PE, with the same flow id
        flow = puts[0]["args"]["flow"]
        marks = [e for e in events if e["ph"] == "i" and e["args"].get("flow") == flow]
        assert [(m["pid"], m["args"]["from"], m["args"]["bytes"]) for m in marks] == [((k + 1) % npes, k, 32)]
        assert {e["ph"] for e in events if e.get("id") == flow} == {"s", "f"}
        assert any(e["cat"] == "collective" and e["name"] == "pyshmem.reduce" and e["args"]["bytes"] == 128
                   for e in mine)
    assert (out / "timeline.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # bytes per peer: 32 (put) + 64 (put_signal) to the right, 8 (atomic) to PE 0
    assert "| 1 | " in cli.stdout and "PE 0: 8, PE 2: 96 |" in cli.stdout, cli.stdout
    assert "PE 0: 104 |" in cli.stdout  # PE 3's right-hand neighbour is PE 0


def test_a_pe_ended_by_the_launcher_still_writes_its_trace(tmp_path):
    prog = tmp_path / "fail.py"
    prog.write_text("import sys, numpy as np, pyshmem as shmem\n"
                    "x = shmem.zeros(4, np.int64)\n"
                    "shmem.barrier_all()\n"
                    "if shmem.my_pe() == 1:\n"
                    "    shmem.put(x, np.ones(4, np.int64), 0)\n"
                    "    sys.exit(3)\n"
                    "shmem.wait_until(x[:1], shmem.CMP.EQ, 7)  # never: the launcher ends PE 0 (SIGTERM)\n")
    traces = tmp_path / "t"
    traces.mkdir()
    proc = run_pes(prog, 2, env={"PYSHMEM_TRACE": str(traces)})
    assert proc.returncode == 3, proc.stdout + proc.stderr
    cli = _trace_cli(traces)
    assert cli.returncode == 0, cli.stderr
    events = json.loads((traces / "trace.json").read_text())["traceEvents"]
    assert any(e["ph"] == "X" and e["pid"] == 0 and e["name"] == "pyshmem.barrier_all" for e in events)
    assert any(e["ph"] == "X" and e["pid"] == 1 and e["name"] == "pyshmem.put" for e in events)


def test_trace_errors_say_what_to_do(tmp_path):
    empty = _trace_cli(tmp_path)
    assert empty.returncode == 2 and f"run the job with PYSHMEM_TRACE={tmp_path}" in empty.stderr
    (tmp_path / "trace-pe0.bin").write_bytes(b"x" * 80)
    bad = _trace_cli(tmp_path)
    assert bad.returncode == 2 and "not a pyshmem trace file" in bad.stderr
    (tmp_path / "file").write_text("a regular file")
    blocked = run_pes("trace_ops.py", 2, env={"PYSHMEM_TRACE": str(tmp_path / "file" / "traces")})
    assert blocked.returncode != 0
    out = blocked.stdout + blocked.stderr
    assert (f"pyshmem.init on PE 0: PYSHMEM_TRACE={tmp_path}/file/traces: cannot create the directory "
            f"{tmp_path}/file: it exists and is not a directory; set PYSHMEM_TRACE to a directory you can "
            "write, or unset it") in out, out
    assert "ShmemOSError" in out, out


def test_the_trace_directory_is_created_with_its_parents(tmp_path):
    """As profilers do: PYSHMEM_TRACE=a/b/c need not exist (PEs racing to create it included)."""
    traces = tmp_path / "a" / "b" / "c"
    proc = run_pes("trace_ops.py", 4, env={"PYSHMEM_TRACE": str(traces)})
    assert_ok(proc, 4)
    assert sorted(p.name for p in traces.iterdir()) == [f"trace-pe{k}.bin" for k in range(4)]


def _drawn(fig):
    """(kind colour, x0, x1, y0, y1) of every bar in the timeline figure, and its legend."""
    ax = fig.axes[0]
    bars = []
    for coll in ax.collections:
        colour = tuple(coll.get_facecolor()[0])
        for path in coll.get_paths():
            (x0, y0), (x1, y1) = path.vertices.min(axis=0), path.vertices.max(axis=0)
            bars.append((colour, x0, x1, y0, y1))
    legend = ax.get_legend()
    return bars, {t.get_text(): tuple(h.get_facecolor()) for t, h in zip(legend.get_texts(), legend.get_patches())}


def test_timeline_png_nests_spans_widens_short_ops_and_has_a_matching_legend(tmp_path):
    """A real 4-PE run: every bar's colour is a legend entry (and the legend names only
    what is drawn), short operations are at least the minimum width, and a span inside
    another (a wait inside a collective) sits on a lower row of its PE's lane, no two
    boxes of a row overlapping."""
    matplotlib = pytest.importorskip("matplotlib")
    from pyshmem import trace

    proc = run_pes("trace_ops.py", 4, env={"PYSHMEM_TRACE": str(tmp_path)})
    assert_ok(proc, 4)
    pes = trace.load(tmp_path)
    boxes, min_w = trace.boxes(pes)
    fig = trace.figure(pes)
    bars, legend = _drawn(fig)
    assert len(bars) == len(boxes) == sum(len(p["events"]) for p in pes)
    kinds = {b["kind"] for b in boxes}
    assert {"rma", "atomic", "signal", "wait", "collective"} <= kinds
    assert set(legend) == kinds
    assert {legend[k] for k in kinds} == {c for c, *_ in bars}
    assert all(legend[k] == matplotlib.colors.to_rgba(trace._COLORS[k]) for k in kinds)
    assert all(x1 - x0 >= min_w * (1 - 1e-9) for _, x0, x1, *_ in bars)
    for kind in ("rma", "atomic", "signal"):  # microseconds long in a run of milliseconds
        assert all(b["width"] >= min_w for b in boxes if b["kind"] == kind)
    by_row = {}
    for b in boxes:
        by_row.setdefault((b["pe"], b["row"]), []).append(b)
    for row in by_row.values():
        row.sort(key=lambda b: b["x"])
        assert all(a["x"] + a["width"] <= b["x"] + 1e-12 for a, b in zip(row, row[1:]))
        assert len({(b["y"], b["height"]) for b in row}) == 1
    nested = 0
    for w in (b for b in boxes if b["kind"] == "wait"):
        for c in (b for b in boxes if b["kind"] == "collective" and b["pe"] == w["pe"]):
            if c["x"] <= w["x"] and w["x"] + w["width"] <= c["x"] + c["width"] and c["width"] > w["width"]:
                assert w["row"] > c["row"] and w["y"] > c["y"], (w, c)
                nested += 1
    assert nested >= 4  # every PE's barrier waits inside its barrier_all
    fig.savefig(tmp_path / "timeline.png")
    matplotlib.pyplot.close(fig)


def test_timeline_rows_of_a_hand_made_trace():
    """collective ⊃ wait ⊃ wait, then a 1 ns put: rows 0, 1, 2, and the put on the first
    row free when it starts, drawn at the minimum width."""
    from pyshmem import trace

    ev = np.zeros(4, trace._EVENT)
    spans = [(0, 1_000_000, 5), (100, 900_000, 4), (200, 800_000, 4), (950_000, 950_001, 1)]
    for i, (t0, t1, kind) in enumerate(spans):
        ev[i]["t0"], ev[i]["t1"], ev[i]["kind"], ev[i]["name"] = t0, t1, kind, 0
    boxes, min_w = trace.boxes([{"pe": 0, "npes": 1, "names": ["x"], "events": ev}])
    assert min_w == pytest.approx(1.0 * trace.MIN_WIDTH)  # the axis spans 1 ms
    assert [b["row"] for b in boxes] == [0, 1, 2, 1]
    assert boxes[3]["width"] == pytest.approx(min_w) and boxes[3]["kind"] == "rma"
    assert len({b["y"] for b in boxes}) == 3


def test_a_span_inside_another_stays_below_it_when_higher_rows_free_up():
    """A collective that starts while rows 0 and 1 are busy lands on row 2; a wait inside
    it that starts after rows 0 and 1 are free again must still go below it (row 3)."""
    import numpy as np

    from pyshmem import trace

    rows = trace._rows(np.array([0.0, 0.5, 1.0, 5.0]), np.array([3.0, 3.0, 10.0, 6.0]))
    assert list(rows) == [0, 1, 2, 3]


def _events(rows):
    from pyshmem import trace

    ev = np.zeros(len(rows), trace._EVENT)
    for i, (t0, t1, kind, peer, thread) in enumerate(rows):
        ev[i]["t0"], ev[i]["t1"], ev[i]["kind"], ev[i]["peer"], ev[i]["thread"] = t0, t1, kind, peer, thread
    return ev


def test_phases_of_a_hand_made_device_ping_pong():
    """Kernel issue (7) -> proxy executes (6) -> target's progress applies it (8) -> the
    target's kernel answers: each phase is the gap between those events, in µs."""
    from pyshmem import trace_phases as tp

    us = 1000  # ns
    pe0 = _events([(0, 0, 7, 1, 1), (5 * us, 9 * us, 6, 1, 2),            # issue, proxy 5-9 us
                   (40 * us, 40 * us, 8, -1, 2),                          # PE 1's put applied here
                   (43 * us, 43 * us, 7, 1, 1), (50 * us, 52 * us, 6, 1, 2)])
    pe1 = _events([(20 * us, 20 * us, 8, -1, 0),                          # applied 11 us after the send
                   (21 * us, 21 * us, 7, 0, 2), (24 * us, 30 * us, 6, 0, 0),
                   (60 * us, 60 * us, 8, -1, 0), (70 * us, 70 * us, 7, 0, 2)])
    pes = [{"pe": 0, "events": pe0}, {"pe": 1, "events": pe1}]
    trips = tp.one_way_trips(pes)
    assert [t["from"] for t in trips] == [0, 1, 0]  # the last turn has no answer
    first, second = trips[0], trips[1]
    assert first["total_us"] == 21 and first["issue -> proxy start"] == 5
    assert first["send -> applied at target"] == 15 and first["applied -> target issues"] == 1
    assert first["transport call (start -> return)"] == 4 and first["send -> target issues"] is None
    assert second["issue -> proxy start"] == 3 and second["send -> applied at target"] == 16
    assert second["applied -> target issues"] == 3 and trips[2]["total_us"] == 27
    for t in trips:  # the sequential phases add up to the trip
        parts = [t[p] for p in tp.PHASES[:4] if t[p] is not None]
        assert sum(parts) == pytest.approx(t["total_us"])
    table = tp.phase_table(pes, skip=0)
    assert "| issue -> proxy start | 5.00 |" in table and "one-way trips: 3" in table


def test_phases_of_a_host_api_trip_without_progress_events():
    """Host API spans (3: signal) and no progress event at the target (a transport that
    writes the target's memory itself): the trip is the call, then one unsplit phase."""
    from pyshmem import trace_phases as tp

    pe0 = _events([(0, 2000, 3, 1, 0), (9000, 10000, 3, 1, 0)])
    pe1 = _events([(5000, 6000, 3, 0, 0)])
    trips = tp.one_way_trips([{"pe": 0, "events": pe0}, {"pe": 1, "events": pe1}])
    assert len(trips) == 2
    assert trips[0]["issue -> proxy start"] is None and trips[0]["transport call (start -> return)"] == 2
    assert trips[0]["send -> target issues"] == 5 and trips[0]["send -> applied at target"] is None
    with pytest.raises(tp.TraceError, match="2 PEs taking turns"):
        tp.one_way_trips([{"pe": 0, "events": pe0}])
    with pytest.raises(tp.TraceError, match="each PE must issue"):
        tp.one_way_trips([{"pe": 0, "events": pe0}, {"pe": 1, "events": _events([])}])


@pytest.mark.skipif(ucx_unavailable() is not None, reason=str(ucx_unavailable()))
@pytest.mark.parametrize("api", ["host", "device"])
def test_phases_of_a_traced_ping_pong_over_ucx(tmp_path, api):
    """perftest's signal ping-pong with every peer through UCX, traced: --phases splits
    every one-way trip, and the phases it splits into add up to the trip."""
    from pyshmem import trace_phases as tp

    args = ["signal_ping_pong", "-b", "8", "-e", "8", "-n", "200", "-w", "10"]
    if api == "device":
        args += ["--api", "device"]
    proc = run_pes("-m pyshmem.perftest", 2, *args, env={"PYSHMEM_TRACE": str(tmp_path), "PYSHMEM_REMOTE_ONLY": "1"}, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    cli = _trace_cli(tmp_path, "--phases")
    assert cli.returncode == 0, cli.stdout + cli.stderr
    trips = tp.one_way_trips(tp.load_raw(tmp_path))
    assert len(trips) >= 2 * 200, len(trips)  # warm-up and timed rounds, both directions
    for t in trips:
        parts = [t[p] for p in tp.PHASES[:4] if t[p] is not None]
        assert all(p >= 0 for p in parts), t
        assert sum(parts) == pytest.approx(t["total_us"], abs=1e-3), t
        assert (t["issue -> proxy start"] is not None) == (api == "device"), t
    assert "one way, total" in cli.stdout and "issue -> proxy start" in cli.stdout


def _skewed(tmp_path, skew_ns, program="model_replay.py"):
    """A wrapper that gives PE 1 (only) a trace clock shifted by skew_ns."""
    wrapper = tmp_path / "skewed.sh"
    wrapper.write_text("#!/bin/sh\n"
                       f'if [ "$PYSHMEM_PE" = 1 ]; then export PYSHMEM_TRACE_TEST_CLOCK_SKEW_NS={skew_ns}; fi\n'
                       f'exec "{sys.executable}" "{Path(__file__).parent / "programs" / program}"\n')
    wrapper.chmod(0o755)
    return wrapper


def _last_barrier_end(p):
    return max(int(e["t1"]) for e in p["events"] if p["names"][e["name"]] == "pyshmem.barrier_all")


def test_init_estimates_a_shifted_clock_and_the_timeline_undoes_it(tmp_path):
    from pyshmem.trace import load, summary
    from pyshmem.trace_file import load_raw

    skew = 5_000_000_000  # PE 1's clock runs 5 s ahead, as another host's might
    d = tmp_path / "tr"
    proc = run_pes(_skewed(tmp_path, skew), 3, env={"PYSHMEM_TRACE": str(d)}, timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    raw = load_raw(d)
    assert raw[0]["clock_offset_ns"] == 0 and raw[0]["clock_uncertainty_ns"] == 0
    off, unc = raw[1]["clock_offset_ns"], raw[1]["clock_uncertainty_ns"]
    assert 0 <= unc < 5_000_000 and abs(off - skew) <= unc + 100_000, (off, unc)  # within its bound (and noise)
    assert abs(raw[2]["clock_offset_ns"]) <= raw[2]["clock_uncertainty_ns"] + 100_000  # PE 2 shares PE 0's clock
    assert raw[1]["node"] != raw[0]["node"] == raw[2]["node"]  # the skewed clock is its own domain
    assert abs(_last_barrier_end(raw[1]) - _last_barrier_end(raw[0])) > skew // 2  # as recorded: 5 s apart
    pes = load(d)
    assert abs(_last_barrier_end(pes[1]) - _last_barrier_end(pes[0])) < 20_000_000  # on one clock: together
    assert [p["clock"] for p in pes][::2] == ["same clock", "same clock"]
    m = re.fullmatch(r"estimated: \+([0-9.]+) us ± ([0-9.]+) us against PE 0", pes[1]["clock"])
    assert m and abs(float(m.group(1)) - skew / 1e3) <= float(m.group(2)) + 100, pes[1]["clock"]
    assert "PE 1's clock: estimated: +" in summary(pes)


def test_the_clock_estimate_over_ucx_finds_the_shift_too(tmp_path):
    if ucx_unavailable():
        pytest.skip(ucx_unavailable())
    from pyshmem.trace_file import load_raw

    skew = -3_000_000_000
    d = tmp_path / "tr"
    proc = run_pes(_skewed(tmp_path, skew), 2, env={"PYSHMEM_TRACE": str(d), "PYSHMEM_REMOTE_ONLY": "1"},
                   timeout=90)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    p1 = load_raw(d)[1]
    assert abs(p1["clock_offset_ns"] - skew) <= p1["clock_uncertainty_ns"] + 200_000, p1


def test_version_1_traces_without_a_clock_estimate_still_load(tmp_path):
    from pyshmem.trace_file import HEADER, read

    head = HEADER.pack(b"PYSHTRC1", 1, 0, 1, 0, 0, 8, 123, 7, 0)
    (tmp_path / "trace-pe0.bin").write_bytes(head)
    p = read(tmp_path / "trace-pe0.bin")
    assert (p["t_sync"], p["node"], p["clock_offset_ns"], len(p["events"])) == (123, 7, None, 0)
