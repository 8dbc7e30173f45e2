#!/usr/bin/env bash
# GPU check: on a machine with an NVIDIA GPU, build pyshmem, run tests/gpu and the
# short device-API benchmarks, and print ONE summary table (also when a step fails or
# times out: it is printed from an EXIT trap).
#
#   bash scripts/gpu_check.sh            # from anywhere; results in $OUT (or ./gpu_check_out)
#
# Made for the lent GPU machine (one H200, 16 cores, offline, 15 device-minutes per task,
# at most 10 minutes per command): run it as ONE call with a timeout of ~500 s. It ends
# itself by ~470 s; a normal run should take ~3-4 min, which leaves room for a rerun.
#
# Steps and their timeouts (each step runs under `timeout -k 5`, in its own process group,
# which is killed when the step ends; a step never gets more than what is left of
# GPU_CHECK_DEADLINE, default 450 s, so even if every step times out the script ends by
# ~7.8 min: 450 s + a 5 s kill grace + the summary, <= 20 s):
#   1. machine: nvidia-smi                                      10 s  (no GPU: stop, exit 2)
#   2. carried wheels (gpu_wheels/*.whl, only if present)       30 s
#   3. build: pip install --no-build-isolation --no-deps -e .   90 s  (GPU_CHECK_SKIP_BUILD=1 skips)
#   4. python -m pyshmem info                                   15 s
#   5. CUDA driver usable from Python (tests/gpu/harness.py)    15 s  (else every GPU test skips)
#   6. pytest -x tests/gpu, 60 s a test (pytest-timeout,       180 s  (all skipped = failure)
#      thread method, when importable; else only the step's;
#      test_nvshmem_programs_gpu.py, last, first builds 6 programs
#      with pyshmem-nvcc --gpu, all at once: skipped without nvcc)
#   7. perftest gpu, 2 PEs: --sizes 8,64K,16M -n 50 -w 5         55 s  (shmemrun --timeout 50)
#   8. tests/gpu/bench_device.py, medians of 3 (not 7)          45 s
#   sum of the steps' own timeouts: 440 s.
# With NVIDIA's NVSHMEM sources carried in nvshmem_src/ (git-ignored: NVIDIA's licence
# forbids redistributing them; GPU_CHECK_NVSHMEM_TREE names another folder), steps 6-8
# give way to (GPU_CHECK_ALL=1 keeps them, if the deadline allows):
#   9. NVIDIA's perftest against pyshmem and against NVIDIA's NVSHMEM  240 s
#      (scripts/nvshmem_perftest_compare.py: shmem_put_latency, shmem_p_latency and
#      shmem_put_bw built unchanged with pyshmem-nvcc --gpu and with nvcc against
#      $NVSHMEM_HOME, e.g. the nvidia-nvshmem-cu13 wheel's folder from gpu_wheels/; run
#      alternately on 2 PEs, 3 times; medians side by side). Without $NVSHMEM_HOME only
#      pyshmem's column is measured.
#   sum in that mode: 10 + 30 + 90 + 15 + 15 + 240 = 400 s.
# Not run here: tests/unit/test_cuda_compile.py, test_device_gpu_compile.py,
# test_gpu_harness.py and tests/pe/test_examples.py. They compile for sm_90 or run the
# CPU build and need no GPU, so the CPU suite covers them on every machine. Their GPU part
# is already in tests/gpu: the tp_allreduce and numba_ring examples run on the GPU there,
# and the MoE example's device calls (putmem_signal_nbi_block + signal_wait_until between
# PEs on one GPU) are the ones tests/gpu/programs/gpu_ring.py runs. (Still uncovered on
# a GPU: the MoE example's multi-block grid and signal_fetch.)
#
# Environment for every step:
#   PYSHMEM_TIMEOUT=30: a device-API wait longer than 30 s prints what it waits for and
#     traps, and a host wait stops the job with exit 124, so a hang does not eat the
#     budget. The perftest figures are taken with it set (GPU kernels record no
#     operations; each host call records 32 bytes: docs/performance.md, "Cost of the
#     diagnostics"). tests/gpu/harness.py builds its device state by hand with no wait
#     timeout, so the per-test timeout covers bench_device and test_device_on_gpu.
#   One shared cache directory, $GPU_CHECK_CACHE (default ${TMPDIR:-/tmp}/pyshmem-gpu-check-cache;
#     not under $OUT, which is copied back): CUDA_CACHE_PATH (the driver's PTX->SASS JIT
#     cache), NUMBA_CACHE_DIR (kernels jitted with cache=True), CUPY_CACHE_DIR, and
#     XDG_CACHE_HOME, where pyshmem caches its NVRTC builds (pyshmem/nvrtc: cuda.Module,
#     device/_shims.library, _gpu_coll's one module per reduction) and CPU kernels; the
#     PEs of a job share it, so each module is compiled once.
#   CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) (setup.py's default too), PYSHMEM_BUILD_TYPE=Release
#     (setup.py's default). No CMake option would make the build smaller: the C++ test
#     programs are already off (PYSHMEM_BUILD_TESTS), nvcc is not used by the build; setup.py uses
#     Ninja when the ninja module is importable (it is on the GPU machine).
#
# Measured on the build machine (2 cores shared with other sessions, no GPU, Python 3.11):
#   build, `python setup.py build_ext --inplace` in a clone (the CMake build pip -e runs;
#     Make, 2 jobs): 42 s wall, 58 s user + 7 s sys. With Ninja (4 jobs, load ~5):
#     configure 4.7 s, 50 objects in 124 s; longest object csrc/python/module.cpp
#     (~12% of the CPU time, ~8 s alone).
#   pytest --collect-only tests/gpu: 20 tests, 1.1 s (1.9 s with start-up).
#   NVRTC, per compile (cuda.core import included in the first): device_kernels_gpu.cu
#     5.4-6.6 s, kernels/coll.cu 6.1 s (once per reduction a job uses), perftest
#     kernels.cu ~2-10 s (load-dependent), examples/moe_alltoall.cu 2.1 s, device shims
#     (LTO-IR) 2.0-2.7 s. From the NVRTC cache: 0.24 s (kernels), 0.00 s (shims).
#   this script, no GPU (nvidia-smi missing): 0.2 s, exit 2, summary printed; with a
#     fake nvidia-smi and GPU_CHECK_SKIP_BUILD=1: 1.4 s (stops at step 5, exit 1).
#   perftest gpu with these arguments on the CPU build (2 PEs): 7 s.
# Estimate for the GPU machine (16 cores, one H200): build ~20-30 s (configure ~3 s,
#   module.cpp ~8 s on the critical path, link, pip); tests/gpu ~90-130 s (13 launcher
#   jobs of 1-4 PEs at ~3-10 s each: CUDA context and heap per PE, NVRTC misses only
#   on first use, + 7 one-process tests); perftest ~20-30 s; bench_device ~20-30 s
#   (3 runs x 4 figures x 2.7 GB moved): ~3-4 min in all, under the 5 minutes.
#
# Knobs: OUT, PYTHON, GPU_CHECK_SKIP_BUILD=1, GPU_CHECK_DEADLINE (s), GPU_CHECK_CACHE,
# GPU_CHECK_TEST_TIMEOUT (per-test s, 60), GPU_CHECK_NVIDIA_SMI (the nvidia-smi to run;
# tests/unit/test_gpu_check_script.py points it at a missing file to force "no GPU").
# Exit status: 0 all steps passed; 1 a step failed or timed out; 2 no GPU.
set -u -o pipefail
cd "$(dirname "$0")/.."
T0=$SECONDS
OUT="${OUT:-$PWD/gpu_check_out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
DEADLINE="${GPU_CHECK_DEADLINE:-450}"
TEST_TIMEOUT="${GPU_CHECK_TEST_TIMEOUT:-60}"
SMI="${GPU_CHECK_NVIDIA_SMI:-nvidia-smi}"
CACHE="${GPU_CHECK_CACHE:-${TMPDIR:-/tmp}/pyshmem-gpu-check-cache}"
STEPS="$OUT/steps.tsv"   # one line per finished step, written as it goes (survives a SIGKILL)
REASON="$OUT/reason.txt"  # why the check failed, first reason first
: >"$STEPS"
: >"$REASON"
rm -f "$OUT"/pytest.xml "$OUT"/perftest_gpu.jsonl "$OUT"/bench_device.json "$OUT"/gpu.txt "$OUT"/nvshmem_compare.jsonl
NVSHMEM_TREE="${GPU_CHECK_NVSHMEM_TREE:-$PWD/nvshmem_src}"

