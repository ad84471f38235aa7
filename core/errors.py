"""Bad input is an expected outcome, not a crash: it becomes a rejection naming file and field."""

from __future__ import annotations

from dataclasses import dataclass


class BadInput(Exception):
    """Raised by readers and builders for input that cannot become a sample.

    ``source_file`` is relative to the source root when possible; ``field`` names the JSON key,
    column, frame index or byte range that is wrong.
    """

    def __init__(self, source_file: str, field: str, reason: str, item_id: str = "") -> None:
        self.source_file = source_file
        self.field = field
        self.reason = reason
        self.item_id = item_id
        super().__init__(f"{source_file}: {field}: {reason}")


@dataclass(frozen=True)
class Rejection:
    """A rejected input item (see :data:`schemas.outcomes.REJECTION`)."""

    item_id: str
    benchmark: str
    environment: str
    stage: str
    source_file: str
    field: str
    reason: str

    def to_record(self) -> dict[str, str]:
        return {
            "item_id": self.item_id,
            "benchmark": self.benchmark,
            "environment": self.environment,
            "stage": self.stage,
            "source_file": self.source_file,
            "field": self.field,
            "reason": self.reason,
        }

    @classmethod
    def from_bad_input(
        cls, err: BadInput, *, benchmark: str, environment: str, stage: str, item_id: str = ""
    ) -> Rejection:
        return cls(
            item_id=err.item_id or item_id,
            benchmark=benchmark,
            environment=environment,
            stage=stage,
            source_file=err.source_file,
            field=err.field,
            reason=err.reason,
        )
