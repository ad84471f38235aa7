"""Hand-made but realistic ProactiveBench episodes and releases for the compat-export and quality tests.

Frames are real PNG crops of ``skimage.data.astronaut()`` (a real photograph); the state graph
comes from the project's own ``build_graph`` (ProactiveBench App. 0.A rules) and the texts from
``pools``, so these records are what the pipeline writes, minus the Beam plumbing.
"""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import Image
from skimage import data as skdata

from exports.release import ReleaseInventory
from pipelines.proactivebench import pools
from pipelines.proactivebench.graph import build_graph
from schemas.proactivebench import EPISODE, OFFICIAL_DATASET_NAMES

_PHOTO = Image.fromarray(np.asarray(skdata.astronaut()))  # 512 x 512 RGB
VOCAB = ["astronaut", "flag", "helmet", "rocket", "spacesuit", "satellite", "glove"]


def png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def tile_frames(n: int, seed: int) -> list[bytes]:
    """``n`` distinct 24x24 PNG tiles cut from the photo."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        x, y = rng.randrange(0, 480), rng.randrange(0, 480)
        out.append(png(_PHOTO.crop((x, y, x + 24, y + 24))))
    return out


def episode(env: str, n: int, *, start: int = 0, goals: list[int] | None = None,
            reference: int | None = None, meta: dict[str, Any] | None = None,
            boxes: list[tuple[int, int, int, int]] | None = None, sid: str | None = None,
            seed: int = 0) -> dict[str, Any]:
    """One EPISODE record (all schema fields)."""
    meta = dict(meta or {})
    rng = random.Random(f"{env}-{sid}-{seed}")
    sid = sid or f"{env}/sample{seed}"
    question = rng.choice(pools.question_pool(env, meta))
    group = [*pools.proactive_options(env, meta, rng), (rng.choice(pools.abstain_pool()),
                                                         "abstain", "")]
    rng.shuffle(group)
    options = [g[0] for g in group]
    kinds = [g[1] for g in group]
    actions = [g[2] for g in group]
    answer = VOCAB[seed % len(VOCAB)]
    categories = [answer, *rng.sample([c for c in VOCAB if c != answer], 3)]
    rng.shuffle(categories)
    graph = build_graph(env, n, kinds, actions, meta)
    states = [{"frame": s, "option_ids": ids, "next_states": nxt}
              for s, (ids, nxt) in enumerate(zip(graph.option_ids, graph.next_states, strict=True))]
    if boxes is not None:
        frames = [png(_PHOTO.crop(b)) for b in boxes]
        sources = [f"train2014/astronaut.png#crop({b[0]},{b[1]},{b[2]},{b[3]})" for b in boxes]
    else:
        frames = tile_frames(n, seed)
        sources = [f"{env}/{sid}/{i}.png" for i in range(n)]
    goals = goals if goals is not None else [n - 1]
    shown = [options[i] for i in graph.option_ids[start]] + categories
    record = {
        "id": sid,
        "environment": env,
        "source_dataset": OFFICIAL_DATASET_NAMES[env],
        "source_id": sid.split("/", 1)[1],
        "frames": [{"bytes": f, "path": f"{sid}/{i:03d}.png"} for i, f in enumerate(frames)],
        "frame_sources": sources,
        "question": question,
        "hint": pools.hint(env, meta),
        "options": options,
        "option_kinds": kinds,
        "option_actions": actions,
        "categories": categories,
        "answer": answer,
        "negatives": [{"category": c, "score": 0.0} for c in categories if c != answer],
        "negative_strategy": "random",
        "states": states,
        "start_state": start,
        "goal_states": goals,
        "void_states": [start] if env == "rod" else [],
        "reference_frame": reference if reference is not None else goals[-1],
        "max_steps": graph.max_steps,
        "first_turn_prompt": pools.render_mcqa_prompt(env, question, shown, None),
        "oeg_selected": False,
        "oeg_valid_suggestions": pools.oeg_valid_suggestions(env, meta),
        "probe_results": [],
        "source_metadata": json.dumps(meta, sort_keys=True),
    }
    EPISODE.validate(record)
    return record


def expanding_boxes(direction: str, steps: int, box: tuple[int, int, int, int], h: int,
                    v: int) -> list[tuple[int, int, int, int]]:
    """Crops that grow towards the movement, as the official COCO class computes them."""
    l0, t0, r0, b0 = box
    if direction == "zoom_out":
        return [(l0 - h * k, t0 - v * k, r0 + h * k, b0 + v * k) for k in range(steps + 1)]
    if "_" not in direction:
        out = []
        for k in range(steps + 1):
            out.append((l0 - h * k if direction == "left" else l0,
                        t0 - v * k if direction == "up" else t0,
                        r0 + h * k if direction == "right" else r0,
                        b0 + v * k if direction == "down" else b0))
        return out
    first, second = direction.split("_")
    out = []
    for a in range(steps + 1):  # frame = a * (steps + 1) + b, as in graph._coco_next
        for b in range(steps + 1):
            out.append((l0 - h * b if second == "left" else l0,
                        t0 - v * a if first == "up" else t0,
                        r0 + h * b if second == "right" else r0,
                        b0 + v * a if first == "down" else b0))
    return out


def coco_episode(direction: str, steps: int, boxes: list[tuple[int, int, int, int]],
                 seed: int) -> dict[str, Any]:
    layout = "line" if direction == "zoom_out" or "_" not in direction else "grid"
    meta = {"direction": direction, "steps": steps, "layout": layout}
    n = len(boxes)
    return episode("coco", n, goals=[n - 1], meta=meta, boxes=boxes,
                   sid=f"coco/{direction}-{seed}", seed=seed)


def all_environment_episodes() -> list[dict[str, Any]]:
    """One representative episode per environment (+ COCO variants) as the pipeline builds them."""
    return [
        episode("rod", 14, start=7, goals=[0, 1, 13], reference=0,
                meta={"occluding_object": "blue blocks"}, sid="rod/blue_blocks-banana", seed=1),
        episode("vsod", 6, start=0, goals=[3, 4], reference=3,
                meta={"question_type": "speaker", "strong_occlusions": [0, 1]}, seed=2),
        episode("mvpn", 4, goals=[3], meta={"informative_views": [3]}, seed=3),
        episode("imagenet_c", 5, meta={"corruption": "gaussian_noise", "action": "denoise"},
                seed=4),
        episode("quickdraw", 5, seed=5),
        episode("changeit", 6, goals=[4, 5], reference=4, meta={"question_type": "object"},
                seed=6),
        coco_episode("zoom_out", 3, expanding_boxes("zoom_out", 3, (200, 200, 260, 260), 10, 10),
                     seed=7),
        coco_episode("right", 3, expanding_boxes("right", 3, (100, 150, 160, 210), 15, 0), seed=8),
        coco_episode("up_left", 2, expanding_boxes("up_left", 2, (300, 300, 360, 360), 12, 8),
                     seed=9),
    ]


def rounded_zoom_episode() -> dict[str, Any]:
    """Zoom out from 50x50 to 94x94 in 3 steps, interpolated and rounded per crop as our crop
    planner does (22/3 px per side and step: a non-integer official step)."""
    boxes = [(200 + round(-22 * k / 3), 180 + round(-22 * k / 3), 250 + round(22 * k / 3),
              230 + round(22 * k / 3)) for k in range(4)]
    return coco_episode("zoom_out", 3, boxes, seed=13)


def sliding_coco_episode() -> dict[str, Any]:
    """A fixed-size window sliding left (our crop planner's scheme): not representable."""
    boxes = [(300 - 20 * k, 100, 360 - 20 * k, 160) for k in range(4)]
    return coco_episode("left", 3, boxes, seed=10)


def write_release(root: Path, episodes: list[dict[str, Any]], *,
                  counts: dict[str, dict[str, int]] | None = None,
                  split_files: bool = False) -> Path:
    """A release directory: ``data/<environment>/test-*.parquet`` + ``manifest.json`` (counts and
    the inventory of every file, as a build writes it)."""
    by_env: dict[str, list[dict[str, Any]]] = {}
    for ep in episodes:
        by_env.setdefault(ep["environment"], []).append(ep)
    schema = EPISODE.arrow_schema()
    for env, rows in by_env.items():
        out = root / "data" / env
        out.mkdir(parents=True, exist_ok=True)
        chunks = [rows[: len(rows) // 2], rows[len(rows) // 2:]] if split_files and len(rows) > 1 \
            else [rows]
        for i, chunk in enumerate(chunks):
            table = pa.Table.from_pylist(chunk, schema=schema)
            pq.write_table(table, out / f"test-{i:05d}-of-{len(chunks):05d}.parquet")
    if counts is None:
        counts = {env: {"inputs": len(rows), "kept": len(rows), "filtered": 0, "rejected": 0}
                  for env, rows in by_env.items()}
    (root / "manifest.json").write_text(json.dumps({"benchmark": "proactivebench", "version": "1.0.0",
                                                    "counts": counts, "files": ReleaseInventory(root).files}))
    return root
