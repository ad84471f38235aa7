"""The build with the leak filter and CLIP negatives switched on.

The probe pool is real: the openai SDK and the google-genai SDK talk to a local server speaking
both protocols; the CLIP miner is real open_clip with a tiny registered architecture and random
weights (no checkpoint can be downloaded here), which the release must then say loudly.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.proactivebench.build import run
from tests.support.protocol_server import Call, ProtocolServer, Status

REPO = Path(__file__).resolve().parents[3]
TINY_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("corpus") / "demo"
    subprocess.run([sys.executable, str(REPO / "scripts" / "make_demo_corpus.py"), "--out", str(out),
                    "--no-check"], check=True, capture_output=True)
    return out


def letter(prompt: str, text: str) -> str:
    """The letter the prompt gives ``text`` ('B. cat' -> 'B')."""
    for line in prompt.splitlines():
        if line.endswith(f". {text}") and line[1:3] == ". ":
            return line[0]
    raise AssertionError(f"{text!r} not in prompt")


def test_leak_filter_and_clip_negatives_end_to_end(corpus, tmp_path):
    clip_dir = tmp_path / "clipcfg"
    clip_dir.mkdir()
    (clip_dir / "bf-tiny-clip.json").write_text(json.dumps(TINY_CLIP))
    config = yaml.safe_load((REPO / "configs" / "proactivebench.yaml").read_text())
    config["negatives"]["clip"] = {
        "model": "bf-tiny-clip", "checkpoint": None, "templates": ["a photo of a {}."],
        "random_weights": True, "model_config": str(clip_dir), "cache_dir": str(tmp_path / "emb"),
    }
    config_path = tmp_path / "pb.yaml"
    config_path.write_text(yaml.safe_dump(config))
    only = ["--only", "quickdraw,coco", "--config", str(config_path)]

    # a build without probes tells us each episode's first-turn prompt and answer
    base = run(["--raw-dir", str(corpus), "--out", str(tmp_path / "base"), *only])
    episodes = pd.read_parquet(base / "data", columns=["id", "first_turn_prompt", "answer"])
    leaky = set(sorted(episodes.id)[:3])
    answers = {r.first_turn_prompt: (r.id, r.answer) for r in episodes.itertuples()}

    def answer(call: Call) -> str:
        eid, correct = answers.get(call.prompt, ("?", ""))
        if call.model != "gm-wrong" and eid in leaky:
            return f"{letter(call.prompt, correct)}. {correct}"
        return "I do not know."

    with ProtocolServer(answer) as server:
        server.push(Status(500), Status(429), model="oa-flaky")  # retried, then answers
        probes = tmp_path / "probes.yaml"
        probes.write_text(yaml.safe_dump({
            "leak_filter": {"threshold": 0.25, "min_answering_models": 2, "unresolved_policy": "reject",
                            "progress": False},
            "models": {"cache_dir": str(tmp_path / "probe-cache"),
                       "retry": {"max_attempts": 3, "base_delay_s": 0.01, "max_delay_s": 0.05}},
            "probes": [
                {"backend": "openai", "model": "oa-1", "base_url": server.openai_base_url},
                {"backend": "openai", "model": "oa-flaky", "base_url": server.openai_base_url},
                {"backend": "gemini", "model": "gm-wrong", "base_url": server.base_url},
            ],
        }))
        release = run(["--raw-dir", str(corpus), "--out", str(tmp_path / "out"), *only,
                       "--probes", str(probes)])
        requests = server.count()

    manifest = json.loads((release / "manifest.json").read_text())
    total = len(episodes)
    assert requests == 3 * total + 2  # every episode probed by every model, + the 2 retried faults
    counts, stages = manifest["counts"], manifest["stages"]
    assert sum(s.get("filtered", 0) for s in stages.values()) == 3  # by the leak filter
    # the rest of "filtered" is what the sources' selection rules left out (filtered_inputs/)
    assert sum(c["filtered"] for c in counts.values()) == 3 + sum(
        s.get("listing_filtered", 0) for s in stages.values())
    assert sum(c["kept"] for c in counts.values()) == total - 3
    for c in counts.values():
        assert c["inputs"] == c["kept"] + c["filtered"] + c["rejected"]

    filtered = pd.read_parquet(release / "filtered")
    assert set(filtered.id) == leaky
    evidence = json.loads(filtered.iloc[0].filter_evidence)
    assert evidence["correct"] == 2 and evidence["answering"] == 3
    kept = pq.read_table(release / "data").to_pylist()
    for row in kept:  # the audit trail: every model's raw answer, per sample
        assert sorted(r["model"] for r in row["probe_results"]) == ["gm-wrong", "oa-1", "oa-flaky"]
        assert not any(r["correct"] for r in row["probe_results"])
    assert manifest["leak_filter"]["applied"] is True
    assert (release / "reports" / "leak_filter.md").is_file()

    # CLIP negatives: mined for COCO, with scores, and the random weights are said out loud
    coco = [r for r in kept if r["environment"] == "coco"]
    assert coco and all(r["negative_strategy"] == "clip_text" for r in coco)
    assert all(len(r["negatives"]) == 3 for r in coco)
    assert manifest["negatives"]["clip"]["random_weights"] is True
    assert "RANDOM open_clip weights" in (release / "README.md").read_text()
