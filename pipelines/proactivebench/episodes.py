"""Turn a source item into a ProactiveBench episode record (ProactiveBench §3.1, App. 0.A.1–0.A.7).

Every random choice — question from the pool, abstain option, proactive option, wrong
categories, option order — comes from a generator seeded by (global seed, sample id, purpose)
(design.md §Conventions), so dropping or adding one sample never changes another.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.blobs import BlobRef, head
from core.errors import BadInput
from core.seeding import rng_for
from pipelines.common.sources import SourceItem
from pipelines.proactivebench import pools
from pipelines.proactivebench.graph import build_graph
from schemas.proactivebench import EPISODE, OFFICIAL_DATASET_NAMES

NUM_CATEGORIES = 4  # one correct + three wrong (App. 0.A)

# Environments whose wrong categories are not random (App. 0.A.3, 0.A.7).
DEFAULT_NEGATIVE_STRATEGY = {"mvpn": "similar", "coco": "clip_text"}

# miner(correct, vocabulary, k) -> [(category, score)]
NegativeMiner = Callable[[str, list[str], int], list[tuple[str, float]]]


@dataclass
class BuildConfig:
    global_seed: int = 0
    negative_strategy: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_NEGATIVE_STRATEGY))


def episode_id(environment: str, source_id: str) -> str:
    return f"{environment}/{source_id}"


def build_episode(
    item: SourceItem,
    vocabulary: Sequence[str],
    config: BuildConfig,
    miner: NegativeMiner | None = None,
) -> dict[str, Any]:
    """Build the EPISODE record for ``item``; raise BadInput when it cannot be built."""
    env = item.environment
    sid = episode_id(env, item.source_id)
    meta = item.metadata
    seed = config.global_seed
    where = item.frames[0].source.split("#")[0] if item.frames else item.source_id

    n = len(item.frames)
    if n < 2:
        raise BadInput(where, "frames", f"needs at least 2 frames, has {n}", sid)
    for name, idx in (("start_frame", item.start_frame), ("reference_frame", item.reference_frame)):
        if not 0 <= idx < n:
            raise BadInput(where, name, f"{idx} outside 0..{n - 1}", sid)
    bad_goals = [g for g in item.goal_frames if not 0 <= g < n]
    if bad_goals or not item.goal_frames:
        raise BadInput(where, "goal_frames", f"invalid goal frames {item.goal_frames}", sid)

    question = rng_for(seed, sid, "question").choice(pools.question_pool(env, meta))
    abstain = rng_for(seed, sid, "abstain").choice(pools.abstain_pool())
    group = pools.proactive_options(env, meta, rng_for(seed, sid, "proactive_options"))
    group = [*group, (abstain, "abstain", "")]
    rng_for(seed, sid, "option_order").shuffle(group)  # shuffled within the group (App. 0.A)
    options = [text for text, _, _ in group]
    kinds = [kind for _, kind, _ in group]
    actions = [action for _, _, action in group]

    strategy = config.negative_strategy.get(env, "random")
    negatives, strategy = _negatives(item, sid, vocabulary, strategy, seed, miner, where)
    categories = [item.category, *[c for c, _ in negatives]]
    rng_for(seed, sid, "category_order").shuffle(categories)

    graph = build_graph(env, n, kinds, actions, meta)
    states = [
        {"frame": s, "option_ids": ids, "next_states": nxt}
        for s, (ids, nxt) in enumerate(zip(graph.option_ids, graph.next_states, strict=True))
    ]
    start = item.start_frame
    shown = [options[i] for i in graph.option_ids[start]] + categories
    record = {
        "id": sid,
        "environment": env,
        "source_dataset": OFFICIAL_DATASET_NAMES[env],
        "source_id": item.source_id,
        "frames": [{"bytes": f.data, "path": f"{sid}/{i:03d}.{_ext(f.data)}"}
                   for i, f in enumerate(item.frames)],
        "frame_sources": [f.source for f in item.frames],
        "question": question,
        "hint": pools.hint(env, meta),
        "options": options,
        "option_kinds": kinds,
        "option_actions": actions,
        "categories": categories,
        "answer": item.category,
        "negatives": [{"category": c, "score": float(s)} for c, s in negatives],
        "negative_strategy": strategy,
        "states": states,
        "start_state": start,
        "goal_states": sorted(set(item.goal_frames)),
        # ROD: a category predicted on the fully occluded first frame counts as wrong (App. 0.A.1)
        "void_states": [start] if env == "rod" else [],
        "reference_frame": item.reference_frame,
        "max_steps": graph.max_steps,
        "first_turn_prompt": pools.render_mcqa_prompt(env, question, shown, None),
        "oeg_selected": False,
        "oeg_valid_suggestions": pools.oeg_valid_suggestions(env, meta),
        "probe_results": [],
        "source_metadata": json.dumps(meta, sort_keys=True, ensure_ascii=False),
    }
    EPISODE.validate(record)
    return record


def _ext(data: bytes | BlobRef) -> str:
    return "png" if head(data)[:8] == b"\x89PNG\r\n\x1a\n" else "jpg"


def _negatives(
    item: SourceItem,
    sid: str,
    vocabulary: Sequence[str],
    strategy: str,
    seed: int,
    miner: NegativeMiner | None,
    where: str,
) -> tuple[list[tuple[str, float]], str]:
    """Three wrong categories and the strategy actually used (recorded in the episode)."""
    k = NUM_CATEGORIES - 1
    answer = item.category
    pool = sorted({c for c in vocabulary if _norm(c) != _norm(answer)})
    if strategy == "similar":  # MVP-N: similar categories (App. 0.A.3)
        given = item.metadata.get("similar_categories", [])
        similar = sorted({c for c in given if _norm(c) != _norm(answer)})
        if len(similar) >= k:
            picked = rng_for(seed, sid, "negatives").sample(similar, k)
            return [(c, 0.0) for c in picked], "similar"
        strategy = "random"  # not enough similar labels for this item: say so in the record
    if strategy == "clip_text" and miner is not None:
        try:
            mined = miner(answer, pool, k)
        except ValueError as exc:  # e.g. every candidate excluded as the same concept
            raise BadInput(where, "category", f"CLIP miner: {exc}", sid) from exc
        if len(mined) == k:
            return mined, "clip_text"
        raise BadInput(where, "category", f"CLIP miner found {len(mined)} of {k} negatives", sid)
    if len(pool) < k:
        raise BadInput(where, "category", f"vocabulary has {len(pool)} wrong labels, needs {k}", sid)
    picked = rng_for(seed, sid, "negatives").sample(pool, k)
    return [(c, 0.0) for c in picked], "random"


def _norm(label: str) -> str:
    return " ".join(label.lower().replace("_", " ").split())
