"""Record conversion: one release episode -> one record (+ images) of the authors' ``proactivebench``.

Downstream users run the official evaluation (``proactivebench`` 0.1.1, design.md §Authors'
package) on our data. Its
``environment.py`` defines one class per dataset that reads one JSONL record per sample from
``<data_dir>/<Dataset>_preprocessed.jsonl`` and images from ``<data_dir>/<image_template>``. Each
class *re-derives* the episode graph from a few numbers (``first_image``, ``num_images``,
``step_size``, COCO's ``crop``/``*_step``/``granularity``) instead of reading it, so an export is
only correct if the class's rule, applied to those numbers, reproduces our graph. This module
therefore does not trust a per-dataset formula: for every episode it walks our state graph
(ProactiveBench §3.1) from ``start_state`` alongside a model of the official class, and checks state by
state that the same options are shown, that each option leads to the same next view, and that
the image the class would load is our frame. An episode that fails is *rejected* with the reason
(``compat_report.json``); it is never written half-right.

What the official classes need (and what surprised us, see also ``pools.py``):

* ``id`` is free-form for the classes, but ``data_utils.load_proactivebench_dataset`` keeps only
  ids in its hard-coded ``FILTER`` list (the authors' 7,557 kept ids) and drops VSOD records with
  ``strong_occlusions == False``. Our ids are strings (``rod/…``), so that loader returns nothing:
  load our JSONL with :func:`load_compat_records` (a plain JSON-lines read) and pass each record
  to ``get_environment(name)(entry=…, data_dir=…)``.
* ``image_template`` is formatted differently per class: ROD ``{image}`` (no padding), VSOD /
  QuickDraw ``{image}`` zero-padded to 4, ChangeIt ``{image}`` unpadded, MVP-N ``{informative}``
  and ``{image}`` (4 digits; ``informative`` is 1 only on the last turn *and* in the reference
  setting), ImageNet-C ``{level}``, COCO a plain path (one image for all states, cropped).
* ROD and VSOD move ``image_id ± 1`` modulo ``num_images`` (circular, App. 0.A.1/0.A.2). MVP-N
  shows ``valid_images[turn]``; ImageNet-C starts at ``first_image`` and decrements, with
  ``valid_images`` hard-coded to 1..5, so a chain of more than 5 frames cannot be represented;
  QuickDraw increments. ChangeIt moves by ``step_size`` and hides "Rewind the video." when
  ``image_id - step_size < 0`` and the "Wait for the…" option when ``image_id + step_size >=
  num_images``. Max turns: ``num_images`` everywhere except ChangeIt (``max_steps`` field) and
  COCO (``granularity``, ×2 for ordinal directions, +1 for zoom).
* COCO: the class shows ``image.crop(box)`` of ONE image, where a move towards ``left`` lowers
  the box's left edge by ``horizontal_step × (k+1)`` and keeps the right edge (the view *grows*),
  ``crop.width``/``crop.height`` are the right/bottom coordinates for directions but widths/
  heights for zoom, and the direction must be spelled ``"zoom"`` (``"zoom_out"`` would silently
  break the option removal). The class already adds one step at turn 0, so ``crop`` is the view
  one move *before* our first crop (it may be an empty or inverted box; the class only does
  arithmetic on it). Our crop planner (``pipelines/proactivebench/sources/_coco_crops.py``) grows the crop
  exactly this way in whole-pixel steps, so every COCO episode the pipeline builds is
  representable; crops that slide a fixed-size window (releases built before that planner)
  cannot be shown by that class and are rejected. We rebuild the one image as the union of our
  crops pasted at their boxes (boxes from ``frame_sources`` ``…#crop(l,t,r,b)`` or
  ``source_metadata["crop_boxes"]``; for growing crops that is the last crop); in the reference
  setting the class then shows that union, not our ``reference_frame``. JPEG frames are coded one
  by one, so overlaps are compared with ``JPEG_TOLERANCE``.

Documented, outcome-neutral differences (counted per episode in ``compat_report.json`` notes):
ROD voids a category answer only on the first *turn* (``action is None``), we void the start
*state* (a policy that returns to the fully occluded frame differs); the official max turns can
exceed ours where the extra turn is unreachable (COCO grid: ``2K+2`` vs our ``2K+1``) — an
episode whose oracle path would not fit is rejected. For cardinal/zoom COCO both hide the move
option at the last crop (App. 0.A.7 says the set "remains fixed", the class removes it; our graph
follows the class). Releases built before that change show it there as an episode-ending option;
they are still exported, with a note.

This module only decides and converts; ``write.py`` writes the export folder and its report,
``verify.py`` replays an export in the real classes under Python 3.12.
"""

