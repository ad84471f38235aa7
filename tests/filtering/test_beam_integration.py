"""The integration contract with the Beam pipeline: ``LeakFilter`` built in a DoFn's ``setup()``
from the config path, ``probe`` on ``BatchElements`` batches, ``decide``/``route`` per episode,
and one usage total across batches via the cache's usage log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from filtering.leak import LeakFilter
from tests.filtering.conftest import letter_of, make_episode
from tests.support.protocol_server import ProtocolServer


def test_leak_filter_inside_beam_batches(tmp_path: Path, server: ProtocolServer) -> None:
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions
    from apache_beam.testing.util import assert_that, equal_to

    episodes = [make_episode(f"b{i}") for i in range(7)]
    leaky = {episodes[0]["id"], episodes[3]["id"]}
    by_prompt = {ep["first_turn_prompt"]: ep for ep in episodes}
    server.answer = lambda c: (letter_of(by_prompt[c.prompt], "cat") if by_prompt[c.prompt]["id"] in leaky
                               else "C")
    cfg_path = tmp_path / "probes.yaml"
    cfg_path.write_text(
        yaml.safe_dump(
            {
                "leak_filter": {"unresolved_policy": "reject", "progress": False},
                "models": {"cache_dir": str(tmp_path / "cache")},
                "probes": [
                    {"backend": "openai", "model": "oa-1", "base_url": server.openai_base_url},
                    {"backend": "gemini", "model": "gm-1", "base_url": server.base_url},
                ],
            }
        )
    )

    class ProbeDoFn(beam.DoFn):
        def __init__(self, path: str) -> None:
            self.path = path

        def setup(self) -> None:
            self.lf = LeakFilter(self.path, run_id="beam-test")

        def process(self, batch: list[dict[str, Any]]):
            results = self.lf.probe(batch)
            for ep in batch:
                decision, _, _ = self.lf.decide(results[ep["id"]])
                yield ep["id"], self.lf.route(decision)

        def teardown(self) -> None:
            self.lf.close()

    with beam.Pipeline(options=PipelineOptions(["--runner=FnApiRunner"])) as p:
        out = (
            p
            | beam.Create(episodes)
            | beam.BatchElements(min_batch_size=3, max_batch_size=3)
            | beam.ParDo(ProbeDoFn(str(cfg_path)))
        )
        assert_that(
            out, equal_to([(ep["id"], "filtered" if ep["id"] in leaky else "kept") for ep in episodes])
        )
    assert server.count() == 14
    usage = LeakFilter(str(cfg_path), run_id="beam-test").usage()
    assert usage["oa-1"]["requests"] == 7 and usage["gm-1"]["requests"] == 7
