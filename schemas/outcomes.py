"""Records for items that did not make it into a release (design.md §Conventions "Nothing lost").

Every input item ends as exactly one of kept, filtered or rejected. Rejections carry the file and
the field that was wrong so a person can fix the source; they are written next to the release.
"""

from schemas.core import Field, RecordSchema

REJECTION = RecordSchema(
    name="rejection",
    version="1.0.0",
    doc="An input item that could not be turned into a sample, with the reason.",
    fields=(
        Field("item_id", "string", "Id of the input item (as far as it could be read)."),
        Field("benchmark", "string", "Benchmark being built."),
        Field("environment", "string", "Environment / subset the item was meant for."),
        Field("stage", "string", "Pipeline stage that rejected it (read, build, self_check, ...)."),
        Field("source_file", "string", "File the bad input came from (relative to the source root)."),
        Field("field", "string", "Field or part of the file that is wrong."),
        Field("reason", "string", "Human-readable reason."),
    ),
)

FILTERED_INPUT = RecordSchema(
    name="filtered_input",
    version="1.0.0",
    doc="A source item a named selection rule of the dataset left out before it became a sample "
        "(e.g. a multi-object COCO image, an unrecognized QuickDraw drawing).",
    fields=(
        Field("item_id", "string", "Id of the input item."),
        Field("benchmark", "string", "Benchmark being built."),
        Field("environment", "string", "Environment / subset the item was read for."),
        Field("stage", "string", "Pipeline stage that left it out (enumerate)."),
        Field("source_file", "string", "File the item came from (relative to the source root)."),
        Field("rule", "string", "The selection rule, e.g. 'multi-object image', 'recognized: false'."),
        Field("reason", "string", "Human-readable reason."),
        Field("count", "int64", "Source items this row stands for (1, or a per-file summary of a "
                                "sampling rule such as 'per-class sample')."),
    ),
)
