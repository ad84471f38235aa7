"""Replicate a ProactiveBench source corpus N times, in the seven native layouts, for scale runs.

Why: the demo corpus (36 items, ``make build-proactivebench``) is too small to show how a build
grows — memory, time per episode, release size — towards the paper's ~18K samples. This tool
writes a corpus in which every item of every dataset appears N times, each time under a new,
unique id, in exactly the layouts the readers read (docs/sources.md), so the real readers and
the real pipeline run on it unchanged. Media are hard-linked (``os.link``; a plain copy only
where the file system refuses a link), so 100× costs almost no disk.

    .venv/bin/python benchmarks/replicate_corpus.py --src demo_corpus --out /tmp/corpus-10x --factor 10
    .venv/bin/python benchmarks/replicate_corpus.py --out /tmp/corpus-paper --paper --verify load
    .venv/bin/python benchmarks/replicate_corpus.py --out /tmp/c --factor 3 --dataset-factor coco=7
    .venv/bin/python benchmarks/replicate_corpus.py --out /tmp/c --factor 10 --unique-bytes

Copy 0 of every item is the original, unchanged; copies k = 1..N-1 get (per dataset, checked
against each reader's duplicate rule, so nothing is rejected as a duplicate):

- ``coco``: image id ``id + k·S`` and annotation id ``id + k·S'`` (S, S' = max id + 1, so
  copies never collide), ``file_name`` ``<stem>_r<k>.<ext>`` hard-linked next to the original
  in ``<split>/``; every ``annotations/instances_*.json`` is rewritten. The crop direction and
  steps are drawn from the new ``source_id``, so copies are different episodes, as real images
  would be.
- ``quickdraw``: one more ndjson line per drawing and copy, ``key_id`` = original + ``k`` as
  five digits (unique within the file, as the reader requires).
- ``imagenet_c``: ``<stem>_r<k>.<ext>`` next to every file in a ``n<8 digits>`` class folder (all
  five severities of a corruption, or the clean image), hard-linked.
- ``rod``, ``vsod``, ``mvpn``, ``changeit``: one more ``manifest.jsonl`` line per item and copy,
  ``id`` = ``<id>-r<k>``, its ``frames`` / ``video`` pointing at hard-linked copies under
  ``replicas/r<k>/<original path>`` (the sequence-manifest layout only; ChangeIt's public
  release layout is not replicated).

Lines that do not parse, and files the readers do not interpret (``labels.json``,
``synset_mapping.txt``), are carried over verbatim, so a bad input stays bad N times.

**Identical bytes.** Hard-linked copies embed byte-identical frames, and the release's Parquet
dictionary-encodes the frame column, so it stores each distinct frame once: the data of a 10×
release of ROD / VSOD / MVP-N / ImageNet-C / ChangeIt / QuickDraw is barely larger than 1×
(COCO copies draw new crops). ``--unique-bytes`` writes every JPEG/PNG copy that the readers
embed untouched (ImageNet-C files, manifest frames) with a comment naming the copy — same
pixels, different bytes, real disk space. Frames the readers re-encode (video frames, strokes,
COCO crops whose draw repeats) stay identical either way.

**Per-class caps.** QuickDraw keeps ``per_class`` drawings per class (10) and ImageNet-C
``per_class`` images (5); the demo has 2 and 1 per class, so from 6× on (12 > 10, 6 > 5) the
caps would hide copies. ``replication.json`` (written next to the datasets) records
``reader_per_class`` = factor × the largest per-class count the source lists; pass it as
``per_class`` in the build config (``benchmarks/scale_proactivebench.py`` does) so every copy
is an input.

**--paper** picks per-dataset factors so the corpus approximates the full, unfiltered
ProactiveBench (§3.3: "The final benchmark counts 7,557 samples from the original size of
17,909"; abstract: "more than 108k images grouped into 18k samples"). Per dataset:

    dataset     target  where the target comes from                                demo  factor
    quickdraw    3,450  paper App. 0.A.5: "10 samples per class, resulting in 3450"    8     431
    imagenet_c   4,856  paper App. 0.A.8: "IN-C decreases from 4,856 to 1,095"         5     971
    coco         4,857  authors' FILTER["coco2014"]: ids 0..4856                       5     971
    mvpn         4,199  authors' FILTER["MVP-N"]: ids up to 4198                       5     840
    changeit     1,117  authors' FILTER["ChangeIt"]: ids 0..1116                      4     279
    vsod           200  authors' FILTER["OcclusionDataSet-MM20"]: ids up to 199        4      50
    rod             88  authors' FILTER["Realistic-Occlusion-Dataset"]: ids 0..87      5      18

The paper's text gives no per-dataset size for ROD, VSOD, MVP-N, ChangeIt and COCO (its Fig. 10
is an image), so those targets are the id ranges of the kept-id lists in the authors' package
(``proactivebench`` 0.1.1, ``data_utils.FILTER``; the ids index the rows of
``<Dataset>_preprocessed.jsonl``, so max id + 1 is a lower bound of each unfiltered size; their
kept counts, 88 / 42 / 2,591 / 396 / 1,240, fit). ImageNet-C uses the size that entered the
filter (4,856), not the 5,000 subsampled in App. 0.A.4. Factor = round(target / demo items).
Total: 18,764 samples (17,909 in the paper, +4.8 %). The image count follows from the
builder's frames per item (COCO grid layouts have (K+1)² crops, ChangeIt ~20 frames), not from
the paper's 108K.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
import shutil
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pipelines.common.sources import Filtered, ItemRef, ReaderConfig, SourceReader  # noqa: E402
from pipelines.proactivebench.sources import READERS  # noqa: E402

ENVIRONMENTS = ("changeit", "coco", "imagenet_c", "mvpn", "quickdraw", "rod", "vsod")
DEMO_COUNTS = {"changeit": 4, "coco": 5, "imagenet_c": 5, "mvpn": 5, "quickdraw": 8, "rod": 5,
               "vsod": 4}
# Unfiltered samples per dataset (see the module docstring for where each number comes from).
PAPER_TARGETS = {"quickdraw": 3450, "imagenet_c": 4856, "coco": 4857, "mvpn": 4199,
                 "changeit": 1117, "vsod": 200, "rod": 88}
PAPER_TOTAL = 17909
PER_CLASS_ENVS = ("quickdraw", "imagenet_c")  # readers that cap items per class
DEFAULT_CONFIG = ROOT / "configs" / "proactivebench.yaml"
MARKER = "replication.json"
MANIFEST = "manifest.jsonl"
MAX_FACTOR = 100_000  # QuickDraw key suffix has five digits
WNID = re.compile(r"^n\d{8}$")


# -- factors --------------------------------------------------------------------------------------
def paper_factors(demo_counts: dict[str, int] = DEMO_COUNTS) -> dict[str, int]:
    """Per-dataset factors that bring ``demo_counts`` closest to the paper-size targets."""
    return {env: max(1, round(PAPER_TARGETS[env] / demo_counts[env])) for env in ENVIRONMENTS}


def parse_factors(factor: int, overrides: Iterable[str], paper: bool) -> dict[str, int]:
    """``--factor`` for every dataset, the ``--paper`` preset, then ``env=N`` overrides."""
    factors = paper_factors() if paper else dict.fromkeys(ENVIRONMENTS, factor)
    for item in overrides:
        env, _, value = item.partition("=")
        if env not in ENVIRONMENTS or not value.isdigit():
            raise SystemExit(f"--dataset-factor {item!r}: expected <env>=<N>, env in {ENVIRONMENTS}")
        factors[env] = int(value)
    bad = {e: f for e, f in factors.items() if not 1 <= f < MAX_FACTOR}
    if bad:
        raise SystemExit(f"factors must be in 1..{MAX_FACTOR - 1}: {bad}")
    return factors


# -- linking ----------------------------------------------------------------------------------------
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_IHDR_END = 8 + 4 + 4 + 13 + 4  # signature, then IHDR: length, type, 13 data bytes, CRC


def tagged_image(data: bytes, tag: bytes) -> bytes | None:
    """The same image with ``tag`` in a comment (JPEG COM segment after SOI, PNG tEXt chunk after
    IHDR): identical pixels, different bytes. ``None`` for any other format."""
    if data.startswith(b"\xff\xd8"):
        return data[:2] + b"\xff\xfe" + (len(tag) + 2).to_bytes(2, "big") + tag + data[2:]
    if data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR":
        body = b"tEXt" + b"Comment\0" + tag
        chunk = (len(body) - 4).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
        return data[:PNG_IHDR_END] + chunk + data[PNG_IHDR_END:]
    return None


@dataclass
class Linker:
    """Places files by hard link (copy only where linking fails) and counts what it did.

    With ``unique_bytes``, a JPEG/PNG copy that the readers embed untouched is written with a
    comment naming its copy instead: Parquet dictionary-encodes the frame column, so byte-identical
    copies are stored once and a hard-linked 100× release weighs little more than 1× — unlike a
    real corpus. Costs the disk space of real copies."""

    unique_bytes: bool = False
    links: int = 0
    copies: int = 0
    tagged: int = 0

    def place(self, src: Path, dst: Path, copy: int = 0) -> None:
        """Put ``src`` at ``dst``; ``copy`` (k ≥ 1) tags the bytes when ``unique_bytes``."""
        dst.parent.mkdir(parents=True, exist_ok=True)
        if self.unique_bytes and copy:
            data = tagged_image(src.read_bytes(), f"benchforge replica {copy}".encode())
            if data is not None:
                dst.write_bytes(data)
                self.tagged += 1
                return
        try:
            os.link(src, dst)
            self.links += 1
        except OSError:  # another file system, no hard links, link limit reached
            shutil.copyfile(src, dst)
            self.copies += 1


def link_tree(src: Path, dst: Path, linker: Linker, skip: Callable[[Path], bool]) -> None:
    """Link every file of ``src`` into ``dst`` (same relative paths) unless ``skip(rel)``."""
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_file() and not skip(rel):
            linker.place(path, dst / rel)


def replica_name(name: str, k: int) -> str:
    """``a/b/x.jpg`` → ``a/b/x_r0003.jpg``: a new file name in the same folder."""
    head, tail = posixpath.split(name)
    stem, ext = posixpath.splitext(tail)
    return posixpath.join(head, f"{stem}_r{k:04d}{ext}")


def replica_path(rel: str, k: int) -> str | None:
    """Where copy ``k`` of a manifest frame/video lives; ``None`` for a path the reader rejects
    anyway (absolute or escaping the root), which the copy then keeps unchanged."""
    if not isinstance(rel, str) or not rel:
        return None
    norm = posixpath.normpath(rel)
    if norm.startswith(("/", "../")) or norm == ".." or "://" in rel:
        return None
    return f"replicas/r{k:04d}/{norm}"


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def write_lines(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


def require_fresh(originals: list[Any], new: list[Any], copies: int, where: str) -> None:
    """The ids of copies 1..N-1 must differ from every original id and from each other (one
    distinct new id per distinct original and copy); a source that already repeats an id keeps
    repeating it in each copy, so the reader rejects it N times, as it rejects it once here."""
    originals = [i for i in originals if i is not None]  # None: a line the reader rejects anyway
    new = [i for i in new if i is not None]
    clash = sorted(set(originals) & set(new), key=str)
    if clash or len(set(new)) != copies * len(set(originals)):
        raise ValueError(f"{where}: replicated ids collide with others: {clash[:5] or 'among copies'}")


# -- per-dataset replicators ---------------------------------------------------------------------------
def replicate_coco(src: Path, dst: Path, n: int, linker: Linker) -> None:
    """New image/annotation ids and hard-linked image files per copy, in every instances file."""
    ann_files = sorted((src / "annotations").glob("instances_*.json"))
    link_tree(src, dst, linker, skip=lambda rel: src / rel in ann_files)
    for ann_file in ann_files:
        split = ann_file.stem[len("instances_"):]
        data = json.loads(ann_file.read_text(encoding="utf-8"))
        images, anns = list(data["images"]), list(data["annotations"])
        img_stride, ann_stride = _stride(images, "images"), _stride(anns, "annotations")
        for k in range(1, n):
            for img in images:
                copy = {**img, "id": img["id"] + k * img_stride}
                if isinstance(img.get("file_name"), str):
                    copy["file_name"] = replica_name(img["file_name"], k)
                    original = src / split / img["file_name"]
                    if original.is_file():  # a missing image stays missing: BadInput N times
                        linker.place(original, dst / split / copy["file_name"])
                data["images"].append(copy)
            for ann in anns:
                copy = {**ann, "id": ann["id"] + k * ann_stride}
                if isinstance(ann.get("image_id"), int):
                    copy["image_id"] = ann["image_id"] + k * img_stride
                data["annotations"].append(copy)
        names = [img.get("file_name") for img in data["images"]]
        require_fresh(names[: len(images)], names[len(images):], n - 1, f"{ann_file.name} file_name")
        out = dst / "annotations" / ann_file.name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, ensure_ascii=False) + "\n", encoding="utf-8")


def _stride(records: list[dict[str, Any]], key: str) -> int:
    """Offset between copies: larger than every id, so copy k's ids never meet copy j's."""
    ids = [r.get("id") for r in records]
    if any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in ids):
        raise ValueError(f"coco {key}: ids must be non-negative integers to be replicated")
    return max(ids, default=0) + 1


def replicate_quickdraw(src: Path, dst: Path, n: int, linker: Linker) -> None:
    """Each class file gets N-1 more copies of every line, with new ``key_id``s."""
    class_files = sorted(src.glob("*.ndjson"))
    link_tree(src, dst, linker, skip=lambda rel: src / rel in class_files)
    for class_file in class_files:
        lines = [line for line in read_lines(class_file) if line.strip()]
        out = list(lines)
        for k in range(1, n):
            out.extend(_quickdraw_copy(line, k) for line in lines)
        keys = [_key_id(line) for line in out]
        require_fresh(keys[: len(lines)], keys[len(lines):], n - 1, class_file.name)
        write_lines(dst / class_file.name, out)


def _quickdraw_copy(line: str, k: int) -> str:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return line
    if not isinstance(rec, dict) or not isinstance(rec.get("key_id"), str | int) \
            or isinstance(rec.get("key_id"), bool):
        return line
    key = f"{rec['key_id']}{k:05d}"
    rec["key_id"] = key if isinstance(rec["key_id"], str) else int(key)
    return json.dumps(rec, ensure_ascii=False)


def _key_id(line: str) -> str | None:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return None
    return str(rec["key_id"]) if isinstance(rec, dict) and "key_id" in rec else None


def replicate_imagenet_c(src: Path, dst: Path, n: int, linker: Linker) -> None:
    """Every file in a class folder (native ``<c>/<s>/<wnid>/`` or clean ``<wnid>/``) gets N-1
    hard-linked siblings with new names, so each severity set stays complete."""
    link_tree(src, dst, linker, skip=lambda rel: False)
    for path in sorted(src.rglob("*")):
        if not (path.is_file() and WNID.match(path.parent.name)):
            continue
        rel = path.relative_to(src).as_posix()
        for k in range(1, n):
            target = dst / replica_name(rel, k)
            if target.exists():
                raise ValueError(f"imagenet_c: {replica_name(rel, k)} already exists in the source")
            linker.place(path, target, copy=k)


def replicate_manifest(src: Path, dst: Path, n: int, linker: Linker) -> None:
    """N-1 more manifest lines per item, ids ``<id>-r<k>``, media under ``replicas/r<k>/``."""
    manifest = src / MANIFEST
    if not manifest.is_file():
        raise ValueError(f"{src}: no {MANIFEST} — only the sequence-manifest layout is replicated")
    link_tree(src, dst, linker, skip=lambda rel: rel.as_posix() == MANIFEST)
    lines = [line for line in read_lines(manifest) if line.strip()]
    out = list(lines)
    for k in range(1, n):
        for line in lines:
            rec = _manifest_record(line)
            if rec is None:
                out.append(line)
                continue
            rec["id"] = f"{rec['id']}-r{k:04d}"
            for key in ("frames", "video"):
                if key in rec:
                    rec[key] = _relink_media(rec[key], k, src, dst, linker)
            out.append(json.dumps(rec, ensure_ascii=False))
    ids = [str(r["id"]) if (r := _manifest_record(line)) else None for line in out]
    require_fresh(ids[: len(lines)], ids[len(lines):], n - 1, str(manifest))
    write_lines(dst / MANIFEST, out)


def _manifest_record(line: str) -> dict[str, Any] | None:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError:
        return None
    ok = isinstance(rec, dict) and isinstance(rec.get("id"), str | int) \
        and not isinstance(rec.get("id"), bool)
    return rec if ok else None


def _relink_media(value: Any, k: int, src: Path, dst: Path, linker: Linker) -> Any:
    """Point a ``frames`` list or ``video`` path at copy ``k``'s hard links (made here)."""
    if isinstance(value, list):
        return [_relink_media(v, k, src, dst, linker) for v in value]
    new = replica_path(value, k)
    if new is None:
        return value
    original = src / posixpath.normpath(value)
    if original.is_file() and not (dst / new).exists():  # a shared frame is linked once
        linker.place(original, dst / new, copy=k)
    return new


