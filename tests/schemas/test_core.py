"""The three views of a schema (Arrow, HF Features, JSON Schema) agree with each other."""

import io
import json

import jsonschema
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from schemas.core import Field, ListOf, RecordSchema
from schemas.outcomes import REJECTION
from schemas.proactivebench import EPISODE, FILTERED_EPISODE
from schemas.review import REVIEW_DECISION


def png(color):
    buf = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(buf, format="PNG")
    return buf.getvalue()


def minimal_episode():
    return {
        "id": "quickdraw/1", "environment": "quickdraw", "source_dataset": "QuickDraw",
        "source_id": "1", "frames": [{"bytes": png("red"), "path": "a.png"},
                                     {"bytes": png("blue"), "path": "b.png"}],
        "frame_sources": ["cat.ndjson#1", "cat.ndjson#2"], "question": "What is it?",
        "hint": "Hint.", "options": ["Add details.", "I do not know."],
        "option_kinds": ["proactive", "abstain"], "option_actions": ["details", ""],
        "categories": ["cat", "dog", "cow", "pig"], "answer": "cat",
        "negatives": [{"category": "dog", "score": 0.0}], "negative_strategy": "random",
        "states": [{"frame": 0, "option_ids": [0, 1], "next_states": [1, -1]},
                   {"frame": 1, "option_ids": [0, 1], "next_states": [-1, -1]}],
        "start_state": 0, "goal_states": [1], "void_states": [], "reference_frame": 1,
        "max_steps": 2, "first_turn_prompt": "p", "oeg_selected": False,
        "oeg_valid_suggestions": ["Add details."], "probe_results": [], "source_metadata": "{}",
    }


def test_hf_features_match_arrow_and_decode_images(tmp_path):
    from datasets import Dataset

    record = minimal_episode()
    EPISODE.validate(record)
    table = pa.Table.from_pylist([record], schema=EPISODE.arrow_schema())
    pq.write_table(table, tmp_path / "x.parquet")
    ds = Dataset.from_parquet(str(tmp_path / "x.parquet"))
    assert ds.features == EPISODE.hf_features()
    frame = ds[0]["frames"][1]
    assert isinstance(frame, Image.Image) and frame.size == (8, 6)
    assert frame.getpixel((0, 0)) == (0, 0, 255)


def test_json_schema_accepts_a_record_and_names_a_bad_field():
    schema = EPISODE.json_schema()
    record = minimal_episode()
    record["frames"] = [{"bytes": "AAAA", "path": "a.png"}]  # JSON form: base64 string
    jsonschema.validate(record, schema)
    record["max_steps"] = "two"
    with pytest.raises(jsonschema.ValidationError, match="two"):
        jsonschema.validate(record, schema)


def test_validate_names_missing_and_unknown_fields():
    record = minimal_episode()
    del record["answer"]
    with pytest.raises(ValueError, match="answer"):
        EPISODE.validate(record)
    with pytest.raises(ValueError, match="bogus"):
        EPISODE.validate({**minimal_episode(), "bogus": 1})


def test_every_schema_derives_all_views():
    for schema in (EPISODE, FILTERED_EPISODE, REJECTION, REVIEW_DECISION):
        arrow = schema.arrow_schema()
        assert arrow.names == schema.names
        meta = json.loads(arrow.metadata[b"huggingface"])
        assert list(meta["info"]["features"]) == schema.names
        assert schema.json_schema()["required"] == schema.names
        assert schema.hf_features() is not None
    assert FILTERED_EPISODE.names[: len(EPISODE.names)] == EPISODE.names


def test_duplicate_field_names_are_refused():
    with pytest.raises(ValueError, match="duplicate"):
        RecordSchema("x", "1", "", (Field("a", "string", ""), Field("a", ListOf("int32"), "")))