from __future__ import annotations

import glob
import hashlib
import io
import json
import os
import re
from collections import deque
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from exports.release_files import iter_rows
from pipelines.proactivebench import pools
from schemas.proactivebench import OFFICIAL_DATASET_NAMES

# The release of the authors' package the classes below are modelled on (and the export replayed in).
OFFICIAL_PACKAGE = "proactivebench==0.1.1"
END = -1

# Mean absolute pixel error tolerated when COCO crops are JPEG-coded individually (each crop was
# compressed on its own, so overlapping regions differ slightly); PNG crops must match exactly.
JPEG_TOLERANCE = 4.0


class NotRepresentable(Exception):
    """The official class cannot show this episode as we built it; the message says why."""


# -- reading the release ----------------------------------------------------------------------------
def release_files(release_dir: str | os.PathLike[str]) -> list[str]:
    """Episode Parquet files of a release (``data/<environment>/*.parquet``, or flat ``data/``)."""
    files = sorted(glob.glob(os.path.join(os.fspath(release_dir), "data", "**", "*.parquet"),
                             recursive=True))
    if not files:
        raise FileNotFoundError(f"{release_dir}: no Parquet files under data/")
    return files


def iter_episodes(release_dir: str | os.PathLike[str]) -> Iterator[dict[str, Any]]:
    """EPISODE rows one by one (batched reads: frames are embedded and can be large)."""
    yield from iter_rows([Path(p) for p in release_files(release_dir)])


# -- helpers ----------------------------------------------------------------------------------------
def safe_id(sample_id: str) -> str:
    """A path-safe, collision-free directory name for a sample id."""
    digest = hashlib.sha256(sample_id.encode()).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '_', sample_id)}-{digest}"


def image_ext(data: bytes) -> str:
    """``png`` or ``jpg``: the file extension of an encoded frame (the official classes open the
    path as written, so it must match the bytes)."""
    return "png" if data[:8] == b"\x89PNG\r\n\x1a\n" else "jpg"


def _option_kind(row: dict[str, Any], i: int) -> str:
    return row["option_kinds"][i]


def _proactive_ids(row: dict[str, Any]) -> list[int]:
    return [i for i, k in enumerate(row["option_kinds"]) if k == "proactive"]


def _moves(row: dict[str, Any], state: int) -> dict[str, int]:
    """Proactive action -> next state (END included) shown in ``state``."""
    s = row["states"][state]
    return {row["option_actions"][i]: nxt for i, nxt in zip(s["option_ids"], s["next_states"],
                                                            strict=True)
            if row["option_kinds"][i] == "proactive"}


def _follow(row: dict[str, Any], state: int, action: str, limit: int) -> list[int]:
    """States visited by repeating ``action`` from ``state`` (stops at END, hidden or a loop)."""
    path = [state]
    while len(path) <= limit:
        nxt = _moves(row, path[-1]).get(action)
        if nxt is None or nxt == END or nxt == path[0]:
            break
        path.append(nxt)
    return path


def shortest_path(row: dict[str, Any]) -> list[int] | None:
    """Option ids of a shortest proactive path from the start to a non-void goal state."""
    goals = set(row["goal_states"]) - set(row["void_states"])
    start = row["start_state"]
    prev: dict[int, tuple[int, int] | None] = {start: None}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if s in goals:
            path: list[int] = []
            while prev[s] is not None:
                p, opt = prev[s]  # type: ignore[misc]
                path.append(opt)
                s = p
            return path[::-1]
        st = row["states"][s]
        for opt, nxt in zip(st["option_ids"], st["next_states"], strict=True):
            if row["option_kinds"][opt] == "proactive" and nxt != END and nxt not in prev:
                prev[nxt] = (s, opt)
                queue.append(nxt)
    return None