REPLICATORS: dict[str, Callable[[Path, Path, int, Linker], None]] = {
    "coco": replicate_coco,
    "quickdraw": replicate_quickdraw,
    "imagenet_c": replicate_imagenet_c,
    "rod": replicate_manifest,
    "vsod": replicate_manifest,
    "mvpn": replicate_manifest,
    "changeit": replicate_manifest,
}


# -- readers ------------------------------------------------------------------------------------------
def build_config(path: Path = DEFAULT_CONFIG) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def make_reader(env: str, root: Path, cfg: dict[str, Any], per_class: int | None = None
                ) -> SourceReader:
    """The reader the build would use for ``env`` (config ``per_class`` and extras), optionally
    with ``per_class`` raised."""
    spec = dict(cfg.get("environments", {}).get(env) or {})
    spec.pop("path", None)
    configured = spec.pop("per_class", None)
    config = ReaderConfig(per_class=per_class or configured,
                          global_seed=int(cfg.get("global_seed", 0)), extra=spec)
    return READERS[env](str(root), config)


def env_dir(root: Path, env: str, cfg: dict[str, Any]) -> Path:
    spec = cfg.get("environments", {}).get(env) or {}
    return root / spec.get("path", env)


@dataclass
class Listing:
    """What a reader's ``enumerate()`` yields for one dataset."""

    refs: list[ItemRef] = field(default_factory=list)
    rejections: list[Any] = field(default_factory=list)
    filtered: list[Filtered] = field(default_factory=list)  # by design (multi-object images, …)

    def per_class(self) -> int:
        counts = Counter(ref.payload.get("category", "") for ref in self.refs)
        return max(counts.values(), default=0)


