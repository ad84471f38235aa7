"""The ProactiveBench Beam pipeline: read → build episode → self-check → (leak filter) → write.

Each step is a small named PTransform; nothing keeps local state, and all files go through Beam
file systems, so the pipeline runs on the embedded FnApiRunner (default, design.md §Environment) or any Beam
runner. The driver (:mod:`pipelines.proactivebench.build`) turns the staged output into a
release.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any

import apache_beam as beam
from apache_beam.pvalue import AsDict, TaggedOutput

from core.blobs import blob_root
from core.errors import BadInput, Rejection
from core.seeding import seed_bytes
from pipelines.common.outcomes import Outcomes
from pipelines.common.progress import ReportProgress, ReportsProgress
from pipelines.common.sources import SourceItem, SourceReader
from pipelines.common.transforms import (
    REJECTED,
    ReadSources,
    WriteShardedParquet,
)
from pipelines.proactivebench.build_facts import NEGATIVES, NOTES, SOURCES
from pipelines.proactivebench.episodes import BuildConfig, build_episode
from pipelines.proactivebench.selfcheck import self_check
from schemas.proactivebench import EPISODE, FILTERED_EPISODE

BENCHMARK = "proactivebench"
FILTERED = "filtered"


@dataclass(frozen=True)
class PipelineConfig:
    staging: str
    split: str
    build: BuildConfig
    open_ended_per_environment: int = 100
    clip: dict[str, Any] | None = None  # HardNegativeMiner settings, None = no CLIP miner
    probes_config: str | None = None  # leak-filter probe pool (YAML path), None = not applied
    run_id: str = ""  # tags the probe cache's usage log so the report sums all workers
    probe_batch_size: int = 16


def vocabulary_for(item: SourceItem, base_vocab: dict[str, list[str]]) -> list[str]:
    """Labels wrong options are drawn from: the item's own question type's labels when the
    source has question types (VSOD names vs counts vs events, ChangeIt objects vs actions —
    ProactiveBench App. 0.A.2, 0.A.6), else the dataset's full label set."""
    if "question_type" in item.metadata:
        return sorted(item.metadata.get("type_vocabulary", []))
    return base_vocab.get(item.environment, [])


def make_miner(clip: dict[str, Any]):
    """The CLIP hard-negative miner from config settings (``filtering.negatives``).

    ``model_config`` (optional) is a directory or JSON file of open_clip model configs to
    register first — how tests use a tiny architecture, and how a team adds its own.
    """
    import open_clip

    from filtering.negatives import HardNegativeMiner

    settings = dict(clip)
    model_config = settings.pop("model_config", None)
    if model_config:
        open_clip.add_model_config(model_config)
    return HardNegativeMiner(**settings)


def miner_function(clip: dict[str, Any] | None):
    """``(correct, vocab, k) → wrong options`` of the configured CLIP miner, or None (random
    negatives). Called in a DoFn's ``setup``, so the model loads once per worker."""
    if not clip:
        return None
    miner = make_miner(clip)
    return lambda correct, vocab, k: miner.mine(correct, vocab, k=k)


class BuildEpisodes(beam.DoFn):
    """SourceItem → EPISODE record; unusable items become rejections (stage ``build``)."""

    def __init__(self, config: BuildConfig, clip: dict[str, Any] | None) -> None:
        self.config = config
        self.clip = clip
        self.miner = None

    def setup(self) -> None:
        self.miner = miner_function(self.clip)

    def process(self, item: SourceItem, base_vocab: dict):
        try:
            yield build_episode(item, vocabulary_for(item, base_vocab), self.config, self.miner)
        except BadInput as err:
            yield TaggedOutput(
                REJECTED,
                Rejection.from_bad_input(
                    err, benchmark=BENCHMARK, environment=item.environment, stage="build",
                    item_id=item.source_id,
                ),
            )


class SelfCheck(beam.DoFn):
    """Replay with oracle / always-abstain / always-proactive policies: a self-check that every
    episode ends as its graph says."""

    def process(self, episode: dict):
        reason = self_check(episode)
        if reason is None:
            yield episode
            return
        yield TaggedOutput(
            REJECTED,
            Rejection(
                item_id=episode["source_id"], benchmark=BENCHMARK,
                environment=episode["environment"], stage="self_check",
                source_file=episode["frame_sources"][0].split("#")[0], field="states",
                reason=reason,
            ),
        )