# -- the official classes, modelled per environment --------------------------------------------------
@dataclass
class OfficialModel:
    """What an official class does, in terms of an abstract position ``pos``.

    ``shown(pos)`` lists the option ids the class shows (``_get_valid_options``), ``step(pos,
    action)`` is the next position (``None`` = the class ends the episode as wrong), ``max_turns``
    is the class's ``max_steps``.
    """

    start: Hashable
    shown: Callable[[Hashable], list[int]]
    step: Callable[[Hashable, str], Hashable | None]
    max_turns: int


def _walk(row: dict[str, Any], model: OfficialModel,
          tolerate: Callable[[Hashable, int, int], bool] | None = None) -> dict[Hashable, int]:
    """Walk our graph and the model together; return position -> our frame, or raise.

    ``tolerate(pos, option_id, next_state)`` may accept an option we show that the class hides
    (a documented difference); it must end the episode in ours.
    """
    seen: set[tuple[int, Hashable]] = set()
    frame_at: dict[Hashable, int] = {}
    queue: deque[tuple[int, Hashable]] = deque([(row["start_state"], model.start)])
    while queue:
        state, pos = queue.popleft()
        if (state, pos) in seen:
            continue
        seen.add((state, pos))
        if len(seen) > 10 * len(row["states"]) + 100:
            raise NotRepresentable("the official positions do not close over our graph")
        frame = row["states"][state]["frame"]
        if frame_at.setdefault(pos, frame) != frame:
            raise NotRepresentable(f"official position {pos} would show frame {frame_at[pos]} "
                                   f"and frame {frame} (state {state})")
        st = row["states"][state]
        ours = list(st["option_ids"])
        official = model.shown(pos)
        extra = [i for i in ours if i not in official]
        for i in extra:
            nxt = st["next_states"][ours.index(i)]
            if not (tolerate and tolerate(pos, i, nxt)):
                raise NotRepresentable(f"state {state}: we show option {row['options'][i]!r}, "
                                       "the official class does not")
        if [i for i in ours if i not in extra] != official:
            raise NotRepresentable(f"state {state}: shown options {ours} differ from the official "
                                   f"class's {official}")
        for i, nxt in zip(st["option_ids"], st["next_states"], strict=True):
            if i in extra:
                continue
            kind = _option_kind(row, i)
            want = model.step(pos, row["option_actions"][i]) if kind == "proactive" else None
            if want is None:
                if nxt != END:
                    raise NotRepresentable(f"state {state}: option {row['options'][i]!r} ends the "
                                           f"official episode but leads to state {nxt} here")
            elif nxt == END:
                raise NotRepresentable(f"state {state}: option {row['options'][i]!r} ends the "
                                       "episode here but continues in the official class")
            else:
                queue.append((nxt, want))
    return frame_at


def _check_common(row: dict[str, Any]) -> None:
    env = row["environment"]
    for i, text in enumerate(row["options"]):
        kind = row["option_kinds"][i]
        if kind == "abstain" and not pools.is_official_abstain(text):
            raise NotRepresentable(f"abstain option {text!r} lacks 'cannot'/'do not': the "
                                   "official class would count it as a correct suggestion")
        if kind == "proactive":
            if pools.is_official_abstain(text):
                raise NotRepresentable(f"proactive option {text!r} contains 'cannot'/'do not'")
            meta = {"direction": json.loads(row["source_metadata"] or "{}").get("direction", "")}
            try:
                got = pools.official_action(text, env, meta)
            except ValueError as err:
                raise NotRepresentable(str(err)) from err
            if got != row["option_actions"][i]:
                raise NotRepresentable(f"option {text!r} parses to {got!r} in the official "
                                       f"class, our graph uses {row['option_actions'][i]!r}")
    std = [pools.standardize(t) for t in row["options"] + row["categories"]]
    if len(set(std)) != len(std):
        raise NotRepresentable("two options/categories are equal after the official answer "
                               "normalisation (case, spaces, '^.*[A-Z]\\.' prefix)")
    if row["answer"] not in row["categories"]:
        raise NotRepresentable("answer is not among the categories")


