"""``python -m pyshmem.perftest NAME [options]`` (see pyshmem.perftest)."""

import sys

from pyshmem.perftest.cli import main

if __name__ == "__main__":
    sys.exit(main())
