#!/usr/bin/env python
"""The sha256 of every file of the three demo releases, built from scratch.

A refactoring that claims to preserve behaviour must give the same bytes; this is how that is
checked. It builds, in a temporary folder, every benchmark's demo release as the ``Demo`` of its
folder's ``demo.py`` says — the ProactiveBench demo release (both splits, as ``make
build-proactivebench`` does), the ProReady-QA demo release (scripted demo decisions and
corrections) and the StreamVibe demo release (scripted approvals of every candidate) — and lists
``benchmark/relative path → sha256``.

Text files are hashed after one normalisation, because they legitimately differ between two
checkouts: the ``code_version`` (git commit of the code) becomes ``<code_version>``, and the
release date (the commit date of the code, as the demo configs set no ``release_date:``) in
the manifest's ``release`` entry and in ``croissant.json`` (``datePublished``) becomes
``<date>``. No path is normalised: a release names no folder it was built in or read from. The
manifest lists the raw sha256 and size of every file, so for the text files among them (card,
reports) those two values become ``<text>``: each of those files is fingerprinted itself,
normalised; likewise the sha256 of the manifest and the card in ``croissant.json``. Nothing
else is normalised.

    .venv/bin/python scripts/demo_fingerprint.py                 # print the fingerprint
    .venv/bin/python scripts/demo_fingerprint.py --check FILE    # compare, list what differs
    .venv/bin/python scripts/demo_fingerprint.py --write FILE    # record a deliberate change
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

if TYPE_CHECKING:
    from pipelines.common.benchmark import Demo

TEXT = {".md", ".json", ".jsonl", ".txt", ".csv", ".html", ".yaml"}
# as the manifest and the card print it: "code_version": "…" / code version: `…`
CODE_VERSION = re.compile(r'("code_version": "|code version: `)[^"`]*')


def normalized(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix not in TEXT:
        return data
    text = data.decode("utf-8")
    if path.name == "manifest.json":
        manifest = json.loads(text)
        for f in manifest.get("files", []):
            if Path(f["path"]).suffix in TEXT:
                f.update(sha256="<text>", bytes="<text>")
        if manifest.get("release", {}).get("date"):
            manifest["release"]["date"] = "<date>"
        text = json.dumps(manifest, indent=2, sort_keys=True) + "\n"
    if path.name == "croissant.json":  # it records the manifest's and the card's raw sha256
        meta = json.loads(text)
        for f in meta.get("distribution", []):
            if Path(str(f.get("contentUrl", ""))).suffix in TEXT:
                f["sha256"] = "<text>"
        meta["identifier"] = re.sub(r"sha256:\w+", "sha256:<text>", str(meta.get("identifier", "")))
        if "datePublished" in meta:
            meta["datePublished"] = "<date>"
        text = json.dumps(meta, indent=1, ensure_ascii=False) + "\n"
    return CODE_VERSION.sub(r"\1<code_version>", text).encode("utf-8")


def fingerprint(release: Path) -> dict[str, str]:
    return {p.relative_to(release).as_posix(): hashlib.sha256(normalized(p)).hexdigest()
            for p in sorted(release.rglob("*")) if p.is_file()}


def demos() -> dict[str, Demo]:
    """Every benchmark's demo (:class:`pipelines.common.benchmark.Demo`), found by the registry;
    SystemExit naming a benchmark that declares none (no release of it would be fingerprinted)."""
    from pipelines.registry import BENCHMARKS, benchmark

    found = {name: getattr(benchmark(name), "demo", None) for name in BENCHMARKS}
    missing = sorted(name for name, demo in found.items() if demo is None)
    if missing:
        raise SystemExit(f"no demo declared by {missing}: set `demo` on the Benchmark "
                         "(pipelines/<benchmark>/demo.py)")
    return {name: demo for name, demo in found.items() if demo is not None}


def make_corpora(raw: Path) -> None:
    """Every benchmark's demo corpus under ``raw`` (as ``make demo-corpus`` and the video
    targets)."""
    with contextlib.redirect_stdout(io.StringIO()):
        for demo in demos().values():
            demo.corpus(raw)


def build_release(name: str, raw: Path, out: Path, work: Path, extra: tuple[str, ...] = ()) -> Path:
    """Build ``name``'s demo release from the corpus in ``raw`` into ``out`` with ``extra`` build
    arguments (e.g. ``--direct_num_workers=2``): a reviewed benchmark stops at its pending-review
    state, then is built again with the scripted panel's decisions (written to ``work/<name>``).
    The release folder."""
    from pipelines.common.driver import run
    from pipelines.registry import benchmark

    bench = benchmark(name)
    demo = demos()[name]
    args = ["--raw-dir", str(raw), "--out", str(out), *demo.build_args, *extra]
    with contextlib.redirect_stdout(io.StringIO()):
        result = run(bench, args)
        if bench.reviewed:
            if demo.decisions is None:
                raise SystemExit(f"{name} is reviewed, but its demo gives no decisions")
            result = run(bench, [*args, *demo.decisions(result, work / name)])
    return result


def build_releases(raw: Path, out: Path, work: Path) -> dict[str, Path]:
    """Build every demo release from the corpora in ``raw`` into ``out`` (the scripted demo
    decisions go to ``work``); the release folder of each benchmark."""
    return {name: build_release(name, raw, out, work) for name in demos()}


def build_all(tmp: Path) -> dict[str, dict[str, str]]:
    make_corpora(tmp / "raw")
    releases = build_releases(tmp / "raw", tmp / "out", tmp)
    return {bench: fingerprint(release) for bench, release in releases.items()}


def differences(expected: dict[str, dict[str, str]], actual: dict[str, dict[str, str]]) -> list[str]:
    out = []
    for bench in sorted(set(expected) | set(actual)):
        exp, act = expected.get(bench, {}), actual.get(bench, {})
        for rel in sorted(set(exp) | set(act)):
            if rel not in act:
                out.append(f"{bench}/{rel}: missing")
            elif rel not in exp:
                out.append(f"{bench}/{rel}: new file")
            elif exp[rel] != act[rel]:
                out.append(f"{bench}/{rel}: different bytes")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = ap.add_mutually_exclusive_group()
    group.add_argument("--check", type=Path, help="compare with a recorded fingerprint")
    group.add_argument("--write", type=Path, help="record the fingerprint")
    ap.add_argument("--keep", type=Path, help="build in this (new) folder and keep the releases")
    args = ap.parse_args(argv)
    if args.keep:
        args.keep.mkdir(parents=True)
        actual = build_all(args.keep.resolve())
    else:
        with tempfile.TemporaryDirectory(prefix="benchforge-fingerprint-") as tmp:
            actual = build_all(Path(tmp).resolve())
    text = json.dumps(actual, indent=1, sort_keys=True) + "\n"
    if args.write:
        args.write.write_text(text)
        print(f"wrote {args.write}: {sum(len(v) for v in actual.values())} files", file=sys.stderr)
        return 0
    if args.check:
        diff = differences(json.loads(args.check.read_text()), actual)
        print("\n".join(diff) if diff else "same bytes", file=sys.stderr)
        return 1 if diff else 0
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
