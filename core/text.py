"""Strict reading of text sources: UTF-8 line by line, and JSON errors worded for people.

Why strict: decoding with ``errors="replace"`` turned a country code ``U\\xffS`` into ``U\\ufffdS``
and kept it — a corrupted value in a release that nobody was told about. A line that is not
UTF-8 is bad input for that line only (the other lines of the file are still read), named by
``<file>:<line>`` and the byte's column.

Why lines are split on bytes: ``str.splitlines`` also breaks at U+2028 and other separators that
JSON allows inside strings, which would cut one record in two and shift every later line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from core.errors import BadInput


def utf8_lines(data: bytes, name: str) -> Iterator[tuple[int, str | BadInput]]:
    """``(line number, text)`` for every non-blank line of ``data`` (``\\n``, ``\\r\\n`` or ``\\r``
    endings), or ``(line number, BadInput)`` for a line that is not UTF-8."""
    for lineno, raw in enumerate(data.splitlines(), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield lineno, BadInput(f"{name}:{lineno}", "utf-8",
                                   f"not valid UTF-8: byte 0x{raw[exc.start]:02x} at column "
                                   f"{exc.start + 1} ({exc.reason})")
            continue
        if line.strip():
            yield lineno, line


def utf8_text(data: bytes, name: str, field: str = "utf-8") -> str:
    """A whole file as UTF-8 (a file read as one document, e.g. YAML or CSV), else BadInput."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInput(name, field, f"not valid UTF-8: byte 0x{data[exc.start]:02x} on line {line} "
                                    f"({exc.reason})") from exc


def json_error(exc: json.JSONDecodeError, *, one_line: bool = False) -> str:
    """``malformed JSON: <what>: line L column C`` — the wording of Python's own message, whose
    parts read well together ("Unterminated string starting at: column 96"); gluing ``exc.msg``
    to "at column" gave "starting at at column 96". ``one_line``: the document is one line of a
    file its caller already names (``cat.ndjson:4``), so only the column is given."""
    where = f"column {exc.colno}" if one_line else f"line {exc.lineno} column {exc.colno}"
    return f"malformed JSON: {exc.msg}: {where}"
