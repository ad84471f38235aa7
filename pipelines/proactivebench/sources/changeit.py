"""ChangeIt — object state-change videos (ProactiveBench App. 0.A.6).

Two layouts are accepted (docs/sources.md):

* the **public release** of ChangeIt (Souček et al., CVPR 2022): ``categories.csv``
  (``DIR_NAME,ACTION_NAME,CENTERING_PARAM``), ``labels.csv``, and per test video
  ``annotations/<category>/<video id>.fps1.csv`` with one ``second,label`` row per second; the
  videos themselves (downloaded from YouTube, not in the release) under
  ``downloads/<category>/<video id>.<ext>`` (``extra["videos_dir"]`` overrides). Each annotated
  video becomes one item whose question type (object or action, App. 0.A.6) is drawn per video
  with ``rng_for(seed, video, "changeit_question_type")`` (``extra["question_types"]``:
  ``random`` (default), ``object``, ``action`` or ``both``). The object is ACTION_NAME without its
  last word ("Apple Peeling/Cutting" → "apple"), the action is ACTION_NAME itself;
* a **sequence manifest** (``manifest.jsonl``) for re-cut or other copies, described below.

Frames are the video at 1 FPS (ChangeIt annotates one label per second), either extracted
(``frames``) or decoded here from ``video`` at ``fps``. ``labels`` has one int per frame:
0 background, 1 initial state, 2 action (the state-modifying action), 3 end state.
``question_type`` is ``object`` (category = ``object``) or ``action`` (category = ``action``),
the two question pools of App. 0.A.6. The episode starts at the first frame ("the beginning of
a video tutorial ... typically uninformative"), so a first frame that already shows the asked
thing is rejected. Goal frames: for an action question the frames labelled 2; for an object
question every non-background frame (1, 2, 3 — the object is in view in all of them).
The reference is the middle frame of the longest run of goal frames (earliest on ties).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from core.errors import BadInput, Rejection
from core.seeding import rng_for
from core.text import csv_rows, utf8_text
from pipelines.common.sources import Frame, ItemRef
from pipelines.proactivebench.sources._manifest import MANIFEST, ManifestReader, require

BACKGROUND, INITIAL, ACTION, END = 0, 1, 2, 3  # labels.csv: background, state1, action, state2
CATEGORIES, ANNOTATIONS, VIDEO_EXTS = "categories.csv", "annotations", (".mp4", ".webm", ".mkv", ".avi")
GOAL_LABELS = {"object": (INITIAL, ACTION, END), "action": (ACTION,)}


def goal_frames(labels: list[int], question_type: str) -> list[int]:
    return [i for i, lab in enumerate(labels) if lab in GOAL_LABELS[question_type]]


def reference_of(goals: list[int]) -> int:
    """Middle of the longest contiguous run of goal frames (earliest run on ties)."""
    runs: list[list[int]] = []
    for g in goals:
        if runs and g == runs[-1][-1] + 1:
            runs[-1].append(g)
        else:
            runs.append([g])
    best = max(runs, key=len)  # max keeps the first of equal-length runs
    return best[(len(best) - 1) // 2]


class ChangeItReader(ManifestReader):
    """ChangeIt videos with per-second state labels."""

    environment = "changeit"
    allow_video = True

    def validate(self, rec: dict[str, Any], n_frames: int | None, where: str) -> dict[str, Any]:
        qtype = require(rec, "question_type", str, where)
        if qtype not in GOAL_LABELS:
            raise BadInput(where, "question_type", f"{qtype!r} not in {sorted(GOAL_LABELS)}")
        obj = require(rec, "object", str, where)
        action = require(rec, "action", str, where)
        expected = obj if qtype == "object" else action
        if rec["category"] != expected:
            raise BadInput(where, "category", f"must equal the {qtype!r} field ({expected!r})")
        labels = require(rec, "labels", list, where)
        for i, lab in enumerate(labels):
            if isinstance(lab, bool) or lab not in (BACKGROUND, INITIAL, ACTION, END):
                raise BadInput(where, f"labels[{i}]", f"{lab!r} not in 0..3")
        if n_frames is not None:
            self._check_labels(labels, n_frames, qtype, where)
        return {"question_type": qtype, "object": obj, "action": action, "labels": labels}

    @staticmethod
    def _fit_labels(labels: list[int], n: int, annotation: str) -> list[int]:
        """Align per-second labels with the n decoded 1 FPS frames: seconds the annotation does
        not cover are background ("background/noannotation" in labels.csv); one label past the
        end is the rounding of the last partial second; more means the video is not the one
        that was annotated (or is truncated), which is bad input."""
        if len(labels) > n + 1:
            raise BadInput(annotation, "second", f"{len(labels)} annotated seconds but the video "
                                                 f"decodes only {n} s: annotation past the end")
        return (labels + [BACKGROUND] * n)[:n]

    @staticmethod
    def _check_labels(labels: list[int], n: int, qtype: str, where: str) -> None:
        if len(labels) != n:
            raise BadInput(where, "labels", f"{len(labels)} labels for {n} frames (one per frame)")
        goals = goal_frames(labels, qtype)
        if not goals:
            raise BadInput(where, "labels", f"no frame shows the {qtype} "
                                            f"(labels {list(GOAL_LABELS[qtype])})")
        if goals[0] == 0:
            raise BadInput(where, "labels[0]", f"the first frame already shows the {qtype}; "
                                               "the start must be uninformative")

    # -- the public release layout --------------------------------------------------------
    @property
    def checks_layout(self) -> bool:  # type: ignore[override]
        """Only the release layout has a folder of candidates (``annotations/``) to check; a
        manifest names its files."""
        return self.is_release_layout()

    def layout_problem(self, relative: str) -> tuple[str, str] | None:
        parts = relative.split("/")
        if parts[0] != ANNOTATIONS:
            return None  # categories.csv, labels.csv, downloads/ (training videos are not annotated)
        if len(parts) == 1:
            return relative, "a file where the annotations/ folder belongs"
        if len(parts) == 2:
            return relative, "a file in annotations/: the layout is <category>/<video id>.fps1.csv"
        if len(parts) > 3:
            return "/".join(parts[:3]) + "/", "a folder where annotation files belong"
        if not parts[2].endswith(".fps1.csv"):
            return relative, "not an annotation file (<video id>.fps1.csv)"
        return None

    def is_release_layout(self) -> bool:
        return self.exists(CATEGORIES) and not self.exists(MANIFEST)

    def release_categories(self) -> dict[str, tuple[str, str]]:
        """DIR_NAME → (object, action) from ``categories.csv``."""
        text = utf8_text(self.read_bytes(CATEGORIES, field=CATEGORIES), CATEGORIES)
        out: dict[str, tuple[str, str]] = {}
        for lineno, row in csv_rows(text, CATEGORIES):
            if lineno == 1 or not row:
                continue
            if len(row) < 2 or not row[0].strip() or len(row[1].split()) < 2:
                raise BadInput(f"{CATEGORIES}:{lineno}", "ACTION_NAME",
                               f"expected DIR_NAME,ACTION_NAME (object + action words), got {row!r}")
            name = row[1].strip()
            out[row[0].strip()] = (name.rsplit(" ", 1)[0].lower(), name)
        if not out:
            raise BadInput(CATEGORIES, "rows", "no categories")
        return out

    def enumerate(self) -> Iterator[ItemRef | Rejection]:
        if not self.is_release_layout():
            yield from super().enumerate()
            return
        cats = self.release_categories()
        vocab = {"object": sorted({o for o, _ in cats.values()}),
                 "action": sorted({a for _, a in cats.values()})}
        mode = self.config.extra.get("question_types", "random")
        if mode not in ("random", "object", "action", "both"):
            raise BadInput("config", "question_types", f"{mode!r} not in random/object/action/both")
        for rel in self.match(f"{ANNOTATIONS}/*/*.fps1.csv"):
            _, cat, name = rel.split("/")
            vid = name[: -len(".fps1.csv")]
            try:
                if cat not in cats:
                    raise BadInput(rel, "category", f"{cat!r} is not in {CATEGORIES}")
                labels = self._read_labels(rel)
                video = self._find_video(cat, vid)
            except BadInput as err:
                yield self.rejection(err, item_id=f"{cat}/{vid}")
                continue
            obj, action = cats[cat]
            types = ["object", "action"] if mode == "both" else [mode]
            if mode == "random":
                types = [rng_for(self.config.global_seed, f"{cat}/{vid}", "changeit_question_type")
                         .choice(["object", "action"])]
            for qtype in types:
                yield ItemRef(self.environment, f"{cat}/{vid}/{qtype}", {
                    "video": video, "fps": 1, "annotation": rel, "line": 0,
                    "question_type": qtype, "object": obj, "action": action, "labels": labels,
                    "category": obj if qtype == "object" else action,
                    "type_vocabulary": vocab[qtype],
                })

    def _read_labels(self, rel: str) -> list[int]:
        """``second,label`` rows; seconds must run 0, 1, 2, … (one label per second)."""
        labels: list[int] = []
        text = utf8_text(self.read_bytes(rel, field="annotation"), rel)
        for lineno, row in csv_rows(text, rel, field="second,label"):
            if not row:
                continue
            try:
                sec, lab = int(row[0]), int(row[1])
            except (ValueError, IndexError):
                raise BadInput(f"{rel}:{lineno}", "second,label", f"not two integers: {row!r}") from None
            if sec != len(labels):
                raise BadInput(f"{rel}:{lineno}", "second", f"expected second {len(labels)}, got {sec}")
            if lab not in (BACKGROUND, INITIAL, ACTION, END):
                raise BadInput(f"{rel}:{lineno}", "label", f"{lab} not in 0..3 (labels.csv)")
            labels.append(lab)
        if not labels:
            raise BadInput(rel, "rows", "empty annotation")
        return labels

    def _find_video(self, cat: str, vid: str) -> str:
        folder = self.config.extra.get("videos_dir", "downloads")
        for ext in VIDEO_EXTS:
            rel = f"{folder}/{cat}/{vid}{ext}"
            if self.exists(rel):
                return rel
        raise BadInput(f"{folder}/{cat}/{vid}.*", "video",
                       f"no downloaded video for annotation {cat}/{vid} (looked for {', '.join(VIDEO_EXTS)})")

    def vocabulary(self) -> list[str]:
        if self.is_release_layout():
            return sorted({v for pair in self.release_categories().values() for v in pair})
        return super().vocabulary()

    def group_labels(self, payload: dict[str, Any]) -> list[tuple[str, str]]:
        return [("object", payload["object"]), ("action", payload["action"])]

    def labels_of(self, rec: dict[str, Any]) -> list[str]:
        return [v for v in (rec.get("object"), rec.get("action"))
                if isinstance(v, str) and v.strip()]

    def build(self, ref: ItemRef, frames: list[Frame]) -> dict[str, Any]:
        p = ref.payload
        where = p.get("video", f"manifest.jsonl:{p['line']}")
        if "annotation" in p:  # release layout: labels cover the video's seconds
            p = dict(p, labels=self._fit_labels(p["labels"], len(frames), p["annotation"]))
        self._check_labels(p["labels"], len(frames), p["question_type"], where)
        goals = goal_frames(p["labels"], p["question_type"])
        return {
            "category": p["category"],
            "start_frame": 0,
            "reference_frame": reference_of(goals),
            "goal_frames": goals,
            "metadata": {"question_type": p["question_type"], "object": p["object"],
                         "action": p["action"], "labels": p["labels"],
                         "type_vocabulary": p.get("type_vocabulary", [])},
        }
