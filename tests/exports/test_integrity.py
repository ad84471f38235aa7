"""The gate sees the bytes: files against the manifest, every embedded image and medium decoded.

Why: ``benchforge check`` passed a release whose frame JPEG bytes had been replaced with garbage
(PASSED 25/25): the expectations check values, never bytes, and nothing compared the files with
the manifest's sha256. Each case here is a release made in the test and broken on purpose.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from PIL import Image

from exports.croissant import croissant_text
from exports.integrity import decode_media, verify_files
from exports.release import ReleaseInventory
from pipelines.cli import main as benchforge
from tests.pipelines.proactivebench.fixtures import all_environment_episodes, write_release
from tests.support.demo import DemoReleases


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return write_release(tmp_path / "out" / "1.0.0", all_environment_episodes())


def garble_frame(release: Path, env: str = "quickdraw", frame: int = 1) -> tuple[Path, str]:
    """Replace one embedded frame's bytes with garbage, keeping the file a valid Parquet file
    with the same schema; returns the file and the row id."""
    path = next((release / "data" / env).glob("*.parquet"))
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["frames"][frame]["bytes"] = b"\xff\xd8\xff\xe0 garbage, not a JPEG " * 20
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), path)
    return path, rows[0]["id"]


def update_manifest(release: Path) -> None:
    """As if the build itself had embedded the garbage: the manifest matches the bad bytes."""
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"] = ReleaseInventory(release).files
    (release / "manifest.json").write_text(json.dumps(manifest))


def check(release: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = benchforge(["check", str(release)])
    return code, capsys.readouterr().out


def test_a_good_release_decodes_every_frame(release: Path, capsys) -> None:
    listed = json.loads((release / "manifest.json").read_text())["files"]
    assert verify_files(release, listed) == []
    media = decode_media(release, listed)
    n_frames = sum(len(r["frames"]) for f in listed for r in pq.read_table(release / f["path"]).to_pylist())
    assert media.problems == [] and media.decoded == n_frames > 9 and media.proven == 0
    code, out = check(release, capsys)
    assert code == 0 and f"{media.decoded} images / media decoded" in out


def frame_digests(release: Path) -> list[str]:
    return [hashlib.sha256(f["bytes"]).hexdigest() for p in sorted(release.rglob("*.parquet"))
            for r in pq.read_table(p).to_pylist() for f in r["frames"]]


def test_proven_bytes_are_not_decoded_again_but_other_bytes_are(release: Path) -> None:
    """A proof covers bytes, not a place: a truncated JPEG written where a proven frame was is
    decoded in full (its header still reads, its scan data fails), and a proven frame under a
    name of another format still fails its header check."""
    proven = frozenset(frame_digests(release))
    media = decode_media(release, ReleaseInventory(release).files, proven=proven)
    assert media.problems == [] and media.proven == media.decoded == len(proven) > 9
    coco = next((release / "data" / "coco").glob("*.parquet"))
    table = pq.read_table(coco)
    rows = table.to_pylist()
    whole = rows[0]["frames"][0]["bytes"]
    rows[0]["frames"][0]["bytes"] = truncated = whole[: len(whole) // 2]
    Image.open(io.BytesIO(truncated))  # the header still reads: only a full decode fails
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), coco)
    rod = next((release / "data" / "rod").glob("*.parquet"))
    table = pq.read_table(rod)
    rows = table.to_pylist()
    rows[0]["frames"][0]["path"] = rows[0]["frames"][0]["path"].replace(".png", ".jpg")  # PNG bytes
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), rod)
    listed = ReleaseInventory(release).files
    media = decode_media(release, listed, proven=proven)
    found = sorted((p.path.split("/")[1], p.detail) for p in media.problems)
    assert [env for env, _ in found] == ["coco", "rod"]
    assert "frames[0]: cannot decode image: " in found[0][1] and "truncated" in found[0][1]
    assert "the content is PNG, but the extension .jpg names JPEG" in found[1][1]
    assert media.proven == media.decoded == len(proven) - 2
    # what spared the decode is the proof alone: listed as proven, the same bytes pass
    spared = decode_media(release, listed, proven=proven | {hashlib.sha256(truncated).hexdigest()})
    assert [p.path.split("/")[1] for p in spared.problems] == ["rod"]


def test_recurring_bytes_are_decoded_once_and_counted_and_reported_at_each_place(
        release: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A video benchmark embeds a video's frames in every sample of it: the gate decodes each
    distinct bytes once (under one extension) yet counts every occurrence, reports a bad frame
    wherever it recurs, and still fails good bytes under a name of another format."""
    import exports.integrity as integrity

    coco = next((release / "data" / "coco").glob("*.parquet"))
    table = pq.read_table(coco)
    rows = table.to_pylist()
    garbage = b"\xff\xd8\xff\xe0 garbage, not a JPEG " * 20
    rows[0]["frames"][1]["bytes"] = rows[-1]["frames"][0]["bytes"] = garbage
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), coco)
    rod = next((release / "data" / "rod").glob("*.parquet"))
    table = pq.read_table(rod)
    rows = table.to_pylist()
    first = rows[0]["frames"][0]
    rows[0]["frames"][1] = {"bytes": first["bytes"], "path": first["path"].replace(".png", ".jpg")}
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), rod)
    listed = ReleaseInventory(release).files
    images = [(f["path"], f) for p in sorted(release.rglob("*.parquet"))
              for r in pq.read_table(p).to_pylist() if "frames" in r for f in r["frames"]]
    distinct = {(hashlib.sha256(f["bytes"]).digest(), Path(f["path"]).suffix) for _, f in images}
    assert len(distinct) == len(images) - 1  # the garbage recurs; the renamed copy is distinct
    calls = []
    real = integrity.verify_image
    monkeypatch.setattr(integrity, "verify_image", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    for threads in (1, 3):
        calls.clear()
        media = decode_media(release, listed, threads=threads)
        assert len(calls) == len(distinct) or threads > 1  # threads may race to the same bytes
        assert media.decoded == len(images) - 3
        found = sorted((p.path.split("/")[1], p.detail.split(": ")[0]) for p in media.problems)
        assert [env for env, _ in found] == ["coco", "coco", "rod"]
        assert found[0][1] != found[1][1]  # each occurrence named by its own row


def test_garbage_frame_bytes_fail_the_sha256_check(release: Path, capsys) -> None:
    path, _ = garble_frame(release)
    code, out = check(release, capsys)
    rel = path.relative_to(release).as_posix()
    assert code == 1
    assert f"FAIL file {rel} [sha256]: sha256 " in out and f"FAIL file {rel} [bytes]" in out


def test_garbage_frame_bytes_fail_decoding_even_with_a_matching_manifest(release: Path, capsys) -> None:
    path, row = garble_frame(release)
    update_manifest(release)
    code, out = check(release, capsys)
    rel = path.relative_to(release).as_posix()
    assert code == 1
    assert f"FAIL file {rel} [decode]: row {row!r}: frames[1]: cannot decode image" in out
    md = (release.parent / "checks" / "1.0.0" / "data_quality.md").read_text()
    assert md.startswith("# Data quality: FAILED") and "| **decode** |" in md


def test_decoding_with_threads_reports_the_same_problems_in_the_same_order(release: Path) -> None:
    """The gate decodes with the build's worker count; its findings must not depend on it."""
    for env in ("rod", "coco"):
        garble_frame(release, env)
    listed = ReleaseInventory(release).files
    one = decode_media(release, listed, threads=1)
    assert len(one.problems) == 2 and one.decoded > 9
    assert decode_media(release, listed, threads=3) == one


def test_the_whole_gate_with_threads_gives_the_same_report(release: Path, tmp_path: Path) -> None:
    """With threads the expectations and the byte check run beside the media check; the report
    (findings and their order, expectations, counts) must be the one a single thread writes,
    and suites that cannot read the release are still a finding, not a crash."""
    import great_expectations.expectations as gxe
    import pandas as pd

    from exports.quality import Suite, check_release

    for env in ("rod", "coco"):
        garble_frame(release, env)
    listed = json.loads((release / "manifest.json").read_text())["files"]  # now wrong for two

    def suites() -> list[Suite]:
        frame = pd.DataFrame({"id": ["a", "b", "b"]})
        return [Suite("ids", frame, [gxe.ExpectColumnValuesToBeUnique(column="id")])]

    def broken() -> list[Suite]:
        raise OSError("the release cannot be read")

    for build in (suites, broken):
        reports = [check_release(release, listed, build, tmp_path / f"r{n}", label=release, threads=n)
                   for n in (1, 2)]
        one, two = ([(p.check, p.path, p.detail) for p in r.problems] for r in reports)
        assert one == two and [c for c, _, _ in one].count("decode") == 2
        assert [c for c, _, _ in one].count("sha256") == 2
        assert reports[0].checks == reports[1].checks and reports[0].rows == reports[1].rows
        assert (reports[0].media_decoded, reports[0].media_proven) == (reports[1].media_decoded, 0)
        assert (tmp_path / "r1" / "data_quality.md").read_text().replace("r1", "") == \
            (tmp_path / "r2" / "data_quality.md").read_text().replace("r2", "")
        if build is broken:
            assert one[-1][0] == "expectations" and "OSError: the release cannot be read" in one[-1][2]
        else:
            assert [(c.success, c.unexpected_count) for c in reports[0].checks] == [(False, 2)]


def test_frame_bytes_of_another_format_than_their_name_fail(release: Path, capsys) -> None:
    path = next((release / "data" / "rod").glob("*.parquet"))
    table = pq.read_table(path)
    rows = table.to_pylist()
    rows[0]["frames"][0]["path"] = rows[0]["frames"][0]["path"].replace(".png", ".jpg")  # PNG bytes
    pq.write_table(type(table).from_pylist(rows, schema=table.schema), path)
    update_manifest(release)
    code, out = check(release, capsys)
    assert code == 1 and "the content is PNG, but the extension .jpg names JPEG" in out


def test_files_missing_added_or_with_other_row_counts_fail(release: Path) -> None:
    manifest = json.loads((release / "manifest.json").read_text())
    listed = manifest["files"]
    (release / "reports").mkdir()
    (release / "reports" / "later.md").write_text("written into the release after the build")
    gone = listed[0]["path"]
    (release / gone).unlink()
    rows_entry = next(f for f in listed[1:] if "rows" in f)
    rows_entry["rows"] += 1
    problems = {(p.check, p.path) for p in verify_files(release, listed)}
    assert problems == {("listed", "reports/later.md"), ("missing", gone), ("rows", rows_entry["path"])}


def test_a_broken_image_file_in_the_release_fails(release: Path) -> None:
    (release / "reports").mkdir()
    (release / "reports" / "counts.png").write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    listed = ReleaseInventory(release).files
    problems = decode_media(release, listed).problems
    assert [(p.check, p.path) for p in problems] == [("decode", "reports/counts.png")]


def test_unreadable_parquet_is_a_finding_not_a_crash(release: Path, capsys) -> None:
    path = next((release / "data" / "coco").glob("*.parquet"))
    path.write_bytes(b"PAR1 not really")
    manifest = json.loads((release / "manifest.json").read_text())
    rel = path.relative_to(release).as_posix()
    entry = next(f for f in manifest["files"] if f["path"] == rel)
    entry.update(bytes=path.stat().st_size, sha256=hashlib.sha256(path.read_bytes()).hexdigest())
    (release / "manifest.json").write_text(json.dumps(manifest))
    code, out = check(release, capsys)
    assert code == 1
    assert f"FAIL file {rel} [rows]: unreadable Parquet" in out and f"FAIL file {rel} [decode]" in out


def test_reports_are_never_written_into_a_published_release(release: Path, capsys) -> None:
    assert benchforge(["check", str(release), "--reports", str(release / "reports")]) == 2
    assert "inside the release" in capsys.readouterr().err
    assert not (release / "reports").exists()


def test_croissant_metadata_must_describe_the_manifest(release: Path) -> None:
    """croissant.json records the manifest's sha256, so the manifest cannot list it: the gate
    checks it against the manifest instead (a changed manifest is caught)."""
    from exports.croissant import write_croissant

    (release / "README.md").write_text("---\nconfigs: []\n---\n# a card\n")
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["files"] = listed = ReleaseInventory(release).files
    (release / "manifest.json").write_text(json.dumps(manifest))
    write_croissant(release, release)
    assert verify_files(release, listed) == []  # derived from the manifest: not "added after"
    manifest = json.loads((release / "manifest.json").read_text())
    manifest["version"] = "1.0.1"  # edited after the metadata was written
    (release / "manifest.json").write_text(json.dumps(manifest))
    problems = verify_files(release, listed)
    assert [(p.check, p.path) for p in problems] == [("croissant", "croissant.json")]
    assert 'at $.version: "1.0.0", the release gives "1.0.1"' in problems[0].detail


# -- croissant.json, derived again: each edit -> (the file's new text, what the problem says) ----


def _edited(edit: Callable[[dict], str]) -> Callable[[str], tuple[str, str]]:
    """An edit of the parsed document, written back as the build writes it (so the edit is the
    only difference); ``edit`` returns the part of the problem that names it."""
    def apply(text: str) -> tuple[str, str]:
        meta = json.loads(text)
        named = edit(meta)
        return croissant_text(meta), named
    return apply


def _parquet_object(meta: dict) -> tuple[int, dict]:
    return next((i, d) for i, d in enumerate(meta["distribution"])
                if d["encodingFormat"] == "application/x-parquet" and d["@type"] == "cr:FileObject")


def _retype_a_field(meta: dict) -> str:
    fields = meta["recordSet"][0]["field"]
    i, field = next((i, f) for i, f in enumerate(fields) if f.get("dataType") == "sc:Text")
    field["dataType"] = "sc:Integer"
    return f'$.recordSet[0].field[{i}].dataType: "sc:Integer", the release gives "sc:Text"'


def _move_a_content_url(meta: dict) -> str:
    i, obj = _parquet_object(meta)
    obj["contentUrl"] = "data/elsewhere.parquet"
    return f'$.distribution[{i}].contentUrl: "data/elsewhere.parquet", the release gives "{obj["@id"]}"'


def _change_a_sha256(meta: dict) -> str:
    i, obj = _parquet_object(meta)
    obj["sha256"] = "0" * 64
    return f"$.distribution[{i}].sha256: "


def _remove_a_file_object(meta: dict) -> str:
    i, obj = _parquet_object(meta)
    del meta["distribution"][i]
    return f'$.distribution: no entry with @id "{obj["@id"]}", which the release gives'


def _add_a_file_object(meta: dict) -> str:
    meta["distribution"].append({"@type": "cr:FileObject", "@id": "extra.parquet", "name": "extra.parquet",
                                 "contentUrl": "extra.parquet", "encodingFormat": "application/x-parquet",
                                 "sha256": "0" * 64})
    return '$.distribution: an entry with @id "extra.parquet", which the release does not give'


def _change_the_date(meta: dict) -> str:
    meta["datePublished"] = "2020-01-01"
    return '$.datePublished: "2020-01-01", the release gives'


CROISSANT_EDITS: dict[str, Callable[[str], tuple[str, str]]] = {
    "record set field": _edited(_retype_a_field),
    "contentUrl": _edited(_move_a_content_url),
    "sha256": _edited(_change_a_sha256),
    "removed file object": _edited(_remove_a_file_object),
    "added file object": _edited(_add_a_file_object),
    "datePublished": _edited(_change_the_date),
    "invalid JSON": lambda text: (text[: len(text) // 2], "not valid JSON: "),
    "reformatted": lambda text: (json.dumps(json.loads(text), indent=2),
                                 "not in the bytes the build writes"),
}


@pytest.mark.parametrize("edit", list(CROISSANT_EDITS))
def test_an_edited_croissant_fails_the_gate_naming_what_differs(edit: str, demo_releases: DemoReleases,
                                                                 tmp_path: Path) -> None:
    """croissant.json is a function of the manifest, the card and the Parquet schemas, so the
    gate derives it again: every edit fails, named by its first differing JSON path (only the
    sha256 it records for the manifest was checked, so all of these passed)."""
    release = tmp_path / "2.0.0"
    shutil.copytree(demo_releases.paths["proready"], release)
    listed = json.loads((release / "manifest.json").read_text())["files"]
    assert verify_files(release, listed) == []
    path = release / "croissant.json"
    text, named = CROISSANT_EDITS[edit](path.read_text(encoding="utf-8"))
    path.write_text(text, encoding="utf-8")
    problems = verify_files(release, listed)
    assert [(p.check, p.path) for p in problems] == [("croissant", "croissant.json")]
    assert named in problems[0].detail, problems[0].detail


def test_a_deleted_croissant_fails_a_finished_release_but_not_a_staged_one(
        demo_releases: DemoReleases, tmp_path: Path) -> None:
    """The manifest cannot list croissant.json (it hashes the manifest), so a deleted one passed:
    a manifest that records the build gate's verdict is a finished release, which has one. The
    build's own gate runs before the file is written (no verdict yet) and must not ask for it."""
    release = tmp_path / "2.0.0"
    shutil.copytree(demo_releases.paths["proready"], release)
    (release / "croissant.json").unlink()
    manifest = json.loads((release / "manifest.json").read_text())
    problems = verify_files(release, manifest["files"])
    assert [(p.check, p.path) for p in problems] == [("missing", "croissant.json")]
    del manifest["quality"]
    (release / "manifest.json").write_text(json.dumps(manifest))
    assert [p for p in verify_files(release, manifest["files"]) if p.path == "croissant.json"] == []


def test_benchforge_check_passes_the_demo_releases_and_fails_an_edited_croissant(
        demo_releases: DemoReleases, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for bench, release in demo_releases.paths.items():
        assert verify_files(release, json.loads((release / "manifest.json").read_text())["files"]) == []
        assert benchforge(["check", str(release), "--reports", str(tmp_path / bench)]) == 0, bench
    capsys.readouterr()
    copy = tmp_path / "copy" / "2.0.0"
    shutil.copytree(demo_releases.paths["proready"], copy)
    text, named = CROISSANT_EDITS["record set field"]((copy / "croissant.json").read_text())
    (copy / "croissant.json").write_text(text)
    code, out = check(copy, capsys)
    assert code == 1
    assert ("FAIL file croissant.json [croissant]: differs from the metadata the manifest, card and "
            f"Parquet schemas give at {named}") in out
