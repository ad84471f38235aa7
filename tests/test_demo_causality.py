"""No future information in what the demo releases show a model (StreamVibe §3.1, App. B.2;
StreamReady §4), checked on the released Parquet of the session's demo build.

Every StreamVibe step and pointwise row, and every ProReady question list, equals what the
build's own functions compute from the record truncated at its time (``core/causal.py``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any

import pyarrow.parquet as pq

from pipelines.proready.released import check_times, question_violations
from pipelines.streamvibe.causality import pointwise_violations, stream_violations
from pipelines.streamvibe.quality import read_release
from tests.support.demo import DemoReleases


def test_every_streamvibe_step_and_pointwise_row_is_truncation_invariant(demo_releases: DemoReleases):
    samples, rows = read_release(demo_releases.paths["streamvibe"])
    rows_of = defaultdict(list)
    for r in rows:
        rows_of[r["sample_id"]].append(r)
    # 12 samples from the manifest, 46 planned from the eight dataset layouts
    assert (len(samples), sum(len(s["steps"]) for s in samples), len(rows)) == (58, 1389, 232)
    for s in samples:
        assert stream_violations(s) == [], s["id"]
        assert pointwise_violations(s, rows_of[s["id"]]) == [], s["id"]


def test_no_demo_probe_is_silent_by_construction(demo_releases: DemoReleases):
    samples, rows = read_release(demo_releases.paths["streamvibe"])
    # the revision sample keeps i1 from 0 s until the user's revision at 40 s (it showed an
    # empty active set from 16 s on, after i1's last gold point)
    rv = next(s for s in samples if s["id"] == "rv/opencv-doc/vtest/4")
    assert [s["active_intents"] for s in rv["steps"]] == [["i1"]] * 40 + [["i2"]] * 40
    # a near_after probe that shows no active intent would tell a model to stay silent
    after = [r for r in rows if r["gold_probe_type"] == "near_after"]
    assert after and all(r["active_intents"] for r in after)
    # and none is within the largest supported tolerance (2 s) of a window
    assert min(n["distance"] for s in samples for n in s["gold_negative_probes"]) > 2.0


def _shape(value: Any, row: dict[str, Any]) -> str:
    """What a value looks like once the row's own sample id and digits are masked: a column
    whose shapes differ between positives and negatives tells a model the label."""
    if isinstance(value, str):
        return re.sub(r"\d+", "N", value.replace(row["sample_id"], "S"))
    if isinstance(value, list):
        return f"list[{'empty' if not value else 'items'}]"
    return type(value).__name__


def test_no_model_facing_pointwise_column_tells_the_label(demo_releases: DemoReleases):
    """Only ``gold_*`` columns may depend on the label: for every other column, the shapes its
    values take on positive rows and on negative rows overlap. The id was ``<sample>@<t>#<evidence
    id>`` on every positive and ``<sample>@<t>`` on every negative, which separated them."""
    _, rows = read_release(demo_releases.paths["streamvibe"])
    positives = [r for r in rows if r["gold_should_respond"]]
    negatives = [r for r in rows if not r["gold_should_respond"]]
    assert positives and negatives
    for column in (c for c in rows[0] if not c.startswith("gold_")):
        pos = {_shape(r[column], r) for r in positives}
        neg = {_shape(r[column], r) for r in negatives}
        assert pos & neg, (column, sorted(pos), sorted(neg))
    assert all(re.fullmatch(re.escape(f"{r['sample_id']}@{r['t']:g}") + r"#\d+", r["id"]) for r in rows)


def test_every_proready_item_is_truncation_invariant(demo_releases: DemoReleases):
    items = pq.read_table(demo_releases.paths["proready"] / "data").to_pylist()
    assert len(items) == 17 and sum(len(check_times(i)) for i in items) > 100
    for item in items:
        assert question_violations(item) == [], item["id"]
