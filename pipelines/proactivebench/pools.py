"""The text content of every ProactiveBench environment (ProactiveBench §3.1, App. 0.A.1–0.A.7, 0.B).

The authors built their question, abstain and proactive-suggestion pools with ChatGPT and never
released them (only the episode JSONL and the evaluation package ``proactivebench`` 0.1.1 are
public). These pools are ours, written to the sizes the paper states:

* questions: 15 per environment; VSOD 15 per question type (speaker / count / event, 45 in all,
  App. 0.A.2); ChangeIt 15 object questions and 11 action questions (App. 0.A.6);
* abstain options: 3 (every App. 0.A section);
* MVP-N proactive suggestions: 11 (App. 0.A.3); QuickDraw: 13 (App. 0.A.5).

Fixed texts (hints, pre-prompt, ROD's reference prompt, the VSOD/ChangeIt/COCO proactive options)
are copied from the paper and from the official ``environment.py``, because the official
evaluator matches some of them *verbatim*:

* ``ChangeItEnvironment`` removes ``"Rewind the video."`` by exact string and the wait option by
  the substring ``"Wait for the"`` (capital W). Its comment ("either action or object") hints
  that the authors' data had per-question-type wait texts, but the evaluator needs only that
  prefix, so ChangeIt uses the paper's "Wait for the occlusion to disappear." (App. 0.A.6: the
  valid suggestions are "wait for the occlusion to disappear, and rewind the video", and so
  reads its example prompt);
* ``COCO2014Environment`` removes ``"Move the camera to the left."``, ``"... to the right."``,
  ``"Move the camera up."``, ``"Move the camera down."`` and ``"Move farther from the object."``
  by exact string. (The paper's App. 0.A.7 example says "Move the camera left." — that text
  would not parse: the action key is ``"to the left"``.)

Every option text must also survive the official parser (``BaseEnvironment``):

* ``_parse_action`` lower-cases the chosen option and scans ``action_map`` (substring keys) in
  order, restricted to the environment's action space. A proactive option must contain exactly
  one key of its environment's space — several keys are tolerated only when they all mean
  ROTATE (``"rotate"``, ``"view"``, ``"angle"``, ``"orientation"``, ``"different"``). So a
  QuickDraw option may not say both "details" and "drawing" (the authors' own open-ended answer
  "Add more details to the drawing" would trip that assertion), and an ImageNet-C option may
  not say both "compression" and "artifacts".
* ``index_correct_options`` treats every option containing ``"cannot"`` or ``"do not"``
  (lower-cased) as wrong and every other option as correct (ImageNet-C instead uses the single
  ``quality_answer``). Abstain options must therefore contain one of the two, and no proactive
  option may.
* ``_standardize_full_answer`` strips ``^.*[A-Z]\\.\\s*`` (greedy: everything up to the *last*
  capital letter followed by a period) and removes spaces and case; option texts must therefore
  contain no capital-letter-period pair and stay distinct after that normalisation.

:func:`official_action` re-implements that parser so tests and the episode builder can prove
each option maps to the action our state graph assigns to it; the py312 tests run the real class.
"""

from __future__ import annotations

import random
import re

ACTIONS: tuple[str, ...] = (
    "left", "right", "rewind", "forward", "rotate", "brightness", "contrast", "saturate",
    "deblur", "denoise", "jpeg", "pixelate", "artifacts", "details", "up", "down", "zoom_out",
)

ENVIRONMENTS = ("rod", "vsod", "mvpn", "imagenet_c", "quickdraw", "changeit", "coco")