def _check_turns(row: dict[str, Any], model: OfficialModel, notes: list[str]) -> None:
    path = shortest_path(row)
    if path is None:
        raise NotRepresentable("no goal state reachable from the start")
    if len(path) + 1 > model.max_turns:
        raise NotRepresentable(f"oracle needs {len(path) + 1} turns, the official class allows "
                               f"{model.max_turns}")
    if model.max_turns != row["max_steps"]:
        notes.append(f"official max turns {model.max_turns} vs ours {row['max_steps']}")


@dataclass
class Converted:
    entry: dict[str, Any]
    images: dict[str, bytes]
    notes: list[str]


def _circular(row: dict[str, Any], back: str, fwd: str) -> tuple[OfficialModel, int]:
    """ROD / VSOD: ``image_id ± 1 mod num_images``, options constant."""
    start = row["start_state"]
    n = len(_follow(row, start, fwd, len(row["states"])))
    if n < 2:
        raise NotRepresentable(f"the {fwd!r} option does not move from the start state")
    all_opts = list(range(len(row["options"])))
    p0 = row["states"][start]["frame"] if n == len(row["states"]) else 0

    def step(pos: Hashable, action: str) -> Hashable | None:
        assert isinstance(pos, int)
        if action == back:
            return (pos - 1) % n
        if action == fwd:
            return (pos + 1) % n
        return None

    return OfficialModel(p0, lambda pos: all_opts, step, n), n


def _chain(row: dict[str, Any], action: str) -> int:
    """Linear environments (MVP-N, ImageNet-C, QuickDraw): chain length from the start."""
    return len(_follow(row, row["start_state"], action, len(row["states"])))


def _linear_model(row: dict[str, Any], action: str) -> tuple[OfficialModel, int]:
    n = _chain(row, action)
    all_opts = list(range(len(row["options"])))

    def step(pos: Hashable, act: str) -> Hashable | None:
        assert isinstance(pos, int)
        return pos + 1 if act == action and pos + 1 < n else None

    return OfficialModel(0, lambda pos: all_opts, step, n), n


def _reference_id(frame_at: dict[Hashable, int], ref_frame: int, fallback: int,
                  prefer: Hashable | None = None) -> tuple[int, bool]:
    """Official id showing our reference frame; ``(fallback, True)`` if one must be added."""
    if prefer is not None and frame_at.get(prefer) == ref_frame:
        return int(prefer), False  # type: ignore[call-overload]
    for pos, frame in sorted(frame_at.items(), key=lambda kv: str(kv[0])):
        if frame == ref_frame:
            return int(pos), False  # type: ignore[call-overload]
    return fallback, True


def _frames(row: dict[str, Any]) -> list[bytes]:
    return [f["bytes"] for f in row["frames"]]


def _base_entry(row: dict[str, Any], template: str) -> dict[str, Any]:
    return {
        "id": row["id"],
        "image_template": template,
        "prompt": row["question"],
        "options": list(row["options"]),
        "categories": list(row["categories"]),
        "answer": row["answer"],
        "benchforge_id": row["id"],
    }


def convert_rod_vsod(row: dict[str, Any], dataset: str) -> Converted:
    env = row["environment"]
    back, fwd = ("left", "right") if env == "rod" else ("rewind", "forward")
    model, n = _circular(row, back, fwd)
    notes: list[str] = []
    _check_turns(row, model, notes)
    frame_at = _walk(row, model)
    frames = _frames(row)
    sid = safe_id(row["id"])
    ext = image_ext(frames[0])
    pad = (lambda i: str(i)) if env == "rod" else (lambda i: str(i).zfill(4))
    template = f"{dataset}/{sid}/{{image}}.{ext}"
    images = {template.format(image=pad(pos)): frames[f] for pos, f in frame_at.items()}
    ref, added = _reference_id(frame_at, row["reference_frame"], n)
    if added:
        images[template.format(image=pad(ref))] = frames[row["reference_frame"]]
    entry = _base_entry(row, template)
    entry.update(first_image=model.start, num_images=n, valid_images=list(range(n)),
                 reference_image=ref)
    if env == "rod":
        if set(row["void_states"]) - {row["start_state"]}:
            raise NotRepresentable("void states other than the start: the official class voids "
                                   "only the first turn")
        if row["void_states"]:
            notes.append("void: official voids the first turn only, ours the start state")
    else:
        meta = json.loads(row["source_metadata"] or "{}")
        strong = meta.get("strong_occlusions", True)
        entry["strong_occlusions"] = bool(strong)
        if not strong:
            notes.append("strong_occlusions is False: the official loader would drop it")
        if row["void_states"]:
            raise NotRepresentable("void states: the official VSOD class accepts the category "
                                   "in every state")
    return Converted(entry, images, notes)


