"""Regenerates the measured tables and plots of docs/performance.md in one command.

    python benchmarks/update_performance.py            # ~15 min on a 2-core machine
    python benchmarks/update_performance.py --quick    # a smoke run (tiny sizes; not figures to keep)

Runs, one after the other (nothing else should run on the machine meanwhile):
  1. ``python -m pyshmem.perftest compare --out docs/perf``: point-to-point figures of
     pyshmem (Python and compiled) next to shmem4py, Open MPI's OpenSHMEM C, mpi4py RMA,
     ucx_perftest and memcpy, with the issue's targets and PNG plots;
  2. ``python benchmarks/bench_coll.py``: collectives on 2, 4 and 8 PEs next to Open MPI's
     OpenSHMEM, and the barrier's growth over 2..16 PEs;
(the raw figures of both go to docs/perf/*.json, the plots to docs/perf/*.png)
and replaces the text between each pair of markers in the doc
(``<!-- generated: NAME -->`` ... ``<!-- end generated: NAME -->``) with the new report.
The prose around the markers (what the figures mean, what changed) is written by hand.
"""

import argparse
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def splice(text, name, body):
    """Replaces the generated block `name` of a doc's text.

    Raises:
        ValueError: the doc lacks the block's markers.
    """
    begin, end = f"<!-- generated: {name} -->", f"<!-- end generated: {name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise ValueError(f"the doc has no '{begin}' ... '{end}' block to replace")
    return pattern.sub(lambda _: f"{begin}\n{body.strip()}\n{end}", text, count=1)


def _run(cmd):
    print("+ " + " ".join(map(str, cmd)), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=str(REPO))
    if proc.returncode != 0:
        sys.exit(f"update_performance: {cmd[1:4]} failed with exit status {proc.returncode}")
    return proc.stdout


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--doc", default=str(REPO / "docs" / "performance.md"))
    ap.add_argument("--only", choices=("compare", "collectives"), help="regenerate one block")
    ap.add_argument("--quick", action="store_true", help="tiny sizes and iteration counts (a smoke run)")
    a = ap.parse_args(argv)
    doc = Path(a.doc)
    text = doc.read_text()
    if a.only in (None, "compare"):
        perf = doc.parent / "perf"
        quick = ["--sizes", "8,64K", "--iters", "20", "--batches", "2", "--rounds", "1"] if a.quick else []
        # compare exits 1 when a system failed; its report says which, so keep it.
        cmd = [sys.executable, "-m", "pyshmem.perftest", "compare", "--out", str(perf), *quick]
        print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, cwd=str(REPO))
        if not (perf / "compare.md").exists() or proc.returncode not in (0, 1):
            sys.exit(f"update_performance: compare failed with exit status {proc.returncode}")
        body = (perf / "compare.md").read_text()
        rel = perf.relative_to(doc.parent)
        body += f"\n![latency vs size]({rel}/latency.png)\n\n![bandwidth vs size]({rel}/bandwidth.png)\n"
        text = splice(text, "compare", body)
    if a.only in (None, "collectives"):
        quick = ["--pes", "2", "--sizes", "8,1024", "--barrier-pes", "2,3", "--quick"] if a.quick else []
        (doc.parent / "perf").mkdir(exist_ok=True)
        text = splice(text, "collectives", _run([sys.executable, str(HERE / "bench_coll.py"), *quick, "--json",
                                                 str(doc.parent / "perf" / "coll.json")]))
    doc.write_text(text)
    print(f"updated {doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
