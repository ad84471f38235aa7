"""Every record type a release can hold is in the registry, so Croissant and release diffs can
describe any release file (a training split's SFT streams included)."""

import importlib
import pkgutil

import pytest

import schemas
from schemas.core import RecordSchema
from schemas.registry import RECORDS, record_schema


def defined_record_schemas() -> dict[str, RecordSchema]:
    found = {}
    for info in pkgutil.iter_modules(schemas.__path__):
        module = importlib.import_module(f"schemas.{info.name}")
        for value in vars(module).values():
            if isinstance(value, RecordSchema):
                found[value.name] = value
    return found


def test_every_defined_record_type_is_registered_under_its_name():
    defined = defined_record_schemas()
    assert set(defined) == {
        "filtered_input", "rejection", "review_decision",
        "proactivebench_episode", "proactivebench_filtered_episode", "proactivebench_train_row",
        "proready_candidate", "proready_filtered_item", "proready_item",
        "streamvibe_filtered", "streamvibe_pointwise", "streamvibe_rl_seed", "streamvibe_sample",
        "streamvibe_sft_stream"}
    assert set(RECORDS) == set(defined)
    for name, schema in defined.items():
        assert record_schema(name) is schema


def test_an_unknown_record_type_names_the_known_ones():
    with pytest.raises(KeyError, match="known: .*proactivebench_episode"):
        record_schema("no_such_record")
