"""``python -m pipelines.proactivebench.compat <release> <out> [--overwrite] [--verify]``."""

import sys

from pipelines.proactivebench.compat.cli import main

sys.exit(main())