export PYSHMEM_TIMEOUT="${PYSHMEM_TIMEOUT:-30}"
export PYTHONUNBUFFERED=1
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export CUDA_CACHE_PATH="$CACHE/cuda" CUDA_CACHE_MAXSIZE=4294967296
export NUMBA_CACHE_DIR="$CACHE/numba" CUPY_CACHE_DIR="$CACHE/cupy"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 4)}"
export PYSHMEM_BUILD_TYPE="${PYSHMEM_BUILD_TYPE:-Release}"
mkdir -p "$CUDA_CACHE_PATH" "$NUMBA_CACHE_DIR" "$CUPY_CACHE_DIR"

# pyshmem caches its NVRTC builds per user ($XDG_CACHE_HOME/pyshmem/nvrtc, keyed by content,
# a lock per entry so the PEs of a node compile each module once): pointing XDG_CACHE_HOME
# into the shared cache directory keeps them for a rerun on the same machine.
export XDG_CACHE_HOME="$CACHE/xdg"
mkdir -p "$XDG_CACHE_HOME"

fail() { echo "$*" >>"$REASON"; }

summary() {
  local rc=$?
  trap - EXIT INT TERM
  echo
  echo "=== summary ($((SECONDS - T0)) s) ==="
  OUT="$OUT" RC="$rc" NVRTC_DIR="$XDG_CACHE_HOME/pyshmem/nvrtc" timeout 20 "$PY" - <<'EOF' || { echo "| summary | python failed; see $OUT |"; cat "$OUT/steps.tsv"; }
import json, os, re
from pathlib import Path
out = Path(os.environ["OUT"])
rc = int(os.environ["RC"])

def read(name):
    try:
        return (out / name).read_text(errors="replace")
    except OSError:
        return ""

rows = []
gpu = read("gpu.txt").strip().splitlines()
rows.append(("GPU", gpu[0] if gpu else "none found"))
for line in read("steps.tsv").splitlines():
    name, result, secs, budget = (line.split("\t") + ["", "", "", ""])[:4]
    rows.append((f"step: {name}", f"{result}, {secs} s (timeout {budget} s)"))

# tests: the JUnit XML when pytest finished, else the verbose log (a step that timed out)
xml = read("pytest.xml")
log = read("pytest.log")
if xml:
    m = re.search(r"<testsuite\b[^>]*>", xml)
    attrs = dict(re.findall(r'(\w+)="([^"]*)"', m.group(0))) if m else {}
    total, fails, errs, skips = (int(attrs.get(k, 0)) for k in ("tests", "failures", "errors", "skipped"))
    tests = f"{total - fails - errs - skips} passed, {fails} failed, {errs} errors, {skips} skipped"
elif log:
    counts = {k: len(re.findall(rf"^\S+::\S+ {k}\b", log, re.M)) for k in ("PASSED", "FAILED", "ERROR", "SKIPPED")}
    tests = (f"{counts['PASSED']} passed, {counts['FAILED']} failed, {counts['ERROR']} errors, "
             f"{counts['SKIPPED']} skipped (pytest did not finish)")
else:
    tests = "not run"
rows.append(("tests/gpu", tests))
failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", log, re.M)
hung = re.search(r"^(\S+::\S+) \++ Timeout \++", log, re.M)
if hung:
    rows.append(("first failure", f"{hung.group(1)}: per-test timeout (stacks in pytest.log)"))
elif failed:
    rows.append(("first failure", failed[0]))

# perftest gpu (2 PEs on the one GPU): JSON lines of {figure, scope, bytes, value, unit}
perf = {}
for line in read("perftest_gpu.jsonl").splitlines():
    try:
        r = json.loads(line)
        perf[(r["figure"], r["scope"], r["bytes"])] = r["value"]
    except (ValueError, KeyError, TypeError):
        pass

def fmt(v, unit=""):
    return "-" if v is None else f"{v:.3g}{unit}"

if perf:
    lat = {k[2]: v for k, v in perf.items() if k[0] == "put_latency"}
    small = min(lat) if lat else 8
    rows.append((f"device put + quiet {small} B / p / g (us, 2 PEs)",
                 " / ".join(fmt(v) for v in (lat.get(small), perf.get(("p_latency", "thread", 8)),
                                              perf.get(("g_latency", "thread", 8))))))
    copy = {k[2]: v for k, v in perf.items() if k[0] == "copy_bw"}
    big = max(copy) if copy else max(k[2] for k in perf)
    bw = [perf.get(("put_bw", s, big)) for s in ("thread", "warp", "block")]
    rows.append((f"put_bw {big >> 20 if big >= 1 << 20 else big}{' MiB' if big >= 1 << 20 else ' B'} "
                 "thread / warp / block (GB/s)", " / ".join(fmt(v) for v in bw)))
    c = copy.get(big)
    rows.append((f"  ratio to the GPU's copy ({fmt(c)} GB/s)",
                 " / ".join("-" if (v is None or not c) else f"{v / c:.2f}" for v in bw)))
    stream = sorted({k for k in perf if k[0].startswith("stream_")}, key=lambda k: (k[0], k[2]))
    if stream:
        n = max(k[2] for k in stream)
        rows.append((f"stream collectives {n} B (us)",
                     ", ".join(f"{k[0][7:]} {fmt(perf[k])}" for k in stream if k[2] == n)))
else:
    rows.append(("perftest gpu", "no figures"))

# bench_device.py (one PE, harness heap): {"gpu", "arch", "rows": [{figure, value, vs_memcpy}]}
try:
    bench = json.loads(read("bench_device.json") or "null")
except ValueError:
    bench = None
if isinstance(bench, dict) and bench.get("rows"):
    for r in bench["rows"]:
        vs = f" ({r['vs_memcpy']} x cuMemcpyDtoD)" if "vs_memcpy" in r else ""
        rows.append((f"1 PE: {r.get('figure')}", f"{r.get('value')}{vs}"))
else:
    rows.append(("bench_device (1 PE)", "no figures"))

# NVIDIA's perftest side by side: {program, scope, bytes, nvshmem, pyshmem}
compare = []
for line in read("nvshmem_compare.jsonl").splitlines():
    try:
        compare.append(json.loads(line))
    except ValueError:
        pass
if compare:
    both = [r for r in compare if r.get("nvshmem") and r.get("pyshmem")]
    rows.append(("NVIDIA perftest rows (pyshmem / NVSHMEM)", f"{len(both)} of {len(compare)} with both"))
    for r in both:
        if r["bytes"] in (4, 8, 65536, 16 << 20):
            rows.append((f"  {r['program'].rsplit('/', 1)[-1]} {r['scope']} {r['bytes']} B",
                         f"{r['nvshmem']:.3g} vs {r['pyshmem']:.3g} ({r['pyshmem'] / r['nvshmem']:.2f})"))

nvrtc = Path(os.environ.get("NVRTC_DIR") or "/nonexistent")
entries = [p for p in nvrtc.glob("*") if p.suffix in (".cubin", ".ltoir", ".ptx")] if nvrtc.is_dir() else []
if entries:
    rows.append(("NVRTC cache (shared by the PEs)", f"{len(entries)} modules"))

reasons = [l for l in read("reason.txt").splitlines() if l.strip()]
if rc == 0 and not reasons:
    rows.append(("status", "OK"))
else:
    rows.append(("status", ("NO GPU" if rc == 2 else "FAILED") + f" (exit {rc}): " + "; ".join(reasons or ["see logs"])))
w = max(len(k) for k, _ in rows)
print(f"| {'check'.ljust(w)} | result |")
print(f"|{'-' * (w + 2)}|--------|")
for k, v in rows:
    print(f"| {k.ljust(w)} | {v} |")
print(f"logs: {out}")
EOF
  exit "$rc"
}
CHILD=""
on_signal() {
  fail "interrupted by a signal"
  [ -n "$CHILD" ] && kill -TERM "$CHILD" 2>/dev/null  # GNU timeout passes it on to the step
  exit 1
}
trap summary EXIT
trap on_signal INT TERM HUP

