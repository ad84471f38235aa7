"""Fixtures for the filtering tests: a tiny registered open_clip config, hand-made episodes with
real PNG frames, and the local OpenAI + Gemini protocol server."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.support.protocol_server import ProtocolServer

TINY_CLIP = "bf-tiny-clip"
TINY_CLIP_CFG = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


@pytest.fixture(scope="session")
def tiny_clip(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Register a tiny open_clip architecture (fast on CPU) and return its name."""
    import open_clip

    d = tmp_path_factory.mktemp("clipcfg")
    (d / f"{TINY_CLIP}.json").write_text(json.dumps(TINY_CLIP_CFG))
    open_clip.add_model_config(d)
    assert TINY_CLIP in open_clip.list_models()
    return TINY_CLIP


def png(color: tuple[int, int, int], size: int = 24) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (size, size), color).save(buf, format="PNG")
    return buf.getvalue()


def make_episode(
    sample: str,
    answer: str = "cat",
    categories: tuple[str, ...] = ("dog", "cat", "hot dog", "toaster"),
    environment: str = "coco",
    void_start: bool = False,
    color: tuple[int, int, int] | None = None,
) -> dict[str, Any]:
    """A schema-shaped ProactiveBench episode whose first state shows frame 1 and options 2, 0."""
    seed = sum(map(ord, sample))
    color = color or (seed % 256, (seed * 7) % 256, (seed * 13) % 256)
    frames = [{"bytes": png((0, 0, 0)), "path": "f0.png"}, {"bytes": png(color), "path": "f1.png"}]
    options = ["Move the camera left.", "Move the camera up.", "I cannot answer."]
    shown = [options[2], options[0]]
    letters = shown + list(categories)
    prompt = (
        f"[{sample}] What is in this image? Choose from the following options. Options: "
        + " ".join(f"{chr(65 + i)}. {o}" for i, o in enumerate(letters))
        + " Please only return one of the options without any other words."
    )
    return {
        "id": f"{environment}/{sample}",
        "environment": environment,
        "source_dataset": "coco2014",
        "source_id": sample,
        "frames": frames,
        "frame_sources": ["a", "b"],
        "question": "What is in this image?",
        "hint": "Hint: moving the camera could help with classification",
        "options": options,
        "option_kinds": ["proactive", "proactive", "abstain"],
        "option_actions": ["left", "up", ""],
        "categories": list(categories),
        "answer": answer,
        "negatives": [],
        "negative_strategy": "clip_text",
        "states": [
            {"frame": 0, "option_ids": [0], "next_states": [1]},
            {"frame": 1, "option_ids": [2, 0], "next_states": [-1, 0]},
        ],
        "start_state": 1,
        "goal_states": [0],
        "void_states": [1] if void_start else [],
        "reference_frame": 0,
        "max_steps": 3,
        "first_turn_prompt": prompt,
        "oeg_selected": False,
        "oeg_valid_suggestions": [],
        "probe_results": [],
        "source_metadata": "{}",
    }


def letter_of(episode: dict[str, Any], text: str) -> str:
    """The letter of an option/category in the episode's first-state order."""
    state = episode["states"][episode["start_state"]]
    order = [episode["options"][i] for i in state["option_ids"]] + episode["categories"]
    return chr(65 + order.index(text))


@pytest.fixture
def episodes() -> list[dict[str, Any]]:
    return [make_episode(f"s{i}") for i in range(6)]


@pytest.fixture
def server() -> Iterator[ProtocolServer]:
    with ProtocolServer() as s:
        yield s


@pytest.fixture
def config_for(tmp_path: Path, server: ProtocolServer) -> Callable[..., dict[str, Any]]:
    """Build a leak-filter config dict pointing both real clients at the local server."""

    def build(probes: list[dict[str, Any]] | None = None, **leak: Any) -> dict[str, Any]:
        if probes is None:
            probes = [
                {"backend": "openai", "model": "oa-1", "base_url": server.openai_base_url},
                {"backend": "gemini", "model": "gm-1", "base_url": server.base_url},
            ]
        lf = {"threshold": 0.25, "unresolved_policy": "reject", "progress": False}
        lf.update(leak)
        return {
            "leak_filter": lf,
            "models": {
                "cache_dir": str(tmp_path / "c"),
                "retry": {"max_attempts": 4, "base_delay_s": 0.01, "max_delay_s": 0.05},
                "limits": {
                    "openai": {"concurrency": 4, "timeout_s": 1.0},
                    "gemini": {"concurrency": 4, "timeout_s": 1.0},
                },
            },
            "probes": probes,
        }

    return build