# ``action_map`` of the official BaseEnvironment, in its iteration order (order matters: the
# first key found wins), with the official integer constants replaced by our action names.
OFFICIAL_ACTION_MAP: tuple[tuple[str, str], ...] = (
    ("to the left", "left"),
    ("to the right", "right"),
    ("rewind the video.", "rewind"),
    ("wait for the", "forward"),
    ("rotate", "rotate"),
    ("view", "rotate"),
    ("angle", "rotate"),
    ("orientation", "rotate"),
    ("different", "rotate"),
    ("brightness", "brightness"),
    ("contrast", "contrast"),
    ("saturation", "saturate"),
    ("deblur", "deblur"),
    ("denoise", "denoise"),
    ("compression", "jpeg"),
    ("resolution", "pixelate"),
    ("artifacts", "artifacts"),
    ("details", "details"),
    ("quickdraw", "details"),
    ("drawing", "details"),
    ("sketch", "details"),
    ("up", "up"),
    ("down", "down"),
    ("farther", "zoom_out"),
)

# Official per-environment action spaces (STOP omitted). COCO's depends on the direction.
CORRUPTION_ACTIONS: tuple[str, ...] = (
    "brightness", "contrast", "saturate", "deblur", "denoise", "jpeg", "pixelate", "artifacts",
)
_ACTION_SPACE: dict[str, tuple[str, ...]] = {
    "rod": ("left", "right"),
    "vsod": ("rewind", "forward"),
    "mvpn": ("rotate",),
    "imagenet_c": CORRUPTION_ACTIONS,
    "quickdraw": ("details",),
    "changeit": ("rewind", "forward"),
}

COCO_DIRECTIONS: tuple[str, ...] = (
    "up", "down", "left", "right", "up_left", "up_right", "down_left", "down_right", "zoom_out",
)

PRE_PROMPT_VIDEO = "This is a frame extracted from a video. Answer the following question."
_PRE_PROMPT = {"vsod": PRE_PROMPT_VIDEO, "changeit": PRE_PROMPT_VIDEO}

# Hints: App. 0.A.1–0.A.7, identical to the official environment classes.
_HINTS = {
    "rod": "Hint: moving the occluding object might reveal what is behind it.",
    "vsod": "Hint: If there is an occlusion, waiting for it to disappear or rewinding the video "
            "might reveal what's behind it.",
    "mvpn": "Hint: rotating the object could provide a more informative view.",
    "imagenet_c": "Hint: enhancing the image quality could help with classification.",
    "quickdraw": "Hint: Adding more details to the quickdraw could help with classification.",
    "changeit": "Hint: If you cannot answer the question, waiting for it to appear or rewinding "
                "the video could help with classification.",
}
COCO_HINT_MOVE = "Hint: moving the camera could help with classification."
COCO_HINT_ZOOM = "Hint: zooming out could help with classification."

# ROD's reference setting asks a fixed question (official RealisticOcclusionDatasetEnvironment).
ROD_REFERENCE_PROMPT = "What type of object is in the image?"

# -- fixed proactive option texts (verbatim where the official evaluator matches them) ---------
REWIND = "Rewind the video."
WAIT_OCCLUSION = "Wait for the occlusion to disappear."  # VSOD App. 0.A.2 and ChangeIt App. 0.A.6
COCO_OPTIONS = {
    "up": "Move the camera up.",
    "down": "Move the camera down.",
    "left": "Move the camera to the left.",
    "right": "Move the camera to the right.",
    "zoom_out": "Move farther from the object.",
}

# ImageNet-C: the suggestion that undoes each corruption family (App. 0.A.4: "deblur the image,
# denoise the image, remove artifacts"). Exactly one action key per text.
QUALITY_OPTIONS = {
    "brightness": "Adjust the brightness of the image.",
    "contrast": "Increase the contrast of the image.",
    "saturate": "Adjust the color saturation of the image.",
    "deblur": "Deblur the image.",
    "denoise": "Denoise the image.",
    "jpeg": "Reduce the compression of the image.",
    "pixelate": "Increase the resolution of the image.",
    "artifacts": "Remove the artifacts from the image.",
}

