"""``python -m pyshmem info``: version, backend, transports and PYSHMEM_* variables.
``python -m pyshmem trace DIR``: merge a PYSHMEM_TRACE run into a timeline (pyshmem/trace.py)."""

import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["trace"]:
        from pyshmem.trace import main

        sys.exit(main(sys.argv[2:]))
    from pyshmem.info import main

    sys.exit(main())