# run_step NAME TIMEOUT LOG CMD...: runs CMD under `timeout`, clipped to what is left of
# the deadline; output to LOG, its tail to stdout; records the result in $STEPS.
run_step() {
  local name=$1 want=$2 log=$3 left t s rc result
  shift 3
  left=$((DEADLINE - (SECONDS - T0)))
  t=$((want < left ? want : left))
  if ((t < 5)); then
    printf '%s\tskipped: no time left\t0\t%s\n' "$name" "$want" >>"$STEPS"
    fail "$name: skipped, the ${DEADLINE} s deadline was reached"
    return 1
  fi
  echo
  echo "=== $name (timeout ${t} s) ==="
  s=$SECONDS
  timeout -k 5 "$t" "$@" >"$log" 2>&1 </dev/null &  # in the background: a signal to this
  CHILD=$!                                           # script is handled at once, not after
  wait "$CHILD"
  rc=$?
  # GNU timeout leads its own process group: end what the step left behind (a launcher
  # orphaned by pytest-timeout's exit, its PEs die with it) before the next step uses the GPU
  if kill -TERM -- "-$CHILD" 2>/dev/null; then
    sleep 1
    kill -KILL -- "-$CHILD" 2>/dev/null
  fi
  CHILD=""
  tail -n "${GPU_CHECK_TAIL:-12}" "$log"
  case $rc in
    0) result=ok ;;
    124 | 137) result="TIMEOUT after ${t} s"; fail "$name: timed out after ${t} s" ;;
    *) result="FAILED (exit $rc)"; fail "$name: failed (exit $rc), see $log" ;;
  esac
  printf '%s\t%s\t%s\t%s\n' "$name" "$result" "$((SECONDS - s))" "$t" >>"$STEPS"
  return "$rc"
}

