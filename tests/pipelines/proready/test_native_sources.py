"""ProReady-QA from video datasets in their released layouts (YouCook2's, Ego4D's and VStream-QA's
demo copies beside the custom manifest): candidates from every listed dataset with no span
written by hand, every video and question accounted for, rejections naming the native file and
field, per-dataset counts in the release, the same bytes on rebuild."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.common.video_sources.base import NativeSpan
from pipelines.proready.build import run
from pipelines.proready.native import canonical_texts, point_spans
from tests.pipelines.proready.test_build import _approve_all

ROOT = Path(__file__).resolve().parents[3]
YC = "youcook2/annotations/youcookii_annotations_trainval.json"
NAR = "ego4d/v2/annotations/narration.json"
BIKES = "3f1c2a9e-5b7d-4c1e-9a2f-6d8e0b4c7a15"
CUT = "0b9d8c7e-6f5a-4b3c-9d2e-1f0a8b7c6d54"


def test_a_narration_spans_until_the_next_later_one_at_most_two_seconds_and_the_end() -> None:
    # 0.6 → the next narration (2.1); 2.1 → capped at 2 s; 4.2 and 4.2 (same moment) → 6.2, not
    # 4.2; the last → the decoded end
    assert point_spans([0.6, 2.1, 4.2, 4.2, 9.2], 9.68) == [2.1, 4.1, 6.2, 6.2, 9.68]
    assert point_spans([1.0], 30.0, cap_s=5.0) == [6.0]


def test_repeats_of_one_native_label_get_one_text() -> None:
    def nar(t: float, text: str) -> NativeSpan:
        return NativeSpan("narration", t, t, text.lower().rstrip("."), text, text, f"n.json: x[{t}]")

    spans = [nar(9.0, "A man rides a bicycle."), nar(2.0, "a man rides a bicycle"), nar(5.0, "a dog")]
    assert canonical_texts(spans) == {"a man rides a bicycle": "a man rides a bicycle", "a dog": "a dog"}


@pytest.fixture(scope="module")
def native_raw(media: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """RAW_DIR with the demo manifest under proready/ and three datasets' demo layouts beside it,
    and a config listing them."""
    from pipelines.proready import demo as proready_demo

    raw = tmp_path_factory.mktemp("raw")
    proready_demo.make_corpus(raw)  # the manifest and the datasets' layouts beside it
    cfg = yaml.safe_load((ROOT / "configs" / "proready.yaml").read_text())
    assert sorted(cfg["datasets"]) == ["vstream_qa", "youcook2"]  # the demo's
    cfg["datasets"]["ego4d"] = {}  # Ego4D's own videos too (the same footage as a clip)
    path = tmp_path_factory.mktemp("cfg") / "proready.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return raw, path


@pytest.fixture(scope="module")
def pending(native_raw: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    raw, cfg = native_raw
    out = tmp_path_factory.mktemp("out")
    return run(["--config", str(cfg), "--raw-dir", str(raw), "--out", str(out)])


def _cands(state: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (state / "candidates.jsonl").read_text().splitlines()]


def test_candidates_come_from_every_listed_dataset_with_no_span_written_by_hand(pending: Path) -> None:
    native = {c["id"]: c for c in _cands(pending) if "/" in c["video_id"]}
    assert sorted(native) == [
        f"ego4d/{BIKES}.rec-a-man-rides-a-bicycle-past-the-cars",
        "vstream_qa/000001.rec-a-man-rides-a-bicycle-past-the-cars",
        "youcook2/-cAmPuS0001.ssr-4", "youcook2/-cAmPuS0001.ssr-chain-1",
        "youcook2/bIkEsDemo01.ssr-4", "youcook2/bIkEsDemo01.ssr-chain-1"]
    # every window is a native span, its cue the native file and field
    chain = native["youcook2/bIkEsDemo01.ssr-chain-1"]
    assert [(t["t_s"], t["t_e"], t["answer"]) for t in chain["turns"]] == [
        (1.0, 3.0, "a cyclist rides past cars in traffic"),
        (3.0, 5.0, "a cyclist crosses in front of a stopped car"),
        (5.0, 7.0, "a wide shot of a square behind a railing")]
    assert chain["turns"][0]["cue"] == (f"{YC}: database.bIkEsDemo01.annotations[1].segment: "
                                        "a cyclist rides past cars in traffic")
    assert chain["video_file"] == "youcook2/raw_videos/validation/1/bIkEsDemo01.mp4"
    assert chain["source"] == "youcook2"
    # Ego4D narrations 1.4 s and 3.2 s say the same thing: REC counts 2, its window the last one
    # until the next narration (4.2 s); VStream-QA's clip 000001 is the same footage, its spans Ego4D's
    for vid in (f"ego4d/{BIKES}", "vstream_qa/000001"):
        (turn,) = native[f"{vid}.rec-a-man-rides-a-bicycle-past-the-cars"]["turns"]
        assert (turn["answer"], turn["ask_time_s"], turn["t_s"], turn["t_e"]) == ("2", 0.0, 3.2, 4.2)
        assert turn["cue"].startswith(f"{NAR}: {BIKES}.narration_pass_1.narrations[5].timestamp_sec")
    assert native["vstream_qa/000001.rec-a-man-rides-a-bicycle-past-the-cars"]["video_file"] == \
        "vstream_qa/vstream-realtime/ego4d_videos/000001.mp4"


def test_every_video_and_question_is_counted_and_the_bad_ones_named(pending: Path) -> None:
    status = json.loads((pending / "status.json").read_text())
    # custom 3 kept; youcook2 2 kept, 1 filtered, 3 rejected; ego4d 2 kept, 1 filtered, 3
    # rejected; vstream_qa 2 kept, 3 questions filtered, 3 rejected (two clips, one question)
    assert status["counts"]["videos"] == {"inputs": 23, "kept": 9, "filtered": 5, "rejected": 9,
                                          "pending": 0}
    rows = {r["item_id"]: r for r in pq.read_table(pending / "rejected").to_pylist()}
    cut = rows["youcook2/cAmPuScut02"]
    assert (cut["source_file"], cut["field"], cut["reason"]) == (
        YC, "database.cAmPuScut02.annotations[1].segment",
        "annotation ends at 51.0s, past the end of the video (31.0s decodable; the annotation "
        "claims 79.5 s)")
    ego_cut = rows[f"ego4d/{CUT}"]
    assert (ego_cut["source_file"], ego_cut["field"]) == (
        NAR, f"{CUT}.narration_pass_1.narrations[2].timestamp_sec")
    assert ego_cut["reason"].startswith("annotated at 4.2s, at/after the end of the video (4.08s")
    assert rows["vstream_qa/000003"]["field"] == "[2].end_time"
    assert rows["vstream_qa/question/4"]["reason"] == (
        "question 4 names clip '000099', which vstream-realtime/rvs_ego.json does not define")
    filtered = {r["item_id"]: r for r in pq.read_table(pending / "filtered_inputs").to_pylist()}
    assert sorted(k for k, r in filtered.items() if r["rule"].startswith("past-dependent")) == [
        "vstream_qa/question/1", "vstream_qa/question/2", "vstream_qa/question/3"]
    assert filtered["vstream_qa/question/1"]["source_file"] == \
        "vstream_qa/vstream-realtime/test_qa_ego4d.json"
    assert "not a test run on this question" in filtered["vstream_qa/question/1"]["reason"]
    facts = status["datasets"]
    assert {k: (v["root"], v["candidates"], v["released"]) for k, v in facts.items()} == {
        "ego4d": ("proready/ego4d", {"rec": 1}, {}),
        "vstream_qa": ("proready/vstream_qa", {"rec": 1}, {}),
        "youcook2": ("proready/youcook2", {"ssr": 4}, {})}
    assert facts["vstream_qa"]["ego4d"]["root"] == "proready/ego4d"
    media = [json.loads(x)["media"] for x in (pending / "review_candidates.jsonl").read_text().splitlines()]
    assert ["proready/youcook2/bIkEsDemo01.mp4"] in media


def test_release_reports_each_dataset_and_rebuilds_byte_identical(
        pending: Path, native_raw: tuple[Path, Path], tmp_path: Path) -> None:
    raw, cfg = native_raw
    out = pending.parents[2]
    cands = _cands(pending)
    log = tmp_path / "decisions.jsonl"
    # all approved, one youcook2 item three times only: it stays pending
    log.write_text("".join(json.dumps(d) + "\n" for d in _approve_all(cands, "youcook2/bIkEsDemo01.ssr-4")))
    args = ["--config", str(cfg), "--raw-dir", str(raw), "--out", str(out), "--decisions", str(log)]
    final = run(args)
    manifest = json.loads((final / "manifest.json").read_text())
    facts = manifest["datasets"]
    assert facts["youcook2"]["candidates"] == {"ssr": 4} and facts["youcook2"]["released"] == {"ssr": 3}
    assert facts["ego4d"]["released"] == {"rec": 1} and facts["vstream_qa"]["released"] == {"rec": 1}
    assert facts["youcook2"]["annotation_files"]["files"] == 6
    released = {r["video_id"].partition("/")[0] for r in pq.read_table(final / "data").to_pylist()
                if "/" in r["video_id"]}
    assert released == {"youcook2", "ego4d", "vstream_qa"}
    assert "| YouCook2 | `proready/youcook2` | 4 | 3 |" in (final / "README.md").read_text()
    before = {p.relative_to(final): p.read_bytes() for p in sorted(final.rglob("*")) if p.is_file()}
    again = run([*args, "--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    after = {p.relative_to(again): p.read_bytes() for p in sorted(again.rglob("*")) if p.is_file()}
    assert after == before
