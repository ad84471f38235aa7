"""Build-level fuzz: the real ``benchforge build`` on a demo corpus with one file changed.

The reader-level fuzz (``test_reader_fuzz.py``) runs each reader as a build does; this runs the
build itself, for what only a whole build shows: a Beam worker that dies on an element, a
source that vanishes between the driver's preflight and the pipeline, counts that stop adding
up in the manifest. What must hold: no Python traceback, and the command ends with exit status 0
— then every group of the release's ``manifest.json`` (or of the pending-review ``status.json``)
has ``inputs = kept + filtered + rejected (+ pending)`` and no rejection names a host folder — or
it stops with one line naming what it could not use (``error: source coco cannot be read:
annotations/instances_val2014.json (under …): …``, a source that yields nothing named by its
root).

``BENCHFORGE_FUZZ_CASES=N`` runs ``max(2, N // 15)`` builds per benchmark (default 2: about a
minute and a half for the six); each is named ``<benchmark>-<seed>``.
"""

from __future__ import annotations

import json
import os
import posixpath
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.fuzz.conftest import baseline, pools
from tests.fuzz.readers import SUBJECTS, Outcome
from tests.support import fuzz

REPO = Path(__file__).resolve().parents[2]
BUILDS = max(2, int(os.environ.get("BENCHFORGE_FUZZ_CASES", 30)) // 15)
BUILD_SECONDS = 600
ENVIRONMENTS = ("coco", "quickdraw", "imagenet_c", "rod", "vsod", "mvpn", "changeit")
CASES = [(bench, seed) for bench in ("proactivebench", "streamvibe", "proready") for seed in range(BUILDS)]


def build(bench: str, raw: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``benchforge build`` as a user runs it, in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "pipelines.cli", "build", bench, "--raw-dir", str(raw), "--out",
         str(out), *extra],
        capture_output=True, text=True, cwd=REPO, timeout=BUILD_SECONDS,
        env={"PYTHONPATH": str(REPO), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
             "HOME": os.environ.get("HOME", "/root")})


def counts_of(out: Path, bench: str) -> tuple[dict[str, dict[str, int]], Path]:
    """The per-group counts of what the build wrote: the release's manifest, or the
    pending-review state's status."""
    found = sorted(out.glob(f"{bench}/*/manifest.json")) + sorted(
        out.glob(f"{bench}/review/*/status.json"))
    assert len(found) == 1, f"one release or pending state expected, found {found}"
    return json.loads(found[0].read_text())["counts"], found[0].parent


@pytest.mark.parametrize(("bench", "seed"), CASES, ids=[f"{b}-{s}" for b, s in CASES])
def test_a_build_on_a_changed_corpus_ends_cleanly(bench: str, seed: int, fuzz_corpora: Path,
                                                  baselines: dict[str, Outcome], tmp_path: Path) -> None:
    rng = random.Random(f"build:{bench}:{seed}")
    name = rng.choice(ENVIRONMENTS) if bench == "proactivebench" else bench
    subject = SUBJECTS[name]
    base = baseline(name, fuzz_corpora, baselines, tmp_path / "baseline")
    raw = tmp_path / "raw"
    root = raw / subject.folder
    shutil.copytree(fuzz_corpora / subject.folder, root, symlinks=True)
    mutation = fuzz.mutate(root, f"build:{bench}:{seed}", pools(name, root, base))
    extra = ("--only", name) if bench == "proactivebench" else ()
    proc = build(bench, raw, tmp_path / "out", *extra)
    what = f"{bench}-{seed} ({name}): {mutation}\nstderr:\n{proc.stderr[-3000:]}"
    last = (proc.stderr.strip().splitlines() or [""])[-1]
    print(f"{bench}-{seed} ({name}): {mutation} -> exit {proc.returncode}"
          + (f": {last}" if proc.returncode else ""))
    assert "Traceback (most recent call last)" not in proc.stderr, what
    if proc.returncode != 0:
        # a stop: one line naming the file it could not read, or the root that yields nothing
        assert posixpath.basename(mutation.path) in last or (
            "yields no sample" in last and f"/{subject.folder} " in last), what
        return
    counts, written = counts_of(tmp_path / "out", bench)
    for group, c in counts.items():
        assert c["inputs"] == c["kept"] + c["filtered"] + c["rejected"] + c.get("pending", 0), \
            f"{what}\n{group}: {c}"
    for path in sorted(written.rglob("*.parquet")):
        if path.parent.name == "rejected" or "rejected" in path.parts:
            for row in pq.read_table(path).to_pylist():
                text = json.dumps(row)
                assert "pytest-of-" not in text and str(tmp_path) not in text, f"{what}\n{row}"
