"""The ProactiveBench episode record (ProactiveBench §3.1, App. 0.A, 0.B).

An episode is a small Markov decision process over an ordered frame sequence: a state shows one
frame and a subset of the proactive options; a proactive option moves to another state; the
abstain option, an invalid suggestion or a wrong category ends the episode wrongly; the correct
category ends it correctly (except in states where the paper voids category answers, e.g. ROD's
fully occluded first frame, App. 0.A.1). The record stores that graph explicitly so every
consumer (the self-check, the leak filter's probes, the compat export, an evaluator) replays the
same environment without re-implementing per-dataset rules.
"""

from schemas.core import IMAGE, Field, ListOf, RecordSchema, StructOf

ENVIRONMENTS = ("rod", "vsod", "mvpn", "imagenet_c", "quickdraw", "changeit", "coco")

# Names the authors' `proactivebench` package uses for each environment (design.md §Authors' package).
OFFICIAL_DATASET_NAMES = {
    "rod": "Realistic-Occlusion-Dataset",
    "vsod": "OcclusionDataSet-MM20",
    "mvpn": "MVP-N",
    "imagenet_c": "ImageNet-C",
    "quickdraw": "QuickDraw",
    "changeit": "ChangeIt",
    "coco": "coco2014",
}

OPTION_KINDS = ("proactive", "abstain", "invalid")

STATE = StructOf(
    (
        Field("frame", "int32", "Index into `frames` shown in this state."),
        Field("option_ids", ListOf("int32"), "Indices into `options` shown in this state, in order."),
        Field(
            "next_states",
            ListOf("int32"),
            "Aligned with option_ids: the state a chosen option leads to; -1 ends the episode "
            "as wrong (abstain, invalid suggestion).",
        ),
    )
)

PROBE_RESULT = StructOf(
    (
        Field("model", "string", "Probe model name."),
        Field("backend", "string", "openai | gemini | precomputed | clip"),
        Field("status", "string", "answered | failed"),
        Field("raw_answer", "string", "The model's raw first-turn text ('' when failed)."),
        Field("parsed", "string", "Option text the answer was parsed to ('' if it matched none)."),
        Field("correct", "bool", "Parsed answer is the correct category."),
    )
)

NEGATIVE = StructOf(
    (
        Field("category", "string", "Wrong category offered as an option."),
        Field("score", "float64", "Similarity to the correct category (0 when drawn at random)."),
    )
)

EPISODE = RecordSchema(
    name="proactivebench_episode",
    version="1.0.0",
    doc="One ProactiveBench MCQA episode with its environment graph (ProactiveBench §3.1, App. 0.A).",
    fields=(
        Field("id", "string", "Unique sample id: '<environment>/<source id>'."),
        Field("environment", "string", f"One of {', '.join(ENVIRONMENTS)}."),
        Field("source_dataset", "string", "Dataset name as in the authors' package."),
        Field("source_id", "string", "Id of the item in its source dataset."),
        Field("frames", ListOf(IMAGE), "The ordered frame sequence (embedded image bytes)."),
        Field("frame_sources", ListOf("string"), "Where each frame came from (relative path + op)."),
        Field("question", "string", "Question drawn from the environment's pool."),
        Field("hint", "string", "Environment hint (ProactiveBench §4.3), appended when hints are on."),
        Field("options", ListOf("string"), "Proactive, abstain and invalid options, fixed order."),
        Field("option_kinds", ListOf("string"), "Per option: proactive | abstain | invalid."),
        Field("option_actions", ListOf("string"), "Per option: the action it triggers ('' if none)."),
        Field("categories", ListOf("string"), "Four category options, fixed shuffled order."),
        Field("answer", "string", "The correct category (one of `categories`)."),
        Field("negatives", ListOf(NEGATIVE), "Wrong categories with their mining scores."),
        Field("negative_strategy", "string", "random | similar | clip_text."),
        Field("states", ListOf(STATE), "Environment states (see module doc)."),
        Field("start_state", "int32", "State the episode starts in (least informative frame)."),
        Field("goal_states", ListOf("int32"), "States where the question is answerable."),
        Field("void_states", ListOf("int32"), "States where a correct category counts as wrong."),
        Field("reference_frame", "int32", "Frame with complete information (reference setting)."),
        Field("max_steps", "int32", "Proactive suggestions allowed before the episode fails."),
        Field("first_turn_prompt", "string", "The full MCQA prompt of the first state, no hint."),
        Field("oeg_selected", "bool", "In the open-ended subset (App. 0.B: 100 per environment)."),
        Field("oeg_valid_suggestions", ListOf("string"), "Expanded valid suggestions for OEG."),
        Field("probe_results", ListOf(PROBE_RESULT), "First-turn answers of the leak-filter pool."),
        Field("source_metadata", "string", "Per-dataset fields as a JSON object (sorted keys)."),
    ),
)

