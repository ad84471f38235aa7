"""Every Beam DoFn that holds a model client persists buffered answers in ``teardown``.

The batch flush already keeps what ``ask_many`` received; the teardown is the second line for
anything still buffered when a worker stops. Here an answer is left in each DoFn's cache buffer
(as an interrupted batch would leave it) and the runner's lifecycle is completed with
``teardown()``: the row must be on disk, readable by any other process.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
import yaml

from clients import ModelSpec, Request, ResponseCache, response_key
from clients.cache import FILENAME

ROOT = Path(__file__).resolve().parents[2]
MODEL = {"backend": "gemini", "model": "g", "base_url": "http://127.0.0.1:9"}


def rows_on_disk(cache_dir: Path) -> int:
    with closing(sqlite3.connect(cache_dir / FILENAME)) as con:
        return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])


def leave_buffered(cache_dir: Path) -> None:
    ident = ModelSpec("gemini", "g").identity()
    req = Request.of("r", "a question")
    ResponseCache.open(str(cache_dir)).put(response_key(ident, req), ident, req, "an answer")


def streamvibe(tmp_path: Path, cache: Path):
    from pipelines.streamvibe.gemini import gemini_settings
    from pipelines.streamvibe.pipeline import GenerateCandidates, PipelineConfig

    settings = gemini_settings({"models": {"cache_dir": str(cache), "generator": MODEL}}, "t.yaml", ROOT)
    return GenerateCandidates(PipelineConfig(
        root=str(tmp_path), manifest="m.jsonl", staging=str(tmp_path / "s"), split="test", seed=0,
        intents_path=str(ROOT / "configs/streamvibe/intents.yaml"), generator="gemini", gemini=settings))


def proready(tmp_path: Path, cache: Path):
    from pipelines.proready.generation import GenerationConfig, load_prompts
    from pipelines.proready.models import model_settings
    from pipelines.proready.pipeline import BuildCandidates

    models = model_settings({"cache_dir": str(cache), "vlm": MODEL}, "t.yaml", ROOT)
    return BuildCandidates(GenerationConfig(evidence="vlm_framewise", models=models, prompts=load_prompts()))


def proactivebench(tmp_path: Path, cache: Path):
    from pipelines.proactivebench.pipeline import LeakFilterDoFn

    path = tmp_path / "probes.yaml"
    path.write_text(yaml.safe_dump({"leak_filter": {"unresolved_policy": "reject", "progress": False},
                                    "models": {"cache_dir": str(cache)}, "probes": [MODEL]}))
    return LeakFilterDoFn(str(path), run_id="t")


@pytest.mark.parametrize("make", [streamvibe, proready, proactivebench])
def test_teardown_persists_buffered_answers(make, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    dofn = make(tmp_path, cache)
    dofn.setup()
    leave_buffered(cache)
    assert rows_on_disk(cache) == 0
    dofn.teardown()
    assert rows_on_disk(cache) == 1