# 1. machine: find the GPU fast; without one, stop here (exit 2 from the trap's summary).
if ! command -v "$SMI" >/dev/null 2>&1; then
  printf 'machine\tno GPU: %s not found\t0\t10\n' "$SMI" >>"$STEPS"
  fail "no GPU: $SMI not found (no NVIDIA driver on this machine)"
  exit 2
fi
if ! run_step "machine" 10 "$OUT/nvidia-smi.txt" "$SMI" --query-gpu=name,driver_version,memory.total \
  --format=csv,noheader || ! grep -q . "$OUT/nvidia-smi.txt"; then
  fail "no GPU: $SMI found no usable GPU"
  exit 2
fi
cp "$OUT/nvidia-smi.txt" "$OUT/gpu.txt"
"$PY" --version
nvcc --version 2>/dev/null | tail -1 || echo "nvcc: not on PATH (not needed: NVRTC comes from the wheels)"

# 2. Wheels the GPU machine lacks (no registry access there), e.g. libucx-cu13 for the
# GPU-over-UCX tests: put them in gpu_wheels/ beforehand
# (pip download --no-deps --python-version 3.12 --only-binary=:all: -d gpu_wheels libucx-cu13).
if ls gpu_wheels/*.whl >/dev/null 2>&1; then
  run_step "carried wheels" 30 "$OUT/wheels.log" "$PY" -m pip install --no-deps --no-index -q gpu_wheels/*.whl
fi

# 3. build (offline: the build tools already installed, --no-build-isolation)
if [ "${GPU_CHECK_SKIP_BUILD:-0}" = 1 ]; then
  printf 'build\tskipped (GPU_CHECK_SKIP_BUILD=1)\t0\t0\n' >>"$STEPS"
elif ! run_step "build" 90 "$OUT/build.log" "$PY" -m pip install --no-build-isolation --no-deps -e .; then
  exit 1
fi

# 4-5. the module imports; the CUDA driver works from Python (else every GPU test would skip)
run_step "pyshmem info" 15 "$OUT/info.txt" "$PY" -m pyshmem info || exit 1
if ! run_step "CUDA driver" 15 "$OUT/cuda.txt" "$PY" -c 'import sys
sys.path.insert(0, "tests/gpu")
from harness import gpu_available
ok, what = gpu_available()
print(("usable GPU: " if ok else "no usable GPU from Python: ") + what)
sys.exit(0 if ok else 1)'; then
  fail "$(tail -1 "$OUT/cuda.txt")"
  exit 1
fi

COMPARE=0
[ -d "$NVSHMEM_TREE/perftest" ] && COMPARE=1
if [ "$COMPARE" = 1 ] && [ "${GPU_CHECK_ALL:-0}" != 1 ]; then
  printf 'tests/gpu, perftest, bench_device\tskipped: NVIDIA perftest comparison run (GPU_CHECK_ALL=1 keeps them)\t0\t0\n' >>"$STEPS"
else
# 6. tests/gpu only, stop at the first failure, each test bounded
TO=()
if "$PY" -c "import pytest_timeout" 2>/dev/null; then
  # thread method: also ends a test stuck in a C call (cuCtxSynchronize on a hung kernel) by
  # dumping every thread's stack and exiting pytest; -x stops there anyway
  TO=(-p timeout "--timeout=$TEST_TIMEOUT" --timeout-method=thread)
else
  echo "pytest-timeout is not installed: no per-test timeout, only the step's"
fi
run_step "tests/gpu" 180 "$OUT/pytest.log" "$PY" -m pytest -x -v -rfEs ${TO[@]+"${TO[@]}"} \
  --junitxml="$OUT/pytest.xml" -o junit_family=xunit1 tests/gpu &&
  ! grep -qE '(passed|failed)' <(tail -1 "$OUT/pytest.log") &&
  fail "tests/gpu: no test ran (all skipped: see $OUT/pytest.log)"

# 7. perftest gpu: device put/p/g, put_bw by scope vs the GPU's own copy, stream collectives (2 PEs)
run_step "perftest gpu" 55 "$OUT/perftest_gpu.md" "$PY" -m pyshmem.run -n 2 --timeout 50 \
  -x PYSHMEM_BACKEND=cuda -x PYSHMEM_CUDA_SYMMETRIC_SIZE=256M \
  "$PY" -m pyshmem.perftest gpu --sizes 8,64K,16M -n 50 -w 5 --json "$OUT/perftest_gpu.jsonl"

# 8. device API benchmark (one PE, heap in GPU memory): 3 runs a figure instead of 7
run_step "bench_device" 45 "$OUT/bench_device.md" "$PY" -c 'import sys
sys.path.insert(0, "tests/gpu")
import bench_device
bench_device.REPS = 3
sys.argv = ["tests/gpu/bench_device.py", "--json", sys.argv[1]]
bench_device.main()' "$OUT/bench_device.json"
fi

# 9. NVIDIA's perftest, unchanged, against pyshmem and against NVIDIA's NVSHMEM (only with
# the sources carried; see the top)
if [ "$COMPARE" = 1 ]; then
  run_step "NVIDIA perftest side by side" 240 "$OUT/nvshmem_compare.md" "$PY" scripts/nvshmem_perftest_compare.py \
    "$NVSHMEM_TREE" --out "$CACHE/nvshmem-compare" --timeout 60 --json "$OUT/nvshmem_compare.jsonl"
fi

[ -s "$REASON" ] && exit 1
exit 0
