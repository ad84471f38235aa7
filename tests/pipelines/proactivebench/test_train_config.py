"""``configs/proactivebench/train.yaml`` checked: the shipped file normalised as the manifest records
it, and every wrong value stopped naming the file and the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.proactivebench.train_config import load_train_config

REPO = Path(__file__).resolve().parents[3]


def test_the_shipped_config() -> None:
    assert load_train_config(REPO / "configs" / "proactivebench" / "train.yaml") == {
        "version": 1,
        "sources": {"coco": {"path": "coco", "split": "train2014"},
                    "quickdraw": {"path": "quickdraw_train", "per_class": 20, "order": "descending"}},
        "rows_per_sequence": {"ambiguous": 2, "unambiguous": 1},
        "hint": False,
        "reward": {"r_c": 1.0, "r_p": 0.75, "r_w": 0.0},
    }


@pytest.mark.parametrize("text, message", [
    ("sources: {imagenet_c: {}}", "unknown training source 'imagenet_c'; ProactiveBench §5 trains on"),
    ("sources: {coco: {split: train2014, size: 3}}", "sources.coco: unknown keys \\['size'\\]"),
    ("sources: {quickdraw: {order: random}}", "quickdraw.order: one of \\['ascending', 'descending'\\]"),
    ("sources: {quickdraw: {per_class: 0}}", "quickdraw.per_class: at least 1"),
    ("rows_per_sequence: {ambiguous: 0, unambiguous: 0}", "both 0 \\(no rows\\)"),
    ("rows_per_sequence: {ambiguous: -1}", "rows_per_sequence.ambiguous: a whole number >= 0"),
    ("reward: {r_p: 1.5}", "reward.r_p: a number in \\[0, 1\\]"),
    ("reward: {r_c: 2}", "r_c = 1 and r_w = 0 are the paper's"),
    ("hint: yes please", "hint: true or false"),
    ("epochs: 3", "unknown keys \\['epochs'\\]"),
])
def test_a_wrong_value_names_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "train.yaml"
    path.write_text(text + "\n")
    with pytest.raises(SystemExit, match=message) as err:
        load_train_config(path)
    assert str(path) in str(err.value)
