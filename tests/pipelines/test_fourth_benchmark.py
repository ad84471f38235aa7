"""The proof that a benchmark is one folder and one schema file: WordQA
(``tests/fixtures/fourth_benchmark``: ``pipelines/wordqa/`` and ``schemas/wordqa.py``, nothing
else) is found through ``BENCHFORGE_EXTENSIONS``, builds with ``benchforge build`` as a user types
it, and passes the conformance test every benchmark folder passes — balance, a byte-identical
rebuild with two worker processes (which import it the same way: they inherit the
environment), the gate, ``datasets``, its citation and its exports — with no file of the
repository edited.

Why a fixture outside the repository rather than a fourth folder in ``pipelines/``: it shows
that nothing outside the folder lists a benchmark — no registry line, no CLI branch, no test
naming it — which a folder inside the repository could not show.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "fourth_benchmark"

CONFORMANCE = """
import sys
from pathlib import Path

sys.path.insert(0, "scripts")
import demo_fingerprint
from pipelines.registry import BENCHMARKS, benchmark
from tests.pipelines.test_conformance import test_the_demo_release_conforms
from tests.support.demo import DemoReleases

tmp = Path(sys.argv[1])
assert "wordqa" in BENCHMARKS, BENCHMARKS
raw = tmp / "raw"
benchmark("wordqa").demo.corpus(raw)
release = demo_fingerprint.build_release("wordqa", raw, tmp / "out", tmp / "work")
(tmp / "conform").mkdir()
test_the_demo_release_conforms("wordqa", DemoReleases({}, {"wordqa": release}, raw),
                               demo_fingerprint, tmp / "conform")
print("conforms", release)
"""


def extension(tmp_path: Path) -> dict[str, str]:
    root = tmp_path / "ext"
    shutil.copytree(FIXTURE, root, ignore=shutil.ignore_patterns("__pycache__"))
    return {**os.environ, "BENCHFORGE_EXTENSIONS": str(root)}


def test_the_fixture_is_one_folder_and_one_schema_file() -> None:
    files = sorted(p.relative_to(FIXTURE).as_posix() for p in FIXTURE.rglob("*")
                   if p.is_file() and "__pycache__" not in p.parts)
    assert {f.split("/")[1] if f.startswith("pipelines/") else f for f in files} == {
        "wordqa", "schemas/wordqa.py"}


def test_a_fourth_benchmark_builds_and_passes_the_conformance_test(tmp_path: Path) -> None:
    env = extension(tmp_path)
    done = subprocess.run([sys.executable, "-c", CONFORMANCE, str(tmp_path / "conformance")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-4000:]
    assert done.stdout.splitlines()[-1].startswith("conforms "), done.stdout[-2000:]

    raw = tmp_path / "conformance" / "raw"
    out = tmp_path / "cli-out"
    cli = [sys.executable, "-m", "pipelines.cli", "build", "wordqa", "--raw-dir", str(raw)]
    built = subprocess.run([*cli, "--out", str(out)], cwd=ROOT, env=env, capture_output=True, text=True,
                           timeout=600)
    assert built.returncode == 0, built.stderr[-4000:]
    manifest = json.loads((out / "wordqa" / "1.0.0" / "manifest.json").read_text())
    assert manifest["counts"] == {"qa": {"inputs": 7, "kept": 4, "filtered": 1, "rejected": 2}}
    import pyarrow.parquet as pq

    rejected = sorted((r["source_file"], r["field"], r["reason"][:22]) for f in sorted(
        (out / "wordqa" / "1.0.0" / "rejected").glob("*.parquet")) for r in pq.read_table(f).to_pylist())
    assert rejected == [("qa.jsonl:6", "id", "repeats the id of line"),
                        ("qa.jsonl:7", "line", "not JSON: Expecting va")]

    # without the extension the repository knows three benchmarks, and says which
    plain = {k: v for k, v in env.items() if k != "BENCHFORGE_EXTENSIONS"}
    unknown = subprocess.run(cli, cwd=ROOT, env=plain, capture_output=True, text=True, timeout=300)
    assert unknown.returncode != 0 and "unknown benchmark 'wordqa'" in unknown.stderr
