"""What ProReady-QA reviewers approve: an item's review content, and the hash the decision log
records for it. A module of its own: generation stamps each item with this hash, and review
compares it, so both import it from here."""

from __future__ import annotations

from typing import Any

from core.files import content_hash as _review_hash
from schemas.proready import TURN

TURN_FIELDS = tuple(f.name for f in TURN.fields)


def review_content(item: dict[str, Any]) -> dict[str, Any]:
    """What reviewers see (rubric ``proready`` displays: video, ``turns``, ``evidence``); ``fps``
    tells the ``<Video>`` player the real frame rate (it assumes 24 fps otherwise)."""
    paragraphs = []
    for t in item["turns"]:
        ref = "" if t["refers_to"] < 0 else f" (follow-up on turn {t['refers_to']}, {t['dependency']})"
        paragraphs.append({"role": f"Q{t['turn_index']} [{t['task_type'].upper()}]{ref}",
                           "time": t["ask_time_s"], "text": t["question"]})
        paragraphs.append({"role": f"A{t['turn_index']} (reference)", "time": t["t_s"],
                           "text": t["answer"]})
    evidence = [{k: t[k] for k in TURN_FIELDS if k not in ("question", "answer")}
                for t in item["turns"]]
    return {"id": item["id"], "video_id": item["video_id"], "video_sha256": item["video_sha256"],
            "fps": item["video_fps"], "turns": paragraphs, "evidence": evidence,
            "full_turns": [{k: t[k] for k in TURN_FIELDS} for t in item["turns"]]}


def content_hash(item: dict[str, Any]) -> str:
    """sha256 of :func:`review_content` exactly as :mod:`annotation.projects` hashes it, so the
    decision log's ``content_hash`` compares with the item's."""
    return _review_hash(review_content(item))
