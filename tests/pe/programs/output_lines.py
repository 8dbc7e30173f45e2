"""Output that the launcher must keep whole (tests/pe/test_launcher.py): every PE
prints long lines to stdout and stderr in small pieces, flushing between them so that
each piece is its own write, all PEs at once; then a traceback, a line of invalid
UTF-8 and a last line without newline. Only the standard library: no pyshmem.

Every line is self-checking: ``<stream><pe> n<i> len<L> <body>`` has L bytes in all and
its body is one letter per PE, so a line mixed from two PEs or cut short is seen.
Usage: output_lines.py DIR (DIR: where the PEs meet before they print).
"""

import os
import sys
import time

PE, NPES = int(os.environ["PYSHMEM_PE"]), int(os.environ["PYSHMEM_NPES"])
LENGTHS = [300 + (i * 937) % 4700 for i in range(40)] + [70000, 200000]  # > the 64 KiB pipe buffer too
PIECE = 97


def line(stream, i, length):
    """Line i of `stream` on PE: `length` bytes, without the newline."""
    head = f"{stream}{PE} n{i} len{length} "
    return head + "abcdefgh"[PE % 8] * (length - len(head))


def write_in_pieces(file, text):
    for k in range(0, len(text), PIECE):
        file.write(text[k:k + PIECE])
        file.flush()
        os.sched_yield()  # let another PE write in between


open(os.path.join(sys.argv[1], f"ready.{PE}"), "w").close()
end = time.monotonic() + 15
while time.monotonic() < end and len(os.listdir(sys.argv[1])) < NPES:  # start together
    time.sleep(0.005)
for i, length in enumerate(LENGTHS):
    write_in_pieces(sys.stdout, line("out", i, length) + "\n")
    if i % 4 == 0:
        write_in_pieces(sys.stderr, line("err", i, length) + "\n")
try:
    raise RuntimeError(f"boom from pe {PE}")
except RuntimeError:
    sys.excepthook(*sys.exc_info())  # the interpreter's own traceback printing; exit 0
sys.stdout.flush()
sys.stdout.buffer.write(b"bin%d \xff\xfe\x80 end\n" % PE)
sys.stdout.write(f"tail{PE}")  # no newline: flushed at exit
