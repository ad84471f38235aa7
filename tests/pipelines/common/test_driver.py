"""The shared driver's release semantics, on small ProactiveBench builds of the demo corpus.

What a build does with input it cannot use as a whole, with a source that yields nothing, and
with a version that is already published (nothing silently lost, nothing silently corrupt):
each case is made in the test from the demo corpus (real registry media).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from exports.release import ReleaseError
from pipelines.proactivebench.build import run

REPO = Path(__file__).resolve().parents[3]
CONFIG = REPO / "configs" / "proactivebench.yaml"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from pipelines.proactivebench import demo as proactivebench_demo

    out = tmp_path_factory.mktemp("corpus") / "demo"
    assert proactivebench_demo.main(["--out", str(out), "--no-check"]) == 0
    return out


def copy(corpus: Path, tmp_path: Path, *envs: str) -> Path:
    raw = tmp_path / "raw"
    for env in envs:
        shutil.copytree(corpus / env, raw / env)
    return raw


def files_of(release: Path) -> dict[str, bytes]:
    return {p.relative_to(release).as_posix(): p.read_bytes() for p in sorted(release.rglob("*"))
            if p.is_file()}


def malformed_coco(raw: Path) -> Path:
    ann = raw / "coco" / "annotations" / "instances_val2014.json"  # the evaluation split's
    ann.write_text(ann.read_text()[:200])  # cut short: not JSON any more
    return ann


# -- a source that cannot be read as a whole ------------------------------------------------------


def test_unreadable_source_is_one_clear_error_and_nothing_is_published(corpus: Path, tmp_path: Path) -> None:
    """Today: ``RuntimeError: … BadInput … [while running 'ReadVocabulary[coco]']`` and a Python
    traceback. Now: one line naming the file and what is wrong, exit 1, no release."""
    raw = copy(corpus, tmp_path, "coco", "quickdraw")
    malformed_coco(raw)
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "build", "proactivebench", "--raw-dir", str(raw),
         "--out", str(out), "--only", "coco,quickdraw"],
        capture_output=True, text=True, cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith(
        "error: source coco cannot be read: annotations/instances_val2014.json (under ")
    assert ": json: malformed JSON: " in proc.stderr and "line 1 column 201" in proc.stderr
    assert "pass --skip-unreadable-sources" in proc.stderr
    assert not (out / "proactivebench" / "2.0.0").exists()


def test_skip_unreadable_sources_builds_the_others_and_says_so(corpus: Path, tmp_path: Path) -> None:
    raw = copy(corpus, tmp_path, "coco", "quickdraw")
    malformed_coco(raw)
    release = run(["--raw-dir", str(raw), "--out", str(tmp_path / "out"), "--only", "coco,quickdraw",
                   "--skip-unreadable-sources"])
    manifest = json.loads((release / "manifest.json").read_text())
    skipped = manifest["skipped_sources"]["coco"]
    assert (skipped["file"], skipped["field"]) == ("annotations/instances_val2014.json", "json")
    assert skipped["root"] == "coco"  # relative to --raw-dir: the release names no folder
    assert set(manifest["counts"]) == {"quickdraw"} and manifest["counts"]["quickdraw"]["kept"] == 8
    assert any(w.startswith("Source coco was NOT built") for w in manifest["warnings"])
    card = (release / "README.md").read_text()
    assert "Source coco was NOT built" in card and "config_name: coco" not in card


# -- a source that yields nothing -----------------------------------------------------------------


def test_a_source_yielding_nothing_stops_the_build_naming_its_path(corpus: Path, tmp_path: Path) -> None:
    """ImageNet-C pointed one folder too high: inputs = 0, exit 0 and a published empty release
    before; now the build stops, naming the path it read and what it found there."""
    raw = copy(corpus, tmp_path, "quickdraw")
    high = tmp_path / "high"
    shutil.copytree(corpus / "imagenet_c", high / "imagenet_c")
    out = tmp_path / "out"
    with pytest.raises(ReleaseError) as err:
        run(["--raw-dir", str(raw), "--out", str(out), "--only", "imagenet_c,quickdraw",
             "--source", f"imagenet_c={high}"])
    msg = str(err.value)
    assert f"imagenet_c: 0 samples from {high} (inputs 1, filtered 0, rejected 1; e.g. imagenet_c/: " \
           "not a corruption folder" in msg
    assert "--allow-empty-sources" in msg and "quickdraw" not in msg
    assert not (out / "proactivebench" / "2.0.0").exists()


def test_allow_empty_sources_publishes_and_warns(corpus: Path, tmp_path: Path) -> None:
    raw = copy(corpus, tmp_path, "quickdraw")
    high = tmp_path / "high"
    shutil.copytree(corpus / "imagenet_c", high / "imagenet_c")
    release = run(["--raw-dir", str(raw), "--out", str(tmp_path / "out"), "--only", "imagenet_c,quickdraw",
                   "--source", f"imagenet_c={high}", "--allow-empty-sources"])
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["counts"]["imagenet_c"] == {"inputs": 1, "kept": 0, "filtered": 0, "rejected": 1}
    assert any(w.startswith(f"Empty source (--allow-empty-sources): imagenet_c: 0 samples from {high}")
               for w in manifest["warnings"])
    card = (release / "README.md").read_text()
    assert "config_name: quickdraw" in card and "config_name: imagenet_c" not in card


def test_a_release_without_records_has_no_config_and_no_loading_example(corpus: Path, tmp_path: Path) -> None:
    """``configs: []`` while the card showed ``load_dataset(…, 'coco', …)``: a card lists exactly
    the configs that load, and a release with none says so."""
    high = tmp_path / "high"
    shutil.copytree(corpus / "imagenet_c", high / "imagenet_c")
    release = run(["--raw-dir", str(tmp_path), "--out", str(tmp_path / "out"), "--only", "imagenet_c",
                   "--source", f"imagenet_c={high}", "--allow-empty-sources"])
    card = (release / "README.md").read_text()
    assert yaml.safe_load(card.split("---")[1])["configs"] == []
    assert "load_dataset" not in card and "there is no config to load" in card
    assert json.loads((release / "manifest.json").read_text())["quality"]["success"] is True


# -- versions -------------------------------------------------------------------------------------


def test_versions_are_immutable_unless_bumped_or_overwritten(corpus: Path, tmp_path: Path) -> None:
    """TFDS semantics: the same records rebuild in place (byte-identical); other records under a
    published version are refused unless the version is bumped or --overwrite is given; every
    version gets its entry in RELEASE_NOTES.md beside the releases."""
    raw = copy(corpus, tmp_path, "quickdraw")
    out = tmp_path / "out"
    args = ["--raw-dir", str(raw), "--out", str(out), "--only", "quickdraw"]
    first = run(args)
    before = files_of(first)
    assert files_of(run(args)) == before  # same records: replaced by the same bytes

    cls = sorted((raw / "quickdraw").glob("*.ndjson"))[0]
    cls.write_text("".join(cls.read_text().splitlines(keepends=True)[1:]))  # one drawing fewer
    with pytest.raises(ReleaseError) as err:
        run(args)
    assert "is already published with other records (data/quickdraw" in str(err.value)
    assert f"bump `version:` in {CONFIG}" in str(err.value) and "--overwrite" in str(err.value)
    assert files_of(first) == before  # the published release is untouched

    run([*args, "--overwrite"])
    manifest = json.loads((first / "manifest.json").read_text())
    assert manifest["release"]["overwrote"][0] == "data/quickdraw"

    config = yaml.safe_load(CONFIG.read_text())  # a removed record: a major bump (TFDS)
    config.update(version="3.0.0", release_notes="Drops a drawing to test the notes.")
    bumped = tmp_path / "bumped.yaml"
    bumped.write_text(yaml.safe_dump(config))
    cls.write_text("".join(cls.read_text().splitlines(keepends=True)[1:]))
    newer = run([*args, "--config", str(bumped)])
    assert newer.name == "3.0.0" and (out / "proactivebench" / "2.0.0").is_dir()
    notes = (out / "proactivebench" / "RELEASE_NOTES.md").read_text()
    assert notes.index("## 3.0.0") < notes.index("## 2.0.0")  # newest first
    entry = notes[notes.index("## 3.0.0"):notes.index("## 2.0.0")]
    assert "Drops a drawing to test the notes." in entry
    assert "- since 2.0.0: records changed in data/quickdraw" in entry
    assert "  - quickdraw: kept 7 → 6" in entry
    old = notes[notes.index("## 2.0.0"):]
    assert "rebuilt over an earlier 2.0.0 with other records (--overwrite)" in old


# -- the bump a new version shows ----------------------------------------------------------------


def test_a_bump_smaller_than_the_changes_require_is_refused_unless_allowed(corpus: Path, tmp_path: Path
                                                                          ) -> None:
    """A new version built beside an earlier one whose records changed (another global seed
    redraws every episode's options and question) but that shows only a PATCH bump: one line
    naming the bump the changes require and the version that shows it, and nothing published.
    With --allow-small-bump it is published, and the manifest (``version_bump``) and the card say
    so; the gate's croissant.json and ``benchforge check`` agree with both. A larger bump than
    required publishes without the flag."""
    from pipelines.cli import main as cli

    raw = copy(corpus, tmp_path, "quickdraw")
    out = tmp_path / "out"
    args = ["--raw-dir", str(raw), "--out", str(out), "--only", "quickdraw"]
    run(args)
    config = yaml.safe_load(CONFIG.read_text())
    config.update(version="2.0.1", global_seed=1)
    patch = tmp_path / "patch.yaml"
    patch.write_text(yaml.safe_dump(config))

    with pytest.raises(SystemExit) as refused:
        cli(["build", "proactivebench", "--config", str(patch), *args])
    assert str(refused.value.code) == (
        "release not published: version 2.0.1 is a patch bump over 2.0.0, but its changes require "
        f"a major bump (quickdraw/test: 8 changed): set `version: 3.0.0` in {patch}, or pass "
        "--allow-small-bump to publish it as 2.0.1 anyway")
    assert sorted(p.name for p in (out / "proactivebench").iterdir() if p.name[0].isdigit()) == ["2.0.0"]

    small = run([*args, "--config", str(patch), "--allow-small-bump"])
    manifest = json.loads((small / "manifest.json").read_text())
    assert manifest["version_bump"] == {"previous": "2.0.0", "required": "major", "shown": "patch",
                                        "verdict": "too small", "published_with": "--allow-small-bump"}
    sentence = ("Version 2.0.1 understates its changes: they require a major bump over 2.0.0 (TFDS "
                "semantics), the version shows a patch bump; it was published with --allow-small-bump")
    assert f"- **{sentence}" in (small / "README.md").read_text()
    assert [w for w in manifest["warnings"] if w.startswith(sentence)]
    assert cli(["check", str(small)]) == 0

    config.update(version="3.0.0")  # the same records as 2.0.1: a major bump is more than they need
    major = tmp_path / "major.yaml"
    major.write_text(yaml.safe_dump(config))
    larger = run([*args, "--config", str(major)])
    manifest = json.loads((larger / "manifest.json").read_text())
    assert manifest["version_bump"] == {"previous": "2.0.1", "required": "patch", "shown": "major",
                                        "verdict": "larger than required"}
    assert "understates" not in (larger / "README.md").read_text()


# -- the build's own gate -------------------------------------------------------------------------


def test_the_build_gate_decodes_every_frame_before_publishing(corpus: Path, tmp_path: Path) -> None:
    """A writer that embedded garbage (simulated: a benchmark's finalize breaks a frame in the
    staged release) is stopped by the gate before publication; nothing is published."""
    from dataclasses import replace

    import pyarrow.parquet as pq

    from pipelines.common import driver
    from pipelines.proactivebench.build import PROACTIVEBENCH, ProactiveBenchBuild

    class Broken(ProactiveBenchBuild):
        def finalize(self, ctx, counts, files):  # type: ignore[no-untyped-def]
            path = next((ctx.staging / "data" / "quickdraw").glob("*.parquet"))
            table = pq.read_table(path)
            rows = table.to_pylist()
            rows[0]["frames"][0]["bytes"] = b"\x89PNG\r\n\x1a\n not a picture"
            pq.write_table(type(table).from_pylist(rows, schema=table.schema), path)
            return super().finalize(ctx, counts, files)

    raw = copy(corpus, tmp_path, "quickdraw")
    out = tmp_path / "out"
    with pytest.raises(ReleaseError) as err:
        driver.run(replace(PROACTIVEBENCH, build=Broken()),
                   ["--raw-dir", str(raw), "--out", str(out), "--only", "quickdraw"])
    assert str(err.value).startswith("the gate failed: data/quickdraw/test-00000-of-00001.parquet: "
                                     "decode: row ")
    assert "frames[0]: cannot decode image" in str(err.value)
    assert not (out / "proactivebench" / "2.0.0").exists()


def test_the_manifest_is_written_once_after_all_it_lists_and_lists_the_published_release(
        corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One inventory of the release: in a build beside an earlier version whose card is written
    twice (a small bump published anyway), ``manifest.json`` is written once — after the card,
    the diff and the gate's reports, before ``croissant.json`` (which records its sha256) — and
    lists exactly the files published beside it."""
    from exports.release import ReleaseInventory

    raw = copy(corpus, tmp_path, "quickdraw")
    out = tmp_path / "out"
    args = ["--raw-dir", str(raw), "--out", str(out), "--only", "quickdraw"]
    run(args)
    config = yaml.safe_load(CONFIG.read_text())
    config.update(version="2.0.1", global_seed=1)  # every episode redrawn: a patch is too small
    patch = tmp_path / "patch.yaml"
    patch.write_text(yaml.safe_dump(config))

    written: list[str] = []  # release-relative paths of the staged files written as text, in order
    write_text = Path.write_text

    def recorded(self: Path, *a: object, **kw: object) -> int:
        staging = [i for i, part in enumerate(self.parts) if part.startswith(".staging-")]
        if staging:
            written.append("/".join(self.parts[staging[0] + 1:]))
        return write_text(self, *a, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", recorded)
    release = run([*args, "--config", str(patch), "--allow-small-bump"])
    monkeypatch.undo()

    assert written.count("manifest.json") == 1
    manifest_at = written.index("manifest.json")
    listed_before = ["README.md", "reports/diff-2.0.0-2.0.1.md", "reports/diff-2.0.0-2.0.1.json",
                     "reports/data_quality.md", "reports/data_quality.json",
                     "reports/data_quality.html"]
    assert written.count("README.md") == 2
    assert all(written.index(f) < manifest_at for f in listed_before)
    assert written[manifest_at + 1:] == ["croissant.json"]
    manifest = json.loads((release / "manifest.json").read_text())
    assert manifest["version_bump"]["published_with"] == "--allow-small-bump"
    assert manifest["files"] == [f for f in ReleaseInventory(release).files
                                 if f["path"] != "croissant.json"]
    assert set(listed_before) <= {f["path"] for f in manifest["files"]}


def test_a_release_names_its_probe_pool_as_typed_never_absolutely(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pipelines.proactivebench.release import recorded_probes

    monkeypatch.chdir(REPO)
    assert recorded_probes(str(REPO / "configs" / "probes.example.yaml")) == "configs/probes.example.yaml"
    assert recorded_probes(str(tmp_path / "pool.yaml")) == "pool.yaml"  # outside: its name alone
    assert recorded_probes("gs://bucket/pool.yaml") == "gs://bucket/pool.yaml"


# -- releases and printed commands that name no folder --------------------------------------------


def test_a_source_root_is_recorded_relative_to_the_raw_dir_or_by_its_flag(tmp_path: Path) -> None:
    """A release's bytes are a function of its inputs' content, not of where they lie: a root
    inside ``--raw-dir`` is named relative to it (a dataset linked into it by its place there),
    one given elsewhere by the flag that gave it, a URL as it is."""
    import argparse

    from pipelines.common.benchmark import BuildContext

    raw = tmp_path / "raw"
    (raw / "coco").mkdir(parents=True)
    (tmp_path / "data" / "quickdraw").mkdir(parents=True)
    (raw / "qd").symlink_to(tmp_path / "data" / "quickdraw")
    ctx = BuildContext({"version": "1.0.0"}, Path("c.yaml"), raw, tmp_path / "out", argparse.Namespace())
    assert ctx.recorded_root(str(raw / "coco"), "--source coco") == "coco"
    assert ctx.recorded_root(str(raw), "--source") == "."
    assert ctx.recorded_root(str(raw / "qd"), "--source quickdraw") == "qd"
    assert ctx.recorded_root(str(tmp_path / "data" / "quickdraw"), "--source quickdraw") == \
        "outside --raw-dir (--source quickdraw)"
    assert ctx.recorded_root(str(tmp_path / "rawer"), "--source x") == "outside --raw-dir (--source x)"
    assert ctx.recorded_root("gs://bucket/coco", "--source coco") == "gs://bucket/coco"
    relative = BuildContext({"version": "1"}, Path("c.yaml"), Path("raw"), Path("out"), argparse.Namespace())
    assert relative.recorded_root(str(raw / "coco"), "--source coco") == "outside --raw-dir (--source coco)"


def test_the_pending_state_names_the_folders_as_the_user_typed_them(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Built from a working directory with relative ``--raw-dir`` / ``--out``, the review loop's
    next commands (status.json) use those relative paths and the repo's ``.venv/bin/benchforge``
    as the user would type them from the repo, never a resolved absolute path of the build."""
    from pipelines.streamvibe import demo as streamvibe_demo
    from pipelines.streamvibe.build import run as run_streamvibe

    streamvibe_demo.build(REPO / ".cache" / "demo-media" / "video", tmp_path / "raw" / "streamvibe")
    monkeypatch.chdir(tmp_path)
    state = run_streamvibe(["--raw-dir", "raw", "--out", "out", "--no-review-media"])
    commands = json.loads((state / "status.json").read_text())["next"]
    assert commands[-1].endswith(" --raw-dir raw --out out --decisions out/streamvibe/review/log")
    assert f"--candidates out/streamvibe/review/{state.name}/review_candidates.jsonl" in commands[2]
    assert not any(str(tmp_path) in c for c in commands)
    monkeypatch.chdir(REPO)  # from the repo root, the console script is the repo's own
    exe = Path(sys.executable).with_name("benchforge")
    if exe.exists() and exe.is_relative_to(REPO):
        state = run_streamvibe(["--raw-dir", str(tmp_path / "raw"), "--out", str(tmp_path / "o2"),
                                "--no-review-media"])
        first = json.loads((state / "status.json").read_text())["next"][0]
        assert first.startswith(f"{exe.relative_to(REPO).as_posix()} review server start --data-dir ")
