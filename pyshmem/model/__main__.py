"""python -m pyshmem.model: the command line (see pyshmem.model.cli)."""

import sys

from pyshmem.model.cli import main

sys.exit(main())
