"""The Benchmark contract switches no check off by default: a benchmark that forgets its data-quality
suites or what each source yielded stops with an error naming what is missing, instead of a gate
with no expectation or a build that never checks for an empty source."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipelines.common.benchmark import Benchmark
from pipelines.registry import BENCHMARKS, benchmark


class Forgetful(Benchmark):
    name = "forgetful"


@pytest.mark.parametrize("call, missing", [
    (lambda b: b.suites(Path("r"), {}, {}), "defines no data-quality suites (suites)"),
    (lambda b: b.training_suites(Path("r"), {}, {}), "without its suites (training_suites)"),
    (lambda b: b.source_yield(None, {}), "does not say what each source yielded (source_yield)"),
])
def test_a_check_left_out_is_an_error_naming_it(call, missing: str) -> None:
    with pytest.raises(NotImplementedError) as err:
        call(Forgetful())
    assert str(err.value).startswith("forgetful ") and str(err.value).endswith(missing)


def test_every_benchmark_says_what_its_checks_are() -> None:
    """The three benchmarks define the hooks themselves; only a benchmark with a training split
    defines its training suites."""
    for name in BENCHMARKS:
        found = type(benchmark(name))
        assert found.suites is not Benchmark.suites and found.source_yield is not Benchmark.source_yield
        assert (found.training_suites is not Benchmark.training_suites) == bool(found.train_prefix), name