def probe_pool(path: str) -> Any:
    """The probe pool file (:class:`filtering.leak.LeakFilterConfig`) read where the pipeline is
    built, its relative paths (``models.cache_dir``, a precomputed probe's ``path``) made absolute
    against this working directory. Why here: the workers that run the filter may run in working
    directories of their own (a Flink or Spark task manager, Beam's external worker pool), where
    the same relative path names another folder, or none."""
    from filtering.leak import LeakFilterConfig

    def absolute(p: str) -> str:
        return p if "://" in p else os.path.abspath(p)

    cfg = LeakFilterConfig.from_yaml(path)
    models = cfg.models
    if models.cache_dir:
        models = dataclasses.replace(models, cache_dir=absolute(models.cache_dir))
    probes = tuple(dataclasses.replace(p, path=absolute(p.path)) if getattr(p, "path", None) else p
                   for p in cfg.probes)
    return dataclasses.replace(cfg, models=models, probes=probes)


class LeakFilterDoFn(ReportsProgress):
    """Probe the first turn of a batch of episodes and apply the 25% rule (App. 0.A.8)."""

    def __init__(self, probes_config: str, run_id: str) -> None:
        super().__init__()
        self.probes_config = probes_config
        self.probes = probe_pool(probes_config)  # read here, in the driver; the workers get it
        self.run_id = run_id
        self.filter = None

    def setup(self) -> None:
        from filtering.leak import LeakFilter

        super().setup()  # the probes' progress reaches the driver's board
        self.filter = LeakFilter(self.probes, run_id=self.run_id)

    def teardown(self) -> None:
        if self.filter is not None:
            self.filter.close()  # the last answers of this worker reach the cache

    def process(self, batch: list[dict]):
        results = self.filter.probe(batch)
        for episode in batch:
            episode = dict(episode, probe_results=results.get(episode["id"], []))
            decision, reason, evidence = self.filter.decide(episode["probe_results"])
            route = self.filter.route(decision)  # unresolved: the configured explicit policy
            if route == "kept":
                yield episode
            elif route == "filtered":
                yield TaggedOutput(
                    FILTERED,
                    dict(episode, filter_name="leak_filter", filter_reason=reason,
                         filter_evidence=evidence),
                )
            else:  # unresolved, and the configured policy says reject
                yield TaggedOutput(
                    REJECTED,
                    Rejection(
                        item_id=episode["source_id"], benchmark=BENCHMARK,
                        environment=episode["environment"], stage="leak_filter",
                        source_file=episode["frame_sources"][0].split("#")[0],
                        field="probe_results", reason=reason,
                    ),
                )


def _oeg_rank(seed: int, episode_id: str) -> str:
    return seed_bytes(seed, episode_id, "open_ended").hex()


class SelectOpenEnded(beam.PTransform):
    """The seeded subset of N episodes per environment for open-ended evaluation (App. 0.B), as
    ``(id, True)`` pairs; :func:`mark_open_ended` marks each episode as it is written."""

    def __init__(self, per_environment: int, seed: int) -> None:
        super().__init__()
        self.per_environment = per_environment
        self.seed = seed

    def expand(self, episodes):
        seed, n = self.seed, self.per_environment
        return (
            episodes
            | "RankKey" >> beam.Map(lambda e: (e["environment"], (_oeg_rank(seed, e["id"]), e["id"])))
            | "Smallest" >> beam.combiners.Top.PerKey(n, reverse=True)
            | "Ids" >> beam.FlatMapTuple(lambda env, pairs: [(i, True) for _, i in pairs])
        )


def mark_open_ended(episode: dict[str, Any], selected: dict[str, bool]) -> dict[str, Any]:
    """``oeg_selected`` of an episode (built False) from :class:`SelectOpenEnded`'s subset."""
    return dict(episode, oeg_selected=episode["id"] in selected)


