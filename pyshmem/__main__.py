"""``python -m pyshmem info``: print version, backend, transports and PYSHMEM_* variables."""

import sys

from pyshmem.info import main

if __name__ == "__main__":
    sys.exit(main())
