"""Replaying an export in the authors' own classes under Python 3.12 (``--verify``, the py312 tests).

Why: ``convert.py`` models what the official classes do; only running the real ``environment.py``
proves the model right. The classes need Python 3.12, benchforge runs on 3.11, so the replay is a
separate program (``official_runner.py``, standard library only) that this module copies next to
the official sources and runs with a 3.12 interpreter; its JSON answer is checked here against
the release, state by state.
"""

from __future__ import annotations

import glob
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from pipelines.proactivebench.compat.convert import (
    JPEG_TOLERANCE,
    OFFICIAL_PACKAGE,
    image_ext,
    iter_episodes,
    shortest_path,
)
from pipelines.proactivebench.compat.write import load_compat_records
from schemas.proactivebench import OFFICIAL_DATASET_NAMES

# The program the 3.12 interpreter runs; read from here at run time, never imported by benchforge.
RUNNER = Path(__file__).with_name("official_runner.py")


def find_python312() -> str | None:
    """A Python 3.12 interpreter: ``$PROACTIVEBENCH_PYTHON``, ``python3.12``, or pyenv 3.12.x."""
    candidates = [os.environ.get("PROACTIVEBENCH_PYTHON", ""), shutil.which("python3.12") or ""]
    pyenv_root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(os.path.join(pyenv_root, "versions", "3.12*", "bin",
                                                "python3.12")), reverse=True)
    for exe in candidates:
        if not exe:
            continue
        try:
            out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2])"],
                                 capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            continue
        if out.returncode == 0 and out.stdout.strip() == "(3, 12)":
            return exe
    return None


def find_official_source(download: bool = True) -> Path | None:
    """Directory holding the official ``environment.py`` (+ ``data_utils.py``).

    ``$PROACTIVEBENCH_SRC``, a cached wheel under ``~/.cache/benchforge``, else ``pip download
    --no-deps --ignore-requires-python`` (the package declares Python ≥ 3.12; we only read two
    stdlib-only files from it).
    """
    cache = Path(os.path.expanduser("~/.cache/benchforge/proactivebench-0.1.1"))
    for cand in (os.environ.get("PROACTIVEBENCH_SRC"), str(cache / "proactivebench")):
        if cand and (Path(cand) / "environment.py").is_file():
            return Path(cand)
    if not download:
        return None
    cache.mkdir(parents=True, exist_ok=True)
    try:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps",
                        "--ignore-requires-python", "-q", "-d", str(cache), OFFICIAL_PACKAGE],
                       check=True, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    wheels = sorted(cache.glob("proactivebench-*.whl"))
    if not wheels:
        return None
    with zipfile.ZipFile(wheels[-1]) as zf:
        for name in ("proactivebench/environment.py", "proactivebench/data_utils.py"):
            zf.extract(name, cache)
    return cache / "proactivebench"


def run_official(data_dir: str | os.PathLike[str], jobs: dict[str, dict[str, dict[str, list[str]]]],
                 *, python: str | None = None, source: Path | None = None,
                 timeout: float = 300) -> dict[str, Any]:
    """Run the authors' environment classes on an export with scripted answers.

    ``jobs[dataset][policy][id]`` is the list of answers fed turn by turn. Returns, per id, the
    trace of states (image path, whether it exists, options, prompt, the MCQA prompt
    ``apply_multi_choice_template`` builds, the COCO crop box), ``correct`` and ``turns``.
    """
    python = python or find_python312()
    source = source or find_official_source()
    if python is None or source is None:
        raise RuntimeError("need Python 3.12 and the official proactivebench sources")
    with tempfile.TemporaryDirectory() as work:
        for name in ("environment.py", "data_utils.py"):
            shutil.copy(source / name, Path(work) / name)
        shutil.copy(RUNNER, Path(work) / "runner.py")
        (Path(work) / "jobs.json").write_text(json.dumps(jobs))
        proc = subprocess.run(
            [python, "runner.py", work, os.fspath(Path(data_dir).resolve()), "jobs.json",
             "out.json"], cwd=work, capture_output=True, text=True, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"official runner failed:\n{proc.stderr[-4000:]}")
        return json.loads((Path(work) / "out.json").read_text())


def policy_scripts(row: dict[str, Any]) -> dict[str, list[str]]:
    """Scripted answers for one episode: ``oracle`` (shortest path + correct category) and
    ``abstain`` (the abstain option at once)."""
    path = shortest_path(row) or []
    scripts = {"oracle": [row["options"][i] for i in path] + [row["answer"]]}
    abstain = [t for t, k in zip(row["options"], row["option_kinds"], strict=True) if k == "abstain"]
    if abstain:
        scripts["abstain"] = [abstain[0]]
    return scripts