def convert_linear(row: dict[str, Any], dataset: str) -> Converted:
    env = row["environment"]
    valid = [row["option_actions"][i] for i in _proactive_ids(row)]
    if len(valid) != 1:
        raise NotRepresentable(f"expected exactly one valid suggestion, found {len(valid)}")
    model, n = _linear_model(row, valid[0])
    notes: list[str] = []
    _check_turns(row, model, notes)
    if row["void_states"]:
        raise NotRepresentable("void states: the official class accepts the category in every "
                               "state")
    frame_at = _walk(row, model)
    frames = _frames(row)
    sid = safe_id(row["id"])
    ext = image_ext(frames[0])
    ref_frame = row["reference_frame"]
    images: dict[str, bytes] = {}
    if env == "mvpn":
        template = f"{dataset}/{sid}/{{informative}}/{{image}}.{ext}"
        for t, f in frame_at.items():
            images[template.format(informative=int(t == n - 1), image=str(t).zfill(4))] = frames[f]
        # reference setting: informative=1 and image=reference_image
        ref, added = _reference_id(frame_at, ref_frame, n, prefer=n - 1)
        if added or ref != n - 1:
            ref = n
            images[template.format(informative=1, image=str(ref).zfill(4))] = frames[ref_frame]
        extra = {"first_image": 0, "num_images": n, "valid_images": list(range(n)),
                 "reference_image": ref}
    elif env == "imagenet_c":
        if n > 5:
            raise NotRepresentable(f"chain of {n} frames: the official ImageNet-C class hard-codes "
                                   "valid_images = 1..5")
        template = f"{dataset}/{sid}/{{level}}.{ext}"
        for t, f in frame_at.items():
            images[template.format(level=n - t)] = frames[f]
        ref, added = _reference_id({n - t: f for t, f in frame_at.items()}, ref_frame, 0)
        if added:
            images[template.format(level=ref)] = frames[ref_frame]
        quality = [row["options"][i] for i in _proactive_ids(row)][0]
        extra = {"first_image": n, "num_images": n, "valid_images": list(range(1, n + 1)),
                 "reference_image": ref, "quality_answer": quality}
    else:  # quickdraw
        template = f"{dataset}/{sid}/{{image}}.{ext}"
        for t, f in frame_at.items():
            images[template.format(image=str(t).zfill(4))] = frames[f]
        ref, added = _reference_id(frame_at, ref_frame, n)
        if added:
            images[template.format(image=str(ref).zfill(4))] = frames[ref_frame]
        extra = {"first_image": 0, "num_images": n, "valid_images": list(range(n)),
                 "reference_image": ref}
    entry = _base_entry(row, template)
    entry.update(extra)
    return Converted(entry, images, notes)