# ImageNet-C corruption names (Hendrycks & Dietterich) -> the suggestion that fixes them, used
# when a reader provides ``corruption`` instead of ``action`` (same table as
# ``core.media.corruptions``: weather and spatter count as artifacts).
CORRUPTION_TO_ACTION = {
    "brightness": "brightness",
    "contrast": "contrast",
    "saturate": "saturate",
    "defocus_blur": "deblur", "glass_blur": "deblur", "motion_blur": "deblur",
    "zoom_blur": "deblur", "gaussian_blur": "deblur",
    "gaussian_noise": "denoise", "shot_noise": "denoise", "impulse_noise": "denoise",
    "speckle_noise": "denoise",
    "jpeg_compression": "jpeg",
    "pixelate": "pixelate",
    "elastic_transform": "artifacts",
    "snow": "artifacts", "frost": "artifacts", "fog": "artifacts", "spatter": "artifacts",
}

# The official action_map keywords for the quality actions, as ``core.media.corruptions``
# names them, -> our action names (both spellings are accepted in ``metadata["action"]``).
ACTION_ALIASES = {"saturation": "saturate", "compression": "jpeg", "resolution": "pixelate",
                  **{a: a for a in ("brightness", "contrast", "saturate", "deblur", "denoise",
                                    "jpeg", "pixelate", "artifacts")}}

ABSTAIN_POOL: tuple[str, ...] = (
    "I do not know.",
    "I cannot answer this question.",
    "I cannot tell from this image.",
)

# MVP-N, App. 0.A.3: 11 suggestions mixing object rotations and camera movements.
MVPN_POOL: tuple[str, ...] = (
    "Rotate the object.",
    "Show me the object from a different angle.",
    "Change the viewpoint of the camera.",
    "Rotate the object to reveal another side.",
    "Give me a view of the object from a different perspective.",
    "Change the orientation of the object.",
    "Move the camera to a different position.",
    "Rotate the camera around the object.",
    "Show the object from another angle.",
    "Let me see the object from a different side.",
    "Change the camera angle.",
)

# QuickDraw, App. 0.A.5: 13 suggestions, each with exactly one DETAILS key.
QUICKDRAW_POOL: tuple[str, ...] = (
    "Add more details.",
    "Could you improve the quickdraw?",
    "Add more strokes to the sketch.",
    "Please continue the drawing.",
    "Complete the sketch.",
    "Add more details to the picture.",
    "Keep drawing the object.",
    "Finish the quickdraw.",
    "Could you add a few more details?",
    "Make the sketch more complete.",
    "Extend the drawing with more strokes.",
    "Please add details to make it recognizable.",
    "Continue the quickdraw with more strokes.",
)