FILTERED_EPISODE = EPISODE.extend(
    "proactivebench_filtered_episode",
    "An episode removed by a named filter, with its evidence.",
    Field("filter_name", "string", "Filter that removed it (e.g. leak_filter)."),
    Field("filter_reason", "string", "Why, in words."),
    Field("filter_evidence", "string", "Evidence as JSON (e.g. per-model first-turn answers)."),
)

# -- the training split (ProactiveBench §5) ----------------------------------------------------------
TRAIN_SPLIT = "train"
TRAIN_PREFIX = "train/"  # counts groups of the training split: train/<environment>
# §5: "We train models using two scenarios, QuickDraw and COCO"
TRAIN_ENVIRONMENTS = ("coco", "quickdraw")

CONTENT_PART = StructOf(
    (
        Field("type", "string", "'image' (a placeholder for the next entry of `images`) or 'text'."),
        Field("text", "string", "The text of a 'text' part; null for an 'image' part.", nullable=True),
    )
)

MESSAGE = StructOf(
    (
        Field("content", ListOf(CONTENT_PART), "The message's parts, in order."),
        Field("role", "string", "'user' (the one turn a training row holds)."),
    )
)

TRAIN_ROW = RecordSchema(
    name="proactivebench_train_row",
    version="1.0.0",
    doc="One frame of a ProactiveBench sequence as a single-turn MCQA training prompt for GRPO "
        "(ProactiveBench §5). The first five fields carry the names and types of the authors' "
        "released training set, so GRPO trainers read the split as it is.",
    fields=(
        Field("prompt", ListOf(MESSAGE), "The chat: one user message, the frame (an 'image' part) "
                                         "then the MCQA text in the evaluation's format."),
        Field("ground_truth", "string", "The correct category (one of `options`)."),
        Field("proactive_actions", ListOf("string"),
              "The options that are valid proactive suggestions in this frame (they lead to a more "
              "informative frame); empty where the answer is visible."),
        Field("options", ListOf("string"), "Every option the prompt shows, in letter order (A, B, "
                                           "…): this frame's suggestions and abstain option, then "
                                           "the four categories."),
        Field("images", ListOf(IMAGE), "The frame the prompt shows (one image)."),
        Field("id", "string", "Unique row id: '<sequence_id>#<frame>'."),
        Field("sequence_id", "string", "The sequence ('<environment>/<source id>'): rows of one "
                                       "sequence share it."),
        Field("environment", "string", f"One of {', '.join(TRAIN_ENVIRONMENTS)}."),
        Field("source_id", "string", "Id of the item in its source dataset."),
        Field("frame", "int32", "Index of the shown frame in the sequence (0 = least informative)."),
        Field("num_frames", "int32", "Frames in the sequence."),
        Field("ambiguous", "bool", "True: the answer is not visible in this frame and needs a "
                                   "proactive step first; False: the frame is a reference frame."),
        Field("source_sha256", "string", "sha256 of the decoded source content (COCO: the image's "
                                         "pixels; QuickDraw: the stroke data): the key that proves "
                                         "the split held out from the evaluation split."),
        Field("frame_source", "string", "Where the frame came from (relative path + operation)."),
    ),
)
