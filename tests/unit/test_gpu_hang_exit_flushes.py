"""tests/gpu/programs/gpu_hang.py leaves with os._exit (its CUDA context is dead after the
trap), which skips every flush. The GPU test reads the kernel's printf text, which the
driver writes through C stdio: leave() must flush C stdio as well as Python's streams,
or that text is lost whenever stdout is a pipe (block-buffered), as under shmemrun."""

import os
import subprocess
import sys

from conftest import REPO

PROGRAM = REPO / "tests" / "gpu" / "programs" / "gpu_hang.py"

CODE = f'''
import ctypes, importlib.util, sys
spec = importlib.util.spec_from_file_location("gpu_hang", {str(PROGRAM)!r})
gpu_hang = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gpu_hang)      # defines leave(); main() runs only as a script
libc = ctypes.CDLL(None)
libc.printf(b"from C stdio (as device printf)\\n")
libc.fprintf(ctypes.c_void_p.in_dll(libc, "stderr"), b"C stderr line\\n")
sys.stdout.write("from Python, unflushed\\n")
gpu_hang.leave(3)
'''


def test_leave_flushes_c_stdio_and_python_streams_before_os_exit():
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("PYTHONUNBUFFERED", None)
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 3, proc.stderr
    assert "from C stdio (as device printf)" in proc.stdout, (proc.stdout, proc.stderr)
    assert "from Python, unflushed" in proc.stdout, (proc.stdout, proc.stderr)
    assert "C stderr line" in proc.stderr, proc.stderr
