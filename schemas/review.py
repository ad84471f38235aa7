"""Review records: one row per decision a rater made on one candidate version (StreamVibe App. B.3).

The decision log is append-only; agreement statistics, the approval rule and release provenance
all read it. Reviewer ids are pseudonymous (``r1``..``rN`` in panel order, ``gemini:<model>``
for the model reviewer) — no e-mail address ever reaches a release.
"""

from schemas.core import Field, ListOf, RecordSchema

DECISIONS = ("approve", "revise", "reject")

REVIEW_DECISION = RecordSchema(
    name="review_decision",
    version="1.0.0",
    doc="One rater's decision on one candidate version.",
    fields=(
        Field("benchmark", "string", "proactivebench | streamvibe | proready"),
        Field("review_round", "string", "Name of the review round / Label Studio project."),
        Field("sample_id", "string", "Candidate id (stable across versions)."),
        Field("version", "int32", "Candidate version (1 = the frozen first-round candidate)."),
        Field("content_hash", "string", "sha256 of the candidate content that was reviewed."),
        Field("task_type", "string", "Intent subtype / task type, for per-type agreement."),
        Field("reviewer", "string", "Pseudonymous rater id (r1..rN, or gemini:<model>)."),
        Field("rater_kind", "string", "human | model"),
        Field("decision", "string", f"One of {', '.join(DECISIONS)}."),
        Field("criteria", ListOf("string"), "Rubric criteria the rater marked as satisfied."),
        Field("comment", "string", "Free-text comment ('' if none)."),
        Field("lead_time", "float64", "Seconds spent (Label Studio lead_time; 0 for models)."),
        Field("created_at", "string", "ISO-8601 time the decision was first stored."),
        Field("source_task_id", "int64", "Label Studio task id (-1 for model raters)."),
        Field("source_annotation_id", "int64", "Label Studio annotation id (-1 for models)."),
    ),
)