def listing(reader: SourceReader) -> Listing:
    out = Listing()
    for item in reader.enumerate():
        if isinstance(item, Filtered):
            out.filtered.append(item)
        else:
            (out.refs if isinstance(item, ItemRef) else out.rejections).append(item)
    return out


def reader_per_class(src: Path, factors: dict[str, int], cfg: dict[str, Any]) -> dict[str, int]:
    """``per_class`` the readers need so every copy is listed: factor × the source's largest
    listed class, never below the configured value."""
    out = {}
    for env in PER_CLASS_ENVS:
        configured = (cfg.get("environments", {}).get(env) or {}).get("per_class") or 0
        largest = listing(make_reader(env, env_dir(src, env, cfg), cfg)).per_class()
        out[env] = max(int(configured), factors[env] * largest)
    return out


# -- corpus ------------------------------------------------------------------------------------------
def replicate(src: Path, out: Path, factors: dict[str, int], *, config: Path = DEFAULT_CONFIG,
              unique_bytes: bool = False) -> dict[str, Any]:
    """Write the replicated corpus to ``out`` (built aside, then renamed into place) and return
    the summary also saved as ``out/replication.json``."""
    src, out = src.resolve(), out.resolve()
    if out == src or src in out.parents or out in src.parents:
        raise SystemExit(f"--out {out} must lie outside the source {src}")
    if out.exists() and not (out / MARKER).is_file():
        raise SystemExit(f"{out} exists and is not a replicated corpus (no {MARKER}); not replacing it")
    cfg = build_config(config)
    partial = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    linker = Linker(unique_bytes=unique_bytes)
    try:
        for env in ENVIRONMENTS:
            REPLICATORS[env](env_dir(src, env, cfg), env_dir(partial, env, cfg), factors[env], linker)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)  # never leave half a corpus behind
        raise
    summary = {
        "source": str(src),
        "factors": dict(sorted(factors.items())),
        "reader_per_class": reader_per_class(src, factors, cfg),
        "hard_links": linker.links,
        "copies": linker.copies,
        "unique_bytes": unique_bytes,
        "tagged_copies": linker.tagged,
    }
    (partial / MARKER).write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    if out.exists():
        shutil.rmtree(out)
    partial.rename(out)
    return summary


