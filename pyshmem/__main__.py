"""``python -m pyshmem info``: version, backend, transports and PYSHMEM_* variables.
``python -m pyshmem trace DIR``: merge a PYSHMEM_TRACE run into a timeline (pyshmem/trace.py)."""

import sys

USAGE = """usage: python -m pyshmem COMMAND [options]

commands:
  info [--env-markdown | --includes]   version, backend, transports and the PYSHMEM_* variables
                                       (--includes: compiler flags for the device API headers)
  trace DIR [-o OUT]                   the communication timeline of a PYSHMEM_TRACE=DIR run

related:
  shmemrun -n N prog [args]            start N PEs (also python -m pyshmem.run)
  python -m pyshmem.perftest --help    NVSHMEM-style benchmarks (and 'compare', side by side with peers)
"""

if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"], ["help"]):
        print(USAGE, end="")
        sys.exit(0)
    if sys.argv[1:2] == ["trace"]:
        from pyshmem.trace import main

        sys.exit(main(sys.argv[2:]))
    if sys.argv[1:2] not in ([], ["info"]):
        print(f"python -m pyshmem: unknown command {sys.argv[1]!r}\n\n{USAGE}", end="", file=sys.stderr)
        sys.exit(2)
    from pyshmem.info import main

    sys.exit(main())