# -- question pools ------------------------------------------------------------------------------
_ROD_QUESTIONS = (
    "Could you tell me what is behind the {occluding_object}?",
    "What object is hidden behind the {occluding_object}?",
    "Which object is concealed by the {occluding_object}?",
    "What is the object occluded by the {occluding_object}?",
    "What kind of object lies behind the {occluding_object}?",
    "Can you identify the object behind the {occluding_object}?",
    "What is hidden in this image?",
    "Which object is being covered in this picture?",
    "What type of object is hidden here?",
    "What is the category of the object behind the {occluding_object}?",
    "Identify the object that the {occluding_object} is covering.",
    "What item is placed behind the {occluding_object}?",
    "Could you name the object occluded in this image?",
    "What is the occluded object in this scene?",
    "Which object would you see if the {occluding_object} were not there?",
)
_VSOD_QUESTIONS = {
    "speaker": (
        "Could you tell me who is talking?",
        "Who is speaking in this video?",
        "Who is the person talking?",
        "Can you identify the speaker?",
        "Who is giving the speech in this video?",
        "What is the name of the person speaking?",
        "Who is addressing the audience?",
        "Which person is talking in this scene?",
        "Who is the speaker in this frame?",
        "Can you tell me the name of the speaker?",
        "Who is delivering the talk?",
        "Identify the person who is speaking.",
        "Who is speaking to the camera?",
        "Who is the main speaker in this video?",
        "Could you name the person who is talking?",
    ),
    "count": (
        "How many people are in the scene?",
        "How many people can be seen in this video?",
        "What is the number of people present?",
        "Could you count the people in this scene?",
        "How many persons appear in this frame?",
        "How many individuals are in the video?",
        "Can you tell me how many people are present?",
        "What is the total number of people in the scene?",
        "How many people are visible in the video?",
        "Count the number of people in this scene.",
        "How many people are taking part in the scene?",
        "How many people are there in this video?",
        "How many humans are in the scene?",
        "What is the headcount in this video?",
        "How many people does the video show?",
    ),
    "event": (
        "What type of event is this?",
        "What kind of event is taking place?",
        "What event is shown in this video?",
        "Could you tell me what kind of event this is?",
        "What is happening in this video?",
        "What type of gathering is this?",
        "Which event is being recorded?",
        "What is the occasion in this video?",
        "Can you identify the type of event?",
        "What sort of event are these people attending?",
        "What event is captured in this scene?",
        "What is the nature of the event shown?",
        "What kind of occasion is this video from?",
        "Which type of event does this video show?",
        "Identify the event taking place in the video.",
    ),
}
_MVPN_QUESTIONS = (
    "Identify the object in this image.",
    "What object is this?",
    "What is the object shown in the image?",
    "Can you recognize this object?",
    "What type of object is in the picture?",
    "Which product is shown in this image?",
    "What is this item?",
    "Could you tell me what this object is?",
    "What is the category of this object?",
    "Name the object in the image.",
    "What kind of object do you see?",
    "Which object is depicted here?",
    "What item is displayed in this picture?",
    "Can you identify this product?",
    "What is being shown in this image?",
)
_IMAGENET_C_QUESTIONS = (
    "What type of object do you see here?",
    "What is the main object in this image?",
    "What is depicted in this picture?",
    "Can you identify the object in the image?",
    "What category does this image belong to?",
    "What is shown in this image?",
    "Which object is in this picture?",
    "Could you tell me what this image shows?",
    "What is the subject of this image?",
    "Classify the content of this image.",
    "What kind of object is this?",
    "Name the main subject of the picture.",
    "What does this image contain?",
    "Which category best describes this image?",
    "What can be seen in this image?",
)
_QUICKDRAW_QUESTIONS = (
    "What is the category of the depicted object?",
    "What is this sketch of?",
    "What does this drawing represent?",
    "What object is drawn here?",
    "Can you tell what this doodle shows?",
    "What is being drawn in this image?",
    "Which object does this sketch depict?",
    "What is the subject of this drawing?",
    "Identify the object in this drawing.",
    "What is depicted in this doodle?",
    "What do you think this drawing is?",
    "Could you guess what is drawn?",
    "What category does this drawing belong to?",
    "What is the user trying to draw?",
    "Name the object in this sketch.",
)
_CHANGEIT_QUESTIONS = {
    "object": (
        "What is the main object in the video?",
        "Which object is being manipulated in the video?",
        "What object is the person working on?",
        "What is the object of interest in this video?",
        "Can you identify the object being changed?",
        "What item is being transformed in the video?",
        "Which object does the video focus on?",
        "What is the person handling in this video?",
        "What object undergoes a change in this video?",
        "Could you tell me which object appears in the video?",
        "What is the key object in this tutorial?",
        "Name the object being used in the video.",
        "What kind of object is shown in the video?",
        "Which item is the video about?",
        "What object is being prepared in the video?",
    ),
    "action": (
        "What action is being performed in the video?",
        "What is the person doing in the video?",
        "Which activity is shown in the video?",
        "What task is being carried out?",
        "Can you identify the action in this video?",
        "What is happening in this tutorial?",
        "What process is being demonstrated in the video?",
        "Which action does the video show?",
        "What is the main activity in this video?",
        "Could you tell me what is being done in the video?",
        "What kind of action is taking place?",
    ),
}
_COCO_QUESTIONS = (
    "Classify the visual content of this image.",
    "What object is in this image?",
    "What is the main object shown?",
    "Which category does the object belong to?",
    "What is depicted in this picture?",
    "Can you identify the object in the image?",
    "What kind of object is this?",
    "What is shown in this image?",
    "What is the subject of the picture?",
    "Which object can be seen in this image?",
    "Name the object in the picture.",
    "What type of object appears in the image?",
    "Could you tell me what this object is?",
    "What does this image show?",
    "What is the category of the object in this image?",
)