@dataclass
class Check:
    """Reader view of one replicated dataset against the source."""

    env: str
    source_items: int
    factor: int
    listed: int
    rejected: list[str]
    load_failures: list[str]

    @property
    def expected(self) -> int:
        return self.source_items * self.factor

    @property
    def ok(self) -> bool:
        return self.listed == self.expected and not self.rejected and not self.load_failures


def verify(src: Path, out: Path, *, load: bool = False, config: Path = DEFAULT_CONFIG
           ) -> list[Check]:
    """Enumerate source and copy with the real readers (and ``load()`` every copy if asked):
    every replicated item must be listed, none rejected, counts exactly factor × source."""
    cfg = build_config(config)
    summary = json.loads((out / MARKER).read_text())
    checks = []
    for env in ENVIRONMENTS:
        source = listing(make_reader(env, env_dir(src, env, cfg), cfg))
        reader = make_reader(env, env_dir(out, env, cfg), cfg,
                             summary["reader_per_class"].get(env))
        copy = listing(reader)
        failures = []
        for ref in copy.refs if load else []:
            try:
                reader.load(ref)
            except Exception as exc:  # noqa: BLE001 - report every failure, not the first
                failures.append(f"{ref.source_id}: {type(exc).__name__}: {exc}")
        checks.append(Check(env, len(source.refs), summary["factors"][env], len(copy.refs),
                            [_describe(r) for r in copy.rejections], failures))
    return checks


