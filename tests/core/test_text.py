"""Strict text reading: a line that is not UTF-8 is bad input for that line, never "replaced"."""

from __future__ import annotations

import json

import pytest

from core.errors import BadInput
from core.text import csv_rows, json_error, json_value, utf8_lines, utf8_text, yaml_value


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


def test_json_value_turns_every_parser_failure_into_bad_input() -> None:
    """json.loads raises ValueError (not JSONDecodeError) past 4300 digits and RecursionError for
    deep nesting; both escaped the readers' ``except JSONDecodeError`` as tracebacks."""
    assert json_value('{"a": [1, 2.5]}', "m.json") == {"a": [1, 2.5]}
    cases = {
        '{"a": ' + "9" * 5000 + "}": ("json", "malformed JSON: an integer of 5000 digits, more than "
                                              "Python reads (4300 digits)"),
        "[" * 100_000 + "]" * 100_000: ("json", "malformed JSON: lists or mappings nested too "
                                                "deeply to read"),
        b'{"a": "caf\xe9"}': ("utf-8", "not valid UTF-8 (invalid continuation byte at byte 10)"),
        '{"a": 1': ("json", "malformed JSON: Expecting ',' delimiter: line 1 column 8"),
    }
    for data, (field, reason) in cases.items():
        with pytest.raises(BadInput) as err:
            json_value(data, "m.json")
        assert (err.value.source_file, err.value.field, err.value.reason) == ("m.json", field, reason)
    with pytest.raises(BadInput) as err:
        json_value('{"a": 1', "m.jsonl:3", one_line=True)
    assert err.value.reason == "malformed JSON: Expecting ',' delimiter: column 8"


def test_yaml_value_turns_every_parser_failure_into_bad_input() -> None:
    assert yaml_value("videos: [{id: a, t: .nan}]", "m.yaml")["videos"][0]["id"] == "a"
    for text, reason in (("a: " + "9" * 5000, "not valid YAML: an integer of 5000 digits, more "
                                              "than Python reads (4300 digits)"),
                         ("a: " + "[" * 100_000, "not valid YAML: lists or mappings nested too "
                                                 "deeply to read")):
        with pytest.raises(BadInput) as err:
            yaml_value(text, "m.yaml")
        assert (err.value.source_file, err.value.field, err.value.reason) == ("m.yaml", "yaml", reason)
    with pytest.raises(BadInput) as err:
        yaml_value("a: [1, 2", "m.yaml")
    assert err.value.reason.startswith("not valid YAML: while parsing a flow sequence")


def test_csv_rows_number_lines_and_name_the_row_the_module_refuses() -> None:
    text = 'a,b\n\n"c\nd",e\nf,g\n'
    assert list(csv_rows(text, "x.csv")) == [(1, ["a", "b"]), (2, []), (3, ["c\nd", "e"]), (5, ["f", "g"])]
    rows = csv_rows("0,0\n1," + "2" * 200_000 + "\n2,1\n", "a.fps1.csv", field="second,label")
    assert next(rows) == (1, ["0", "0"])
    with pytest.raises(BadInput) as err:
        next(rows)
    assert (err.value.source_file, err.value.field, err.value.reason) == (
        "a.fps1.csv:2", "second,label", "malformed CSV: field larger than field limit (131072)")
