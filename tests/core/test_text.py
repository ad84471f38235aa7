"""Strict text reading: a line that is not UTF-8 is bad input for that line, never "replaced"."""

from __future__ import annotations

import json

import pytest

from core.errors import BadInput
from core.text import json_error, utf8_lines, utf8_text


def test_lines_are_strict_utf8_and_numbered_like_the_file() -> None:
    data = b'{"a": 1}\n\n{"c": "U\xffS"}\r\n{"d": "x\xe2\x80\xa8y"}\n'  # U+2028 inside a string
    out = list(utf8_lines(data, "f.ndjson"))
    assert [n for n, _ in out] == [1, 3, 4]
    assert out[0][1] == '{"a": 1}' and json.loads(out[2][1]) == {"d": "x\u2028y"}
    bad = out[1][1]
    assert isinstance(bad, BadInput)
    assert (bad.source_file, bad.field) == ("f.ndjson:3", "utf-8")
    assert bad.reason == "not valid UTF-8: byte 0xff at column 9 (invalid start byte)"


def test_whole_file_names_the_line() -> None:
    assert utf8_text("é\n".encode(), "a.csv") == "é\n"
    with pytest.raises(BadInput) as err:
        utf8_text(b"ok\nb\xe9d\n", "a.csv")
    assert err.value.reason == "not valid UTF-8: byte 0xe9 on line 2 (invalid continuation byte)"


def test_json_errors_read_as_one_sentence() -> None:
    with pytest.raises(json.JSONDecodeError) as err:
        json.loads('{"word": "ca')
    assert json_error(err.value) == "malformed JSON: Unterminated string starting at: line 1 column 10"
    assert json_error(err.value, one_line=True) == "malformed JSON: Unterminated string starting at: " \
                                                   "column 10"
