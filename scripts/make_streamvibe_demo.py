#!/usr/bin/env python
"""Write the StreamVibe demo corpus, or the scripted demo panel's decisions for a pending review
state: the command line of :mod:`pipelines.streamvibe.demo`, where both are made.

    python scripts/make_streamvibe_demo.py corpus --media .cache/demo-media/video --out demo_corpus/streamvibe
    python scripts/make_streamvibe_demo.py decisions --review out/streamvibe/review/3.1.0 \
        --out demo_corpus/streamvibe-review/decisions.demo.jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a file, not installed

from pipelines.streamvibe.demo import main  # noqa: E402

if __name__ == "__main__":
    main()
