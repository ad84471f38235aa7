#!/usr/bin/env python
"""Write the ProReady-QA demo corpus, or the scripted demo panel's decisions and corrections for a
pending review state: the command line of :mod:`pipelines.proready.demo`, where both are made.

    python scripts/make_proready_demo.py corpus --out demo_corpus
    python scripts/make_proready_demo.py decisions --review out/proready/review/2.1.0 \
        --out demo_corpus/proready/review
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file, not installed

from pipelines.proready.demo import main  # noqa: E402

if __name__ == "__main__":
    main()
