"""benchmarks/replicate_corpus.py: a replicated corpus reads back, through the real readers, as
exactly N copies of every demo item under new ids, with nothing rejected.

Why it matters: the scale benchmark divides time and memory by the episode count; a copy that a
reader drops (duplicate id, per-class cap) or rejects would make "10×" silently smaller.
Builds its own demo corpus from the media of ``make setup`` (like test_demo_corpus.py).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.replicate_corpus import (
    DEMO_COUNTS,
    ENVIRONMENTS,
    PAPER_TOTAL,
    build_config,
    env_dir,
    listing,
    make_reader,
    paper_factors,
    parse_factors,
    replicate,
    tagged_image,
    verify,
)
from core.media.images import decode_image, encode_image

REPO = Path(__file__).resolve().parents[2]
EXPECTED_1X = {"changeit": 4, "coco": 5, "imagenet_c": 5, "mvpn": 5, "quickdraw": 8, "rod": 5,
               "vsod": 4}


@pytest.fixture(scope="module")
def demo(demo_media: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "corpus"
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo_corpus.py"),
                           "--out", str(out), "--no-check"], capture_output=True, text=True,
                          cwd=REPO)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def triple(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("x3") / "corpus"
    return out, replicate(demo, out, parse_factors(3, [], False))


def source_ids(root: Path, env: str, per_class: int | None = None) -> list[str]:
    cfg = build_config()
    return [r.source_id for r in listing(make_reader(env, env_dir(root, env, cfg), cfg, per_class)).refs]


def test_factor_3_lists_and_loads_every_copy_and_rejects_nothing(demo: Path, triple) -> None:
    out, _summary = triple
    checks = {c.env: c for c in verify(demo, out, load=True)}
    assert {env: c.source_items for env, c in checks.items()} == EXPECTED_1X
    assert {env: c.listed for env, c in checks.items()} == {e: 3 * n for e, n in EXPECTED_1X.items()}
    assert {env: c.rejected for env, c in checks.items()} == {e: [] for e in ENVIRONMENTS}
    assert {env: c.load_failures for env, c in checks.items()} == {e: [] for e in ENVIRONMENTS}


def test_copies_have_new_unique_ids_and_keep_the_originals(demo: Path, triple) -> None:
    out, summary = triple
    for env in ENVIRONMENTS:
        ids = source_ids(out, env, summary["reader_per_class"].get(env))
        originals = source_ids(demo, env)
        assert len(ids) == len(set(ids)) == 3 * EXPECTED_1X[env], env
        assert set(originals) <= set(ids), env  # copy 0 is the original item, unchanged
    assert "rod" in summary["factors"] and summary["factors"]["rod"] == 3
    assert sorted(source_ids(out, "mvpn"))[:3] == ["apple", "apple-r0001", "apple-r0002"]


def test_media_are_hard_links_not_copies(demo: Path, triple) -> None:
    out, summary = triple
    assert summary["copies"] == 0 and summary["hard_links"] > 0
    original = next((demo / "imagenet_c").rglob("*.JPEG"))
    copy = out / "imagenet_c" / original.relative_to(demo / "imagenet_c").with_name(
        f"{original.stem}_r0002{original.suffix}")
    assert copy.stat().st_ino == original.stat().st_ino
    frame = out / "rod" / "replicas" / "r0001" / "frames" / "apple" / "00.jpg"
    assert frame.stat().st_ino == (demo / "rod" / "frames" / "apple" / "00.jpg").stat().st_ino


def test_replication_is_deterministic(demo: Path, triple, tmp_path: Path) -> None:
    out, _ = triple
    again = tmp_path / "again"
    replicate(demo, again, parse_factors(3, [], False))
    assert _digest(again) == _digest(out)


def test_per_class_caps_are_raised_so_no_copy_is_hidden(demo: Path, tmp_path: Path) -> None:
    # 6x: 12 recognised drawings per QuickDraw class > its cap of 10; 6 images per ImageNet-C
    # class > its cap of 5. The summary names the per_class the build must use.
    out = tmp_path / "x6"
    summary = replicate(demo, out, parse_factors(6, ["coco=2"], False))
    assert summary["reader_per_class"] == {"quickdraw": 12, "imagenet_c": 6}
    checks = {c.env: c for c in verify(demo, out)}
    assert {env: c.listed for env, c in checks.items()} == {
        e: (2 if e == "coco" else 6) * n for e, n in EXPECTED_1X.items()}
    assert all(not c.rejected for c in checks.values())
    assert len(source_ids(out, "quickdraw")) == 4 * 10  # what the default cap would have kept


def test_paper_preset_approximates_the_unfiltered_benchmark() -> None:
    factors = paper_factors()
    assert factors == {"changeit": 279, "coco": 971, "imagenet_c": 971, "mvpn": 840,
                       "quickdraw": 431, "rod": 18, "vsod": 50}
    total = sum(factors[e] * DEMO_COUNTS[e] for e in ENVIRONMENTS)
    assert total == 18764
    assert abs(total - PAPER_TOTAL) / PAPER_TOTAL < 0.05


def test_unique_bytes_copies_differ_in_bytes_not_pixels(demo: Path, tmp_path: Path) -> None:
    # Parquet stores byte-identical frames once; --unique-bytes keeps copies apart.
    out = tmp_path / "unique"
    summary = replicate(demo, out, parse_factors(2, [], False), unique_bytes=True)
    assert summary["tagged_copies"] > 0
    original = demo / "rod" / "frames" / "apple" / "00.jpg"
    copy = out / "rod" / "replicas" / "r0001" / "frames" / "apple" / "00.jpg"
    assert copy.read_bytes() != original.read_bytes()
    assert copy.stat().st_ino != original.stat().st_ino
    pixels = np.asarray(decode_image(original.read_bytes(), "original"))
    assert np.array_equal(np.asarray(decode_image(copy.read_bytes(), "copy")), pixels)
    png = encode_image(decode_image(original.read_bytes(), "original"), "png")
    tagged = tagged_image(png, b"benchforge replica 1")
    assert tagged is not None and tagged != png
    assert np.array_equal(np.asarray(decode_image(tagged, "tagged png")), pixels)
    checks = verify(demo, out, load=True)
    assert {c.env: (c.listed, c.rejected, c.load_failures) for c in checks} == {
        e: (2 * n, [], []) for e, n in EXPECTED_1X.items()}


def test_refuses_to_replace_a_folder_it_did_not_write(demo: Path, tmp_path: Path) -> None:
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "keep.txt").write_text("mine")
    with pytest.raises(SystemExit, match="not a replicated corpus"):
        replicate(demo, precious, parse_factors(2, [], False))
    assert (precious / "keep.txt").read_text() == "mine"


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != "replication.json":
            h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()