def _check_env(environment: str) -> None:
    if environment not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {environment!r}; expected one of {ENVIRONMENTS}")


def _meta(metadata: dict, key: str, environment: str, allowed: tuple[str, ...] | None = None) -> str:
    """A required metadata field, with an error that says which environment needs it and why."""
    if key not in metadata:
        raise ValueError(f"{environment}: metadata field {key!r} is required")
    value = str(metadata[key])
    if allowed is not None and value not in allowed:
        raise ValueError(f"{environment}: metadata[{key!r}]={value!r}, expected one of {allowed}")
    return value


def _occluding_object(metadata: dict) -> str:
    """ROD's occluder description, checked so that it cannot break the official parser."""
    obj = " ".join(_meta(metadata, "occluding_object", "rod").split())
    low = obj.lower()
    if not obj:
        raise ValueError("rod: metadata['occluding_object'] is empty")
    bad = [k for k, _ in OFFICIAL_ACTION_MAP if k in low and k in ("to the left", "to the right")]
    if bad or "cannot" in low or "do not" in low or re.search(r"[A-Z]\.", obj):
        raise ValueError(
            f"rod: occluding_object {obj!r} would break the official option parser "
            "(contains an action key, an abstain marker or a capital-letter-period pair)"
        )
    return obj


def question_pool(environment: str, metadata: dict) -> tuple[str, ...]:
    """The question pool one episode draws from (15 per environment / question type).

    ROD questions name the occluder (App. 0.A.1 example "Could you tell me what is behind the
    {occluding_object}?"), so the pool is formatted with ``metadata["occluding_object"]``.
    VSOD and ChangeIt select the sub-pool by ``metadata["question_type"]``.
    """
    _check_env(environment)
    if environment == "rod":
        obj = _occluding_object(metadata)
        return tuple(q.format(occluding_object=obj) for q in _ROD_QUESTIONS)
    if environment == "vsod":
        return _VSOD_QUESTIONS[_meta(metadata, "question_type", "vsod", tuple(_VSOD_QUESTIONS))]
    if environment == "changeit":
        kind = _meta(metadata, "question_type", "changeit", tuple(_CHANGEIT_QUESTIONS))
        return _CHANGEIT_QUESTIONS[kind]
    return {
        "mvpn": _MVPN_QUESTIONS,
        "imagenet_c": _IMAGENET_C_QUESTIONS,
        "quickdraw": _QUICKDRAW_QUESTIONS,
        "coco": _COCO_QUESTIONS,
    }[environment]


def abstain_pool() -> tuple[str, ...]:
    """Three abstain options; each contains "cannot" or "do not", which is how the official
    evaluator tells abstaining apart from a proactive suggestion."""
    return ABSTAIN_POOL


def hint(environment: str, metadata: dict) -> str:
    """The paper's MCQA hint (App. 0.A.*, used in §4.3); COCO's depends on the direction."""
    _check_env(environment)
    if environment == "coco":
        direction = _meta(metadata, "direction", "coco", COCO_DIRECTIONS)
        return COCO_HINT_ZOOM if direction == "zoom_out" else COCO_HINT_MOVE
    return _HINTS[environment]