def build_pipeline(p: beam.Pipeline, readers: dict[str, SourceReader], vocab: dict[str, list[str]],
                   cfg: PipelineConfig) -> beam.PCollection:
    """Add the whole build to ``p``; outputs land under ``cfg.staging``. ``vocab`` is each
    source's label set, read before the build (:func:`pipelines.common.sources.preflight`).
    Returns the loaded source items, which a training split is held out from
    (:class:`pipelines.proactivebench.train_pipeline.BuildTrainingSplit`)."""
    blobs = blob_root(cfg.staging)
    read = p | "ReadSources" >> ReadSources(readers, blobs)
    items = read["items"]
    outcomes = Outcomes(cfg.staging, FILTERED_EPISODE)
    outcomes.counted(read["counts"])  # what the readers listed, left out and could not load
    outcomes.rejected(read["listing_rejected"], None)
    outcomes.rejected(read["load_rejected"], None)
    outcomes.filtered_inputs(read["listing_filtered"])
    sources = (
        items
        | "SourceFiles" >> beam.FlatMap(
            lambda it: [(it.environment, f"{path}\t{sha}") for path, sha in it.source_files]
        )
        | "DistinctSourceFiles" >> beam.Distinct()
    )
    # a side input: Beam's reshuffle of a Create would only add a stage (common/transforms.py)
    vocabularies = p | "Vocabularies" >> beam.Create(sorted(vocab.items()), reshuffle=False)
    built = items | "BuildEpisodes" >> beam.ParDo(
        BuildEpisodes(cfg.build, cfg.clip), base_vocab=AsDict(vocabularies)
    ).with_outputs(REJECTED, main="episodes")
    checked = built.episodes | "SelfCheck" >> beam.ParDo(SelfCheck()).with_outputs(
        REJECTED, main="episodes"
    )
    outcomes.rejected(built[REJECTED], "build")
    outcomes.rejected(checked[REJECTED], "self_check")

    episodes = checked.episodes
    if cfg.probes_config:
        probed = (
            episodes
            | "BatchForProbes" >> beam.BatchElements(
                min_batch_size=1, max_batch_size=cfg.probe_batch_size
            )
            | "LeakFilter" >> beam.ParDo(LeakFilterDoFn(cfg.probes_config, cfg.run_id)).with_outputs(
                FILTERED, REJECTED, main="episodes"
            )
        )
        episodes = probed.episodes
        outcomes.filtered(probed[FILTERED])
        outcomes.rejected(probed[REJECTED], "leak")

    kept = episodes | "ProgressKept" >> beam.ParDo(ReportProgress("episodes kept"))
    open_ended = kept | "SelectOpenEnded" >> SelectOpenEnded(cfg.open_ended_per_environment,
                                                             cfg.build.global_seed)
    outcomes.kept(kept)
    kept | "WriteKept" >> WriteShardedParquet(
        cfg.staging, lambda r: f"data/{r['environment']}", EPISODE, cfg.split,
        finish=mark_open_ended, finish_inputs={"selected": AsDict(open_ended)})
    outcomes.write()
    (
        items
        | "MediaNotes" >> beam.FlatMap(lambda it: [(it.environment, f, n) for f, n in it.notes])
        | "DistinctNotes" >> beam.Distinct()
        | "NoteRecords" >> beam.MapTuple(lambda env, f, n: {"environment": env, "file": f, "note": n})
        | "WriteNotes" >> NOTES.write(cfg.staging)
    )
    (
        sources
        | "SourceRecords" >> beam.MapTuple(
            lambda env, line: {"environment": env, "file": line.split("\t")[0],
                               "sha256": line.split("\t")[1]}
        )
        | "WriteSources" >> SOURCES.write(cfg.staging)
    )
    (
        built.episodes
        | "NegativeStrategy" >> beam.Map(lambda e: (e["environment"], e["negative_strategy"]))
        | "CountStrategy" >> beam.combiners.Count.PerElement()
        | "StrategyRecords" >> beam.MapTuple(
            lambda k, n: {"environment": k[0], "strategy": k[1], "n": n}
        )
        | "WriteStrategies" >> NEGATIVES.write(cfg.staging)
    )
    return items
