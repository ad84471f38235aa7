"""Held out, proven: no source image or drawing of the evaluation split is in the training split
(ProactiveBench §5: COCO's training split, and a QuickDraw subset "disjoint from that used in
ProactiveBench").

Two keys name a source item, and a training item is held out only if it matches the evaluation
split on neither:

* **source id** — the id the source dataset gives the item: COCO's image id (unique across
  COCO's 2014 splits, so a train2014 image that shares an id with a val2014 one is the same
  image, or a broken annotation file) and QuickDraw's ``key_id`` (unique over the whole dataset,
  whatever class file or line holds it);
* **content** — :attr:`~pipelines.common.sources.SourceItem.content_sha256`: the sha256 of the
  decoded pixels (COCO) or of the stroke data (QuickDraw). Unlike a file's sha256 it sees through
  a renamed copy and a copy under another id; it is exact, so a re-encoded JPEG (other pixels)
  or a drawing with one point moved is another item.

The evaluation side is every evaluation item the build *loaded* (kept, or dropped later by the
self-check or the leak filter): conservative on purpose, as a training item equal to an
evaluation item that happened to be dropped is still not new data. A training item that matches
is a filtered input (rule ``held out``, stage ``held_out``) whose reason names the training file,
the field that matched and the evaluation item it matched; the release gate then proves the
property again on what is published (:mod:`pipelines.proactivebench.train_quality`).
"""

from __future__ import annotations

from pipelines.common.sources import Filtered, SourceItem
from schemas.proactivebench import TRAIN_PREFIX

HELD_OUT = "held out"
STAGE = "held_out"
BENCHMARK = "proactivebench"
# what the content key hashes, per environment (named in a held-out reason)
CONTENT_FIELD = {"coco": "pixels", "quickdraw": "drawing"}


def source_key(environment: str, source_id: str) -> str:
    """The source dataset's own id of an item: the last part of its benchforge source id
    (``val2014/300`` → COCO image id 300, ``cat/4611…`` → QuickDraw key_id 4611…)."""
    return f"{environment}:{source_id.rsplit('/', 1)[-1]}"


def keys(item: SourceItem) -> dict[str, str]:
    """The held-out keys of a loaded item: ``id:<source key>`` and ``content:<sha256>``."""
    out = {f"id:{source_key(item.environment, item.source_id)}": "source_id"}
    if item.content_sha256:
        out[f"content:{item.content_sha256}"] = "content_sha256"
    return out


def evaluation_record(item: SourceItem) -> dict[str, str]:
    """What the release lists about one evaluation item (``reports/train/held_out.json``)."""
    return {"environment": item.environment, "source_id": item.source_id,
            "source_key": source_key(item.environment, item.source_id),
            "content_sha256": item.content_sha256}


def _where(item: SourceItem, by: str) -> tuple[str, str]:
    """(file, field) of the training item that a match by ``by`` points at."""
    frame_file = item.frames[0].source.split("#")[0] if item.frames else item.source_id
    if by == "source_id":
        if item.environment == "coco":  # the id is the annotation file's
            return item.source_files[0][0], f"images[id={item.source_id.rsplit('/', 1)[-1]}].id"
        return frame_file, "key_id"  # "<class file>:<line>"
    return frame_file, CONTENT_FIELD.get(item.environment, "content")


def match(item: SourceItem, held: dict[str, str]) -> tuple[Filtered, list[dict[str, str]]] | None:
    """The filtered input of a training ``item`` that matches the evaluation split (``held``:
    key → evaluation item id, from :func:`keys`) and the matches (``by``, ``test_item``), or
    ``None`` when the item is held out."""
    found = [(by, held[k]) for k, by in keys(item).items() if k in held]
    if not found:
        return None
    source_file, _ = _where(item, found[0][0])
    reasons = []
    for by, test_item in found:
        _, field = _where(item, by)
        what = ("its source id" if by == "source_id"
                else f"its decoded {CONTENT_FIELD.get(item.environment, 'content')} (sha256 "
                     f"{item.content_sha256[:12]}…)")
        reasons.append(f"{field}: {what} matches the evaluation split's {test_item}")
    filtered = Filtered(item_id=item.source_id, benchmark=BENCHMARK,
                        environment=TRAIN_PREFIX + item.environment, source_file=source_file,
                        rule=HELD_OUT, reason="; ".join(reasons) + " (held out, ProactiveBench §5)",
                        stage=STAGE)
    return filtered, [{"environment": item.environment, "item": item.source_id, "by": by,
                       "test_item": test_item} for by, test_item in found]