def imagenet_c_action(metadata: dict) -> str:
    """The valid quality action for an ImageNet-C item (``action`` — our name or the official
    keyword such as ``"compression"`` — else the mapped ``corruption``)."""
    if "action" in metadata:
        return ACTION_ALIASES[_meta(metadata, "action", "imagenet_c", tuple(ACTION_ALIASES))]
    corruption = _meta(metadata, "corruption", "imagenet_c", tuple(CORRUPTION_TO_ACTION))
    return CORRUPTION_TO_ACTION[corruption]


def coco_components(direction: str) -> tuple[str, ...]:
    """Cardinal components of a COCO direction, vertical first (``up_left`` -> up, left)."""
    if direction not in COCO_DIRECTIONS:
        raise ValueError(f"coco: direction {direction!r}, expected one of {COCO_DIRECTIONS}")
    return ("zoom_out",) if direction == "zoom_out" else tuple(direction.split("_"))


def proactive_options(
    environment: str, metadata: dict, rng: random.Random
) -> list[tuple[str, str, str]]:
    """The non-category, non-abstain options ``(text, kind, action)`` before shuffling.

    ``kind`` is ``"proactive"`` (moves to another state) or ``"invalid"`` (ImageNet-C's three
    inapplicable quality suggestions, App. 0.A.4; ``action`` then names the corruption fix the
    text asks for, which the environment never applies). ``rng`` is only consumed where the paper
    samples (MVP-N / QuickDraw pools, ImageNet-C invalid suggestions), so other environments do
    not depend on it.
    """
    _check_env(environment)
    if environment == "rod":  # App. 0.A.1
        obj = _occluding_object(metadata)
        out = [(f"Move the {obj} to the left.", "proactive", "left"),
               (f"Move the {obj} to the right.", "proactive", "right")]
    elif environment in ("vsod", "changeit"):  # App. 0.A.2, 0.A.6: the same two suggestions
        out = [(REWIND, "proactive", "rewind"), (WAIT_OCCLUSION, "proactive", "forward")]
    elif environment == "mvpn":  # App. 0.A.3: one of 11
        out = [(rng.choice(MVPN_POOL), "proactive", "rotate")]
    elif environment == "quickdraw":  # App. 0.A.5: one of 13
        out = [(rng.choice(QUICKDRAW_POOL), "proactive", "details")]
    elif environment == "imagenet_c":  # App. 0.A.4: 1 valid + 3 invalid
        valid = imagenet_c_action(metadata)
        others = [a for a in CORRUPTION_ACTIONS if a != valid]
        out = [(QUALITY_OPTIONS[valid], "proactive", valid)]
        out += [(QUALITY_OPTIONS[a], "invalid", a) for a in rng.sample(others, 3)]
    else:  # coco, App. 0.A.7
        direction = _meta(metadata, "direction", "coco", COCO_DIRECTIONS)
        out = [(COCO_OPTIONS[c], "proactive", c) for c in coco_components(direction)]
    for text, kind, action in out:
        if kind == "proactive":
            got = official_action(text, environment, metadata)
            if got != action:  # pragma: no cover - guarded by tests; protects future edits
                raise AssertionError(f"{environment}: {text!r} parses to {got!r}, not {action!r}")
    return out


def reference_prompt(environment: str, metadata: dict) -> str:
    """The question asked in the reference (unoccluded) setting.

    Only ROD has its own ("What type of object is in the image?", the official
    RealisticOcclusionDatasetEnvironment); every other official class reuses the episode's
    question, which the caller passes as ``metadata["question"]``.
    """
    _check_env(environment)
    if environment == "rod":
        return ROD_REFERENCE_PROMPT
    if "question" not in metadata:
        raise ValueError(
            f"{environment}: the reference prompt is the episode question; pass it as "
            "metadata['question']"
        )
    return str(metadata["question"])


