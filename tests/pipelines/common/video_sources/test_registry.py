"""The registry of video datasets and what every entry must come with."""

from __future__ import annotations


def test_every_video_dataset_has_its_licence_and_terms_in_the_one_place_cards_read() -> None:
    """A dataset a video benchmark can read is listed with its licence and terms in
    configs/source_licences.yaml and named by both video benchmarks' cards."""
    import yaml

    from pipelines.common.benchmark import VIDEO_SOURCES
    from pipelines.common.video_sources import DATASETS
    from pipelines.proready.vstream_qa import VStreamQA
    from tests.pipelines.common.video_sources.conftest import ROOT

    entries = yaml.safe_load((ROOT / "configs" / "source_licences.yaml").read_text())["sources"]
    names = {*DATASETS, VStreamQA.name}
    assert names <= set(VIDEO_SOURCES) <= set(entries)
    assert entries["ego4d"]["agreement"] is True and entries["vstream_qa"]["agreement"] is True
