"""The Benchmark contract switches no check off by default: a benchmark that forgets its data-quality
suites, its training split's suites or what each source yielded stops with an error naming what is
missing, instead of a gate with no expectation or a build that never checks for an empty source; a
benchmark switches its suites off only by saying so (``NO_SUITES``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.common.assembly import release_suites
from pipelines.common.benchmark import NO_SUITES, Benchmark, Info, Quality, Review, Sources
from pipelines.registry import BENCHMARKS, benchmark
from tests.support.parts import NoSources, NoSteps, bare


class Forgetful(Sources[None]):
    """Resolves its sources but does not say what each yielded."""

    def prepare(self, ctx, info):  # type: ignore[no-untyped-def]
        return None


def test_a_source_yield_left_out_is_an_error_naming_it() -> None:
    """Its sources cannot even be declared: the error names the method, before any build."""
    with pytest.raises(TypeError, match="abstract method source_yield"):
        Forgetful()  # type: ignore[abstract]


def test_suites_left_out_are_an_error_naming_them() -> None:
    """No part gives suites by default: neither the benchmark (``quality``) nor the part."""
    with pytest.raises(TypeError, match="quality"):
        Benchmark(info=Info(name="forgetful", title="Forgetful", citation="@misc{forgetful}"),  # type: ignore[call-arg]
                  sources=NoSources(), build=NoSteps(), demo=None)
    with pytest.raises(TypeError, match="suites"):
        Quality()  # type: ignore[call-arg]


def test_no_suites_is_said_and_a_training_split_needs_its_own() -> None:
    """Declares its evaluation suites (none, said explicitly) but not its training split's."""
    trained = bare("trained")
    assert release_suites(trained, Path("r"), {"counts": {}}) == []
    with pytest.raises(NotImplementedError) as err:
        release_suites(trained, Path("r"), {"counts": {}, "train": {}})
    assert str(err.value) == ("trained publishes a training split without its suites "
                              "(Quality.training_suites)")


def test_a_review_says_whether_the_release_waits_for_it() -> None:
    """``pending`` has no default: a review held beside the build says ``pending=None``."""
    with pytest.raises(TypeError, match="pending"):
        Review(rubrics=())  # type: ignore[call-arg]
    assert not bare("unreviewed").reviewed
    assert benchmark("streamvibe").reviewed and benchmark("proready").reviewed
    proactive = benchmark("proactivebench")
    assert proactive.review is not None and proactive.review.rubrics and not proactive.reviewed


def test_every_benchmark_says_what_its_checks_are() -> None:
    """The benchmarks declare their suites themselves (their source yields are required of their
    :class:`Sources`); only a benchmark with a training split declares its training suites."""
    for name in BENCHMARKS:
        found = benchmark(name)
        assert isinstance(found.quality, Quality) and found.quality.suites is not NO_SUITES, name
        assert (found.quality.training_suites is not None) == bool(found.build.train_prefix), name