def convert_changeit(row: dict[str, Any], dataset: str) -> Converted:
    """Linear both ways with ``step_size`` 1; rewind/wait hidden at the ends (App. 0.A.6)."""
    start = row["start_state"]
    limit = len(row["states"])
    back = len(_follow(row, start, "rewind", limit)) - 1
    ahead = len(_follow(row, start, "forward", limit)) - 1
    n = back + 1 + ahead
    ids = {row["option_actions"][i]: i for i in _proactive_ids(row)}
    if set(ids) != {"rewind", "forward"}:
        raise NotRepresentable(f"expected rewind and forward options, found {sorted(ids)}")
    if row["options"][ids["rewind"]] != pools.REWIND:
        raise NotRepresentable("the official class removes the rewind option by the exact text "
                               f"{pools.REWIND!r}")
    if "Wait for the" not in row["options"][ids["forward"]]:
        raise NotRepresentable("the official class finds the forward option by 'Wait for the'")
    if row["void_states"]:
        raise NotRepresentable("void states: the official class accepts the category in every "
                               "state")

    def shown(pos: Hashable) -> list[int]:
        assert isinstance(pos, int)
        hide = set()
        if pos - 1 < 0:
            hide.add(ids["rewind"])
        elif pos + 1 >= n:  # the official class checks the two ends with if/elif
            hide.add(ids["forward"])
        return [i for i in range(len(row["options"])) if i not in hide]

    def step(pos: Hashable, action: str) -> Hashable | None:
        assert isinstance(pos, int)
        return pos - 1 if action == "rewind" else pos + 1

    model = OfficialModel(back, shown, step, int(row["max_steps"]))
    notes: list[str] = []
    _check_turns(row, model, notes)
    frame_at = _walk(row, model)
    frames = _frames(row)
    sid = safe_id(row["id"])
    template = f"{dataset}/{sid}/{{image}}.{image_ext(frames[0])}"
    images = {template.format(image=str(pos)): frames[f] for pos, f in frame_at.items()}
    ref, added = _reference_id(frame_at, row["reference_frame"], n)
    if added:
        images[template.format(image=str(ref))] = frames[row["reference_frame"]]
    entry = _base_entry(row, template)
    entry.update(first_image=back, num_images=n, valid_images=list(range(n)),
                 reference_image=ref, step_size=1, max_steps=int(row["max_steps"]))
    return Converted(entry, images, notes)


_CROP_RE = re.compile(r"#crop\((-?\d+),\s*(-?\d+),\s*(-?\d+),\s*(-?\d+)\)")