def _frame_matches(row: dict[str, Any], frame: int, data_dir: Path, step: dict[str, Any]) -> bool:
    """Does the official state show our frame (same bytes, or same pixels after the crop)?"""
    from PIL import Image, ImageChops, ImageStat

    ours = row["frames"][frame]["bytes"]
    path = data_dir / step["image_path"]
    if step["box"] is None:
        return path.read_bytes() == ours
    shown = Image.open(path).convert("RGB").crop(tuple(round(x) for x in step["box"]))
    img = Image.open(io.BytesIO(ours)).convert("RGB")
    if shown.size != img.size:
        return False
    err = max(ImageStat.Stat(ImageChops.difference(shown, img)).mean)
    return err <= (JPEG_TOLERANCE if image_ext(ours) == "jpg" else 0.0)


def official_check(release_dir: str | os.PathLike[str], out_dir: str | os.PathLike[str],
                   **kwargs: Any) -> tuple[dict[str, int], list[str]]:
    """Replay every exported episode in the official classes; return (counts, problems).

    Checks: the oracle succeeds in exactly ``len(path) + 1`` turns and every state it visits
    shows our frame; always-abstain fails in one turn; the first state's options, categories and
    MCQA prompt equal ours, and so does the class's hint; every image path the class opens
    exists; the reference setting shows our reference frame (COCO: see the module doc).
    """
    out = Path(out_dir)
    rows: dict[str, dict[str, Any]] = {}
    jobs: dict[str, dict[str, dict[str, list[str]]]] = {}
    for dataset in OFFICIAL_DATASET_NAMES.values():
        if not (out / f"{dataset}_preprocessed.jsonl").exists():
            continue
        for rec in load_compat_records(out, dataset):
            rows[rec["id"]] = {}
            jobs.setdefault(dataset, {})
    for row in iter_episodes(release_dir):
        if row["id"] in rows:
            rows[row["id"]] = row
            for policy, answers in policy_scripts(row).items():
                jobs[OFFICIAL_DATASET_NAMES[row["environment"]]].setdefault(policy, {})[
                    row["id"]] = answers
    results = run_official(out, jobs, **kwargs)
    problems: list[str] = []
    counts = {"oracle_ok": 0, "abstain_ok": 0, "episodes": len(rows)}
    for policies in results.values():
        for policy, per_id in policies.items():
            for sid, res in per_id.items():
                row = rows[sid]
                where = f"{sid} [{policy}]"
                if res["error"]:
                    problems.append(f"{where}: {res['error']}")
                    continue
                missing = [s["image_path"] for s in res["trace"] + [res["reference"]]
                           if not s["exists"]]
                if missing:
                    problems.append(f"{where}: missing images {missing}")
                first = res["trace"][0]
                start = row["states"][row["start_state"]]
                want = [row["options"][i] for i in start["option_ids"]] + list(row["categories"])
                if first["options"] != want:
                    problems.append(f"{where}: first options {first['options']} != ours {want}")
                if first["mcqa"] != row["first_turn_prompt"]:
                    problems.append(f"{where}: first MCQA prompt differs from ours")
                if res["hint"] != row["hint"]:
                    problems.append(f"{where}: official hint {res['hint']!r} != ours")
                ref = res["reference"]
                if row["environment"] != "coco" and ref["exists"] and \
                        (out / ref["image_path"]).read_bytes() != \
                        row["frames"][row["reference_frame"]]["bytes"]:
                    problems.append(f"{where}: reference image is not our reference frame")
                if policy == "oracle":
                    path = shortest_path(row) or []
                    if not res["correct"] or res["turns"] != len(path) + 1:
                        problems.append(f"{where}: correct={res['correct']} turns={res['turns']}"
                                        f" (expected success in {len(path) + 1})")
                        continue
                    state = row["start_state"]
                    visited = [state]
                    for opt in path:
                        st = row["states"][state]
                        state = st["next_states"][st["option_ids"].index(opt)]
                        visited.append(state)
                    bad = [k for k, (s, step) in enumerate(zip(visited, res["trace"], strict=True))
                           if not _frame_matches(row, row["states"][s]["frame"], out, step)]
                    if bad:
                        problems.append(f"{where}: turns {bad} show a different image than ours")
                    else:
                        counts["oracle_ok"] += 1
                elif policy == "abstain":
                    if res["correct"] or res["turns"] != 1:
                        problems.append(f"{where}: abstain scored correct={res['correct']} "
                                        f"turns={res['turns']}")
                    else:
                        counts["abstain_ok"] += 1
    return counts, problems