def _describe(rejection: Any) -> str:
    parts = [getattr(rejection, k, "") for k in ("item_id", "source_file", "field", "reason")]
    return " | ".join(str(p) for p in parts if p) or repr(rejection)


def print_checks(checks: list[Check]) -> None:
    print(f"{'environment':<12}{'source':>8}{'factor':>8}{'expected':>10}{'listed':>8}"
          f"{'rejected':>10}{'load errors':>13}")
    for c in checks:
        print(f"{c.env:<12}{c.source_items:>8}{c.factor:>8}{c.expected:>10}{c.listed:>8}"
              f"{len(c.rejected):>10}{len(c.load_failures):>13}")
        for line in (c.rejected + c.load_failures)[:5]:
            print(f"    {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=ROOT / "demo_corpus")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--factor", type=int, default=1, help="copies of every item (1 = as is)")
    parser.add_argument("--dataset-factor", action="append", default=[], metavar="ENV=N",
                        help="per-dataset factor, e.g. coco=20 (repeatable; overrides --factor/--paper)")
    parser.add_argument("--paper", action="store_true",
                        help="per-dataset factors approximating the full ProactiveBench (~18K samples)")
    parser.add_argument("--config", type=Path, default=DEFAULT_CONFIG,
                        help="build config whose per_class/extras the readers use")
    parser.add_argument("--unique-bytes", action="store_true",
                        help="write JPEG/PNG copies with a comment instead of hard links, so no two "
                             "copies are byte-identical (Parquet would store them once)")
    parser.add_argument("--verify", choices=("none", "list", "load"), default="list",
                        help="read the copy back: enumerate() only, or also load() every item")
    args = parser.parse_args(argv)
    factors = parse_factors(args.factor, args.dataset_factor, args.paper)
    summary = replicate(args.src, args.out, factors, config=args.config,
                        unique_bytes=args.unique_bytes)
    print(f"replicated {args.src} → {args.out}: factors {summary['factors']}, "
          f"{summary['hard_links']} hard links, {summary['copies']} copies, "
          f"{summary['tagged_copies']} tagged copies; build with "
          f"per_class {summary['reader_per_class']}", file=sys.stderr)
    if args.verify == "none":
        return 0
    checks = verify(args.src, args.out, load=args.verify == "load", config=args.config)
    print_checks(checks)
    return 0 if all(c.ok for c in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
