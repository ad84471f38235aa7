#!/usr/bin/env python
"""The sha256 of every file of the three demo releases, built from scratch.

A refactoring that claims to preserve behaviour must give the same bytes; this is how that is
checked. It builds, in a temporary folder, the ProactiveBench demo release (both splits, as ``make
build-proactivebench`` does), the ProReady-QA demo release (scripted demo decisions and
corrections) and the StreamVibe demo release (scripted approvals of every candidate), and lists
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))

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


def make_corpora(raw: Path) -> None:
    """The three demo corpora under ``raw`` (as ``make demo-corpus`` and the video targets)."""
    import make_demo_corpus
    import make_proready_demo
    import make_streamvibe_demo

    with contextlib.redirect_stdout(io.StringIO()):
        make_demo_corpus.main(["--out", str(raw)])
        make_proready_demo.make_corpus(raw)
        make_streamvibe_demo.build(REPO / ".cache" / "demo-media" / "video", raw / "streamvibe")


def build_releases(raw: Path, out: Path, work: Path) -> dict[str, Path]:
    """Build the three demo releases from the corpora in ``raw`` into ``out`` (the scripted
    demo decisions go to ``work``); the release folder of each benchmark."""
    import make_proready_demo
    import make_streamvibe_demo

    from pipelines.proactivebench.build import run as run_proactivebench
    from pipelines.proready.build import run as run_proready
    from pipelines.streamvibe.build import run as run_streamvibe

    with contextlib.redirect_stdout(io.StringIO()):
        pb = run_proactivebench(["--raw-dir", str(raw), "--out", str(out), "--split", "train"])

        review = run_proready(["--raw-dir", str(raw), "--out", str(out)])
        decisions, corrections = make_proready_demo.make_decisions(review, work / "pr-review")
        pr = run_proready(["--raw-dir", str(raw), "--out", str(out), "--decisions", str(decisions),
                           "--corrections", str(corrections)])

        pending = run_streamvibe(["--raw-dir", str(raw), "--out", str(out)])
        log = work / "sv-decisions.demo.jsonl"
        rows = make_streamvibe_demo.decisions(pending / "review_candidates.jsonl")
        log.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
        sv = run_streamvibe(["--raw-dir", str(raw), "--out", str(out), "--decisions", str(log)])
    return {"proactivebench": pb, "proready": pr, "streamvibe": sv}


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
