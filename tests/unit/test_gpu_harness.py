"""What the GPU check (scripts/gpu_check.sh, tests/gpu) relies on, verified without a GPU:
its kernels compile for the GPU, and its copy of the device-state layout matches C's."""

import ctypes
import shutil
import subprocess
import sys

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "gpu"))
import harness  # noqa: E402


def test_device_state_layout_matches_the_c_header(tmp_path):
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "layout.c"
    src.write_text('#include <stddef.h>\n#include <stdio.h>\n#include "pyshmem/device_state.h"\n'
                   "int main(void) { printf(\"%zu %zu %zu %zu %zu %zu %zu %zu %zu\\n\", sizeof(pyshmem_device_state), "
                   "offsetof(pyshmem_device_state, heap_base), offsetof(pyshmem_device_state, user_offset), "
                   "offsetof(pyshmem_device_state, peer_flags), offsetof(pyshmem_device_state, proxy), "
                   "offsetof(pyshmem_device_state, teams), offsetof(pyshmem_device_state, team_rounds), "
                   "offsetof(pyshmem_device_state, wait_timeout_ns), offsetof(pyshmem_device_state, note_op)); "
                   "printf(\"%u\\n\", PYSHMEM_DEVICE_STATE_VERSION); return 0; }\n")
    exe = tmp_path / "layout"
    subprocess.run([cc, "-I", str(REPO / "csrc" / "include"), str(src), "-o", str(exe)], check=True, timeout=60)
    sizes, version = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout.splitlines()
    S = harness.DeviceState
    assert sizes.split() == [str(v) for v in (ctypes.sizeof(S), S.heap_base.offset, S.user_offset.offset,
                                              S.peer_flags.offset, S.proxy.offset, S.teams.offset,
                                              S.team_rounds.offset, S.wait_timeout_ns.offset,
                                              S.note_op.offset)]
    assert int(version) == harness.STATE_VERSION


def test_gpu_kernels_compile_for_sm90():
    pytest.importorskip("cuda.core", reason="cuda-core is not installed (pip install 'pyshmem[cuda]')")
    cubin = harness.compile_kernels("sm_90")
    for name in (b"check_thread_calls", b"contended_add", b"put_scoped", b"block_put_signal", b"p_latency",
                 b"pyshmem_d_state"):
        assert name in cubin, name


def test_gpu_check_script_is_ready():
    script = REPO / "scripts" / "gpu_check.sh"
    text = script.read_text()
    assert script.stat().st_mode & 0o111, "scripts/gpu_check.sh must be executable"
    assert "tests/gpu" in text and "bench_device.py" in text
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
