"""Strict reading of text sources: UTF-8 line by line, and JSON errors worded for people.

Why strict: decoding with ``errors="replace"`` turned a country code ``U\\xffS`` into ``U\\ufffdS``
and kept it — a corrupted value in a release that nobody was told about. A line that is not
UTF-8 is bad input for that line only (the other lines of the file are still read), named by
``<file>:<line>`` and the byte's column.

Why lines are split on bytes: ``str.splitlines`` also breaks at U+2028 and other separators that
JSON allows inside strings, which would cut one record in two and shift every later line number.

Why one parser each for JSON (:func:`json_value`), YAML (:func:`yaml_value`) and CSV
(:func:`csv_rows`): the parsers raise more than their documented error. ``json.loads`` and
PyYAML raise ``ValueError`` (not ``JSONDecodeError`` / ``YAMLError``) for an integer of more than
4300 digits — Python's limit for converting between int and str — and ``RecursionError`` for
arrays nested a few thousand deep; ``csv`` raises ``csv.Error`` for a field over 128 KiB. Readers
caught the documented error only, so one such value in an annotation file ended the build with a
traceback instead of a rejection.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

import yaml

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


def json_value(data: str | bytes, name: str, *, field: str = "json", one_line: bool = False,
               object_pairs_hook: Any = None) -> Any:
    """``json.loads(data)``, or BadInput(``name``, ``field``) for anything that stops it: malformed
    JSON (worded by :func:`json_error`), bytes that are not UTF-8 (field ``utf-8``), an integer
    longer than Python reads, nesting deeper than the parser recurses (module doc).
    ``object_pairs_hook`` is ``json.loads``'s (a reader that must see a key given twice)."""
    try:
        return json.loads(data, object_pairs_hook=object_pairs_hook)
    except json.JSONDecodeError as exc:
        raise BadInput(name, field, json_error(exc, one_line=one_line)) from exc
    except UnicodeDecodeError as exc:
        raise BadInput(name, "utf-8", f"not valid UTF-8 ({exc.reason} at byte {exc.start})") from exc
    except ValueError as exc:  # the int <-> str digit limit
        raise BadInput(name, field, f"malformed JSON: {_too_long(exc)}") from exc
    except RecursionError as exc:
        raise BadInput(name, field, f"malformed JSON: {_TOO_DEEP}") from exc


def yaml_value(text: str, name: str, field: str = "yaml") -> Any:
    """``yaml.safe_load(text)``, or BadInput(``name``, ``field``) for anything that stops it (see
    :func:`json_value`); PyYAML's own errors keep their wording, which names line and column."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise BadInput(name, field, f"not valid YAML: {exc}") from exc
    except ValueError as exc:
        raise BadInput(name, field, f"not valid YAML: {_too_long(exc)}") from exc
    except RecursionError as exc:
        raise BadInput(name, field, f"not valid YAML: {_TOO_DEEP}") from exc


_DIGIT_LIMIT = 4300  # sys.get_int_max_str_digits() by default
_TOO_DEEP = "lists or mappings nested too deeply to read"


def _too_long(exc: ValueError) -> str:
    """The digit-limit error in words for people (Python's suggests a call to make)."""
    digits = re.search(r"value has (\d+) digits", str(exc))
    what = f"an integer of {digits.group(1)} digits" if digits else str(exc)
    return f"{what}, more than Python reads ({_DIGIT_LIMIT} digits)"


def csv_rows(text: str, name: str, field: str = "csv", *, strict: bool = False
             ) -> Iterator[tuple[int, list[str]]]:
    """``(line number, cells)`` of every row of a CSV document (a row's first line when a quoted
    cell spans lines); a row the ``csv`` module refuses (a cell over its field size limit; with
    ``strict``, also a stray quote) is BadInput naming ``<name>:<line>`` — the document stops
    there, as the module cannot go on."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=strict)
    while True:
        start = reader.line_num + 1
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise BadInput(f"{name}:{start}", field, f"malformed CSV: {exc}") from exc
        yield start, row
