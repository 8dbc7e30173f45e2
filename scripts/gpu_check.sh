#!/usr/bin/env bash
# GPU check: on a machine with an NVIDIA GPU, build pyshmem, run the GPU tests and a
# short device-API benchmark, and print a summary. Meant to finish in under 5 minutes.
#
#   bash scripts/gpu_check.sh            # from the repository root
#
# Works offline: installs with the build tools already present (--no-build-isolation).
# Results go to $OUT (or ./gpu_check_out): pytest log, benchmark table and JSON.
set -u -o pipefail
cd "$(dirname "$0")/.."
OUT="${OUT:-$PWD/gpu_check_out}"
mkdir -p "$OUT"
PY="${PYTHON:-python3}"
status=0
step() { echo; echo "=== $* ==="; }

step "machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$OUT/gpu.txt" || true
"$PY" --version
nvcc --version 2>/dev/null | tail -1 || echo "nvcc: not on PATH"

# Wheels the GPU machine lacks (it has no registry access), e.g. libucx-cu13 for the
# GPU-over-UCX tests: put them in gpu_wheels/ beforehand
# (pip download --no-deps --python-version 3.12 --only-binary=:all: -d gpu_wheels libucx-cu13).
if ls gpu_wheels/*.whl >/dev/null 2>&1; then
  step "carried wheels"
  "$PY" -m pip install --no-deps --no-index -q gpu_wheels/*.whl 2>&1 | tail -3
fi

step "build (pip install -e ., no network)"
if ! "$PY" -m pip install --no-build-isolation --no-deps -q -e . >"$OUT/build.log" 2>&1; then
  echo "build failed; last lines of $OUT/build.log:"; tail -30 "$OUT/build.log"; exit 1
fi
"$PY" -m pyshmem info | tee "$OUT/info.txt"

step "GPU tests, the MoE example on the GPU, device compile/link tests"
timeout 240 "$PY" -m pytest -q -rs tests/gpu tests/unit/test_gpu_harness.py tests/unit/test_cuda_compile.py \
  tests/unit/test_device_gpu_compile.py "tests/pe/test_examples.py::test_example" -k "not test_example or moe" \
  2>&1 | tee "$OUT/pytest.log" | tail -25
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "device API benchmark (one PE, heap in GPU memory)"
timeout 120 "$PY" tests/gpu/bench_device.py --json "$OUT/bench_device.json" 2>&1 | tee "$OUT/bench_device.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "perftest gpu: device put/p/g, put_bw by scope vs the GPU's own copy, stream collectives (2 PEs)"
timeout 240 "$PY" -m pyshmem.run -n 2 "$PY" -m pyshmem.perftest gpu --json "$OUT/perftest_gpu.jsonl" 2>&1 \
  | tee "$OUT/perftest_gpu.md"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

step "summary"
echo "GPU: $(head -1 "$OUT/gpu.txt")"
echo "tests: $(grep -E '(passed|failed|error)' "$OUT/pytest.log" | tail -1)"
grep '^|' "$OUT/bench_device.md" || echo "benchmark: no figures"
grep -E '^(\||p \+ quiet|stream)' "$OUT/perftest_gpu.md" || echo "perftest gpu: no figures"
echo "status: $([ $status -eq 0 ] && echo OK || echo FAILED)"
exit $status