def oeg_valid_suggestions(environment: str, metadata: dict) -> list[str]:
    """Valid proactive suggestions for open-ended generation (§3.1, App. 0.B).

    The judge scores against an expanded list: the MCQA suggestions plus camera movement for
    ROD and VSOD (App. 0.A.1, 0.A.2) and MVP-N. The lists and their order follow
    ``get_open_ended_gen_answers`` of the official classes, whose first ``PREDICTION_THR[ds]``
    entries are suggestions (ROD 2, VSOD 3, MVP-N 2, IN-C 1, QD 1, CIT 2, COCO 2); ROD names the
    actual occluder where the package says "the blocks".
    """
    _check_env(environment)
    if environment == "rod":
        return [f"Move the {_occluding_object(metadata)}", "Move the camera"]
    if environment == "vsod":
        return ["Wait for the occlusion to disappear", "Rewind the video", "Move the camera"]
    if environment == "mvpn":
        return ["Rotate the object", "Move the camera"]
    if environment == "imagenet_c":
        return [QUALITY_OPTIONS[imagenet_c_action(metadata)].rstrip(".")]
    if environment == "quickdraw":
        return ["Add more details to the drawing"]
    if environment == "changeit":
        return [WAIT_OCCLUSION.rstrip("."), REWIND.rstrip(".")]
    return ["Move the camera", "Move farther from the object"]


def pre_prompt(environment: str) -> str:
    """Static text before the question: video environments say the image is a video frame
    (§4.1 "we tell the model that the visual input is taken from a video"); others have none."""
    _check_env(environment)
    return _PRE_PROMPT.get(environment, "")


def render_mcqa_prompt(
    environment: str, question: str, shown_options: list[str], hint_text: str | None
) -> str:
    """The MCQA prompt exactly as the official evaluation builds it.

    ``BaseEnvironment.get_state`` prepends the pre-prompt and appends the hint with single
    spaces; ``data_utils.apply_multi_choice_template(short_answer=True)`` (used by
    ``tests/mcqa.py``) then adds the options one per line as ``"A. text\\n"``.
    ``shown_options`` is the state's valid options followed by the four categories.
    """
    prompt = question
    pre = pre_prompt(environment)
    if pre:
        prompt = f"{pre} {prompt}"
    if hint_text:
        prompt = f"{prompt} {hint_text}"
    prompt += " Choose from the following options. Options:\n"
    prompt += "".join(f"{chr(65 + i)}. {opt}\n" for i, opt in enumerate(shown_options))
    prompt += "Please only return one of the options without any other words."
    return prompt


# -- the official parser, re-implemented -----------------------------------------------------------
def action_space(environment: str, metadata: dict | None = None) -> tuple[str, ...]:
    """The official environment's action space (without STOP)."""
    _check_env(environment)
    if environment == "coco":
        direction = _meta(metadata or {}, "direction", "coco", COCO_DIRECTIONS)
        return coco_components(direction)
    return _ACTION_SPACE[environment]


def is_official_abstain(text: str) -> bool:
    """How ``index_correct_options`` recognises a non-proactive option."""
    low = text.lower()
    return "cannot" in low or "do not" in low


def standardize(text: str) -> str:
    """``BaseEnvironment._standardize_full_answer``: what two answers must share to match."""
    return re.sub(r"^.*[A-Z]\.\s*", "", text).lower().strip().replace(" ", "")


def official_action(text: str, environment: str, metadata: dict | None = None) -> str:
    """The action the official ``_parse_action`` maps ``text`` to, or ``ValueError``.

    Mirrors the assertions there: a second matching key is an error unless both keys mean
    ROTATE; no matching key is an error.
    """
    space = action_space(environment, metadata)
    low = text.lower()
    found: str | None = None
    for key, action in OFFICIAL_ACTION_MAP:
        if action not in space or key not in low:
            continue
        if found is not None and not (found == action == "rotate"):
            raise ValueError(f"{environment}: {text!r} matches a second action key {key!r}")
        found = found or action
    if found is None:
        raise ValueError(f"{environment}: {text!r} matches no action key of {space}")
    return found