def crop_boxes(row: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    """Per-frame (left, top, right, bottom) boxes in the source image."""
    meta = json.loads(row["source_metadata"] or "{}")
    if "crop_boxes" in meta:
        return [tuple(int(v) for v in b) for b in meta["crop_boxes"]]  # type: ignore[misc]
    boxes = []
    for i, src in enumerate(row["frame_sources"]):
        m = _CROP_RE.search(src)
        if not m:
            raise NotRepresentable(f"frame {i}: no crop box (frame_sources {src!r} has no "
                                   "'#crop(l,t,r,b)' and source_metadata no 'crop_boxes')")
        boxes.append(tuple(int(v) for v in m.groups()))
    return boxes  # type: ignore[return-value]


def _official_step_after(base: float, k: int) -> float:
    """COCO ``_prepare_next_state`` arithmetic after ``k`` moves on one axis (floats, as there)."""
    value = base
    for turn in range(1, k + 1):
        value = value / turn * (turn + 1)
    return value


def official_coco_box(direction: str, crop: dict[str, float], h: float,
                      v: float) -> tuple[float, float, float, float]:
    """``COCO2014Environment._get_transform`` for current steps ``h``/``v``: the PIL box."""
    top = crop["top"] - v if "up" in direction or "zoom" in direction else crop["top"]
    left = crop["left"] - h if "left" in direction or "zoom" in direction else crop["left"]
    bottom = crop["height"] + v if "down" in direction or "zoom" in direction else crop["height"]
    right = crop["width"] + h if "right" in direction or "zoom" in direction else crop["width"]
    if direction == "zoom":
        bottom += crop["top"]
        right += crop["left"]
    return (left, top, right, bottom)


def convert_coco(row: dict[str, Any], dataset: str) -> Converted:
    from PIL import Image, ImageChops, ImageStat

    meta = json.loads(row["source_metadata"] or "{}")
    ours_dir = str(meta.get("direction", ""))
    comps = pools.coco_components(ours_dir)
    direction = "zoom" if ours_dir == "zoom_out" else ours_dir
    start = row["start_state"]
    limit = len(row["states"])
    lengths = {c: len(_follow(row, start, c, limit)) for c in comps}
    boxes = crop_boxes(row)
    frames = _frames(row)
    if len(boxes) != len(frames):
        raise NotRepresentable(f"{len(boxes)} crop boxes for {len(frames)} frames")
    b0 = boxes[row["states"][start]["frame"]]

    def far_move(c: str) -> tuple[tuple[int, int, int, int], int]:
        """Box after the last move along ``c`` and the number of moves it took."""
        path = _follow(row, start, c, limit)
        if len(path) < 2:
            raise NotRepresentable(f"the {c!r} option does not move from the start state")
        return boxes[row["states"][path[-1]]["frame"]], len(path) - 1

    def exact(x: float) -> float:
        return int(x) if float(x).is_integer() else x

    # Steps are derived from the farthest crop, so a plan that spreads rounding over the moves
    # (as the official float arithmetic plus PIL's rounding does) still maps exactly.
    h: float = 0
    v: float = 0
    if direction == "zoom":
        g = lengths["zoom_out"] - 1
        far, k = far_move("zoom_out")
        h, v = exact((b0[0] - far[0]) / k), exact((b0[1] - far[1]) / k)
    else:
        sizes = {lengths[c] for c in comps}
        if len(sizes) != 1:
            raise NotRepresentable(f"axes have {sorted(lengths.values())} positions; the official "
                                   "class has one granularity for both")
        g = sizes.pop()
        for c in comps:
            far, k = far_move(c)
            if c == "left":
                h = exact((b0[0] - far[0]) / k)
            elif c == "right":
                h = exact((far[2] - b0[2]) / k)
            elif c == "up":
                v = exact((b0[1] - far[1]) / k)
            else:
                v = exact((far[3] - b0[3]) / k)
    if g < 1 or ("left" in direction or "right" in direction or direction == "zoom") and h <= 0 \
            or ("up" in direction or "down" in direction or direction == "zoom") and v <= 0:
        raise NotRepresentable("the moves do not enlarge the view towards the movement "
                               f"direction (steps h={h}, v={v}); the official class only grows "
                               "the crop")
    # crop such that the official box at k=0 is our start box
    left, top, right, bottom = b0
    crop: dict[str, float] = {"left": left, "top": top, "width": right, "height": bottom}
    if direction == "zoom":
        crop = {"left": left + h, "top": top + v, "width": right - left - 2 * h,
                "height": bottom - top - 2 * v}
    else:
        if "left" in direction:
            crop["left"] = left + h
        if "right" in direction:
            crop["width"] = right - h
        if "up" in direction:
            crop["top"] = top + v
        if "down" in direction:
            crop["height"] = bottom - v
    max_h = h * (g + 1 if direction == "zoom" else g) if (h or direction == "zoom") else 0
    max_v = v * (g + 1 if direction == "zoom" else g) if (v or direction == "zoom") else 0
    ids = {row["option_actions"][i]: i for i in _proactive_ids(row)}
    others = [i for i in range(len(row["options"])) if i not in ids.values()]

    def steps(pos: Hashable) -> tuple[float, float]:
        kh, kv = pos  # type: ignore[misc]
        return _official_step_after(h, kh), _official_step_after(v, kv)

    def shown(pos: Hashable) -> list[int]:
        hs, vs = steps(pos)
        hide = set()
        if direction == "zoom":
            if hs == max_h:
                if vs != max_v:  # the official class asserts this and would crash
                    raise NotRepresentable(f"zoom steps reach their maximum at different turns "
                                           f"(h={h}, v={v}): the official class asserts")
                hide.add("zoom_out")
        else:
            if hs >= max_h:
                hide |= {"left", "right"}
            if vs >= max_v:
                hide |= {"up", "down"}
        keep = {ids[a] for a in ids if a not in hide}
        return [i for i in range(len(row["options"])) if i in keep or i in others]

    def step(pos: Hashable, action: str) -> Hashable | None:
        kh, kv = pos  # type: ignore[misc]
        if action in ("left", "right"):
            return (kh + 1, kv)
        if action in ("up", "down"):
            return (kh, kv + 1)
        if action == "zoom_out":
            return (kh + 1, kv + 1)
        return None

    max_turns = g + 1 if direction == "zoom" else (g if "_" not in direction else 2 * g)
    model = OfficialModel((0, 0), shown, step, max_turns)
    notes: list[str] = []
    _check_turns(row, model, notes)
    if row["void_states"]:
        raise NotRepresentable("void states: the official class accepts the category in every "
                               "state")
    hidden_end: list[int] = []

    def tolerate(pos: Hashable, opt: int, nxt: int) -> bool:
        if nxt == END and opt in ids.values():
            hidden_end.append(opt)
            return True
        return False

    frame_at = _walk(row, model, tolerate)
    if hidden_end:
        notes.append("last crop: official hides the move option this (older) release shows "
                     "as episode-ending")
    # every visited position: the official box must be our frame's box
    used = sorted(set(frame_at.values()))
    for pos, f in frame_at.items():
        hs, vs = steps(pos)
        box = tuple(round(x) for x in official_coco_box(direction, crop, hs, vs))
        if box != tuple(boxes[f]):
            raise NotRepresentable(
                f"position {pos}: the official class crops {box}, our frame {f} is {boxes[f]} "
                "(these crops slide a fixed-size window; the official class grows the view "
                "towards the movement)" if direction != "zoom" else
                f"position {pos}: the official class crops {box}, our frame {f} is {boxes[f]} "
                "(the official class widens left/right and top/bottom by the same step per zoom)"
            )
    # one image = union of our crops pasted at their boxes, shifted to start at (0, 0)
    ox = min(boxes[f][0] for f in used)
    oy = min(boxes[f][1] for f in used)
    width = max(boxes[f][2] for f in used) - ox
    height = max(boxes[f][3] for f in used) - oy
    canvas = Image.new("RGB", (width, height))
    decoded = {}
    for f in used:
        img = Image.open(io.BytesIO(frames[f])).convert("RGB")
        l_, t_, r_, b_ = boxes[f]
        if img.size != (r_ - l_, b_ - t_):
            raise NotRepresentable(f"frame {f} is {img.size}, its crop box {boxes[f]} is "
                                   f"{(r_ - l_, b_ - t_)}")
        decoded[f] = img
        canvas.paste(img, (l_ - ox, t_ - oy))
    lossy = any(image_ext(frames[f]) == "jpg" for f in used)
    worst = 0.0
    for f, img in decoded.items():
        l_, t_, r_, b_ = boxes[f]
        diff = ImageChops.difference(canvas.crop((l_ - ox, t_ - oy, r_ - ox, b_ - oy)), img)
        worst = max(worst, max(ImageStat.Stat(diff).mean))
    if worst > (JPEG_TOLERANCE if lossy else 0.0):
        raise NotRepresentable(f"crops disagree where they overlap (mean abs error {worst:.2f}); "
                               "no single image reproduces them")
    if worst:
        notes.append(f"JPEG crops re-assembled with mean abs error {worst:.2f}")
    notes.append("reference setting shows the union of the crops, not reference_frame")
    buf = io.BytesIO()
    canvas.save(buf, format="PNG")
    template = f"{dataset}/{safe_id(row['id'])}.png"
    shifted = {"left": crop["left"] - ox, "top": crop["top"] - oy,
               "width": crop["width"] - (ox if direction != "zoom" else 0),
               "height": crop["height"] - (oy if direction != "zoom" else 0)}
    entry = _base_entry(row, template)
    entry.update(first_image=0, num_images=1, valid_images=[0], reference_image=0,
                 direction=direction, granularity=g, horizontal_step=h, vertical_step=v,
                 crop=shifted)
    return Converted(entry, {template: buf.getvalue()}, notes)


CONVERTERS: dict[str, Callable[[dict[str, Any], str], Converted]] = {
    "rod": convert_rod_vsod,
    "vsod": convert_rod_vsod,
    "mvpn": convert_linear,
    "imagenet_c": convert_linear,
    "quickdraw": convert_linear,
    "changeit": convert_changeit,
    "coco": convert_coco,
}


def convert(row: dict[str, Any]) -> Converted:
    """One EPISODE row -> official JSONL entry + image files, or :class:`NotRepresentable`."""
    env = row["environment"]
    if env not in CONVERTERS:
        raise NotRepresentable(f"unknown environment {env!r}")
    try:
        _check_common(row)
        return CONVERTERS[env](row, OFFICIAL_DATASET_NAMES[env])
    except (ValueError, KeyError, IndexError, TypeError) as err:
        # malformed fields (unknown direction, broken JSON metadata, ...) are a reason too
        raise NotRepresentable(f"cannot read episode: {type(err).__name__}: {err}") from err
