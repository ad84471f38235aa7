#!/usr/bin/env python
"""Write the ProactiveBench demo corpus (``make demo-corpus``): the command line of
:mod:`pipelines.proactivebench.demo`, where the corpus is made.

    .venv/bin/python scripts/make_demo_corpus.py [--out demo_corpus] [--no-check]
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file, not installed

from pipelines.proactivebench.demo import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
