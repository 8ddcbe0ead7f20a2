"""Latency distributions: whole milliseconds >= 0, drawn from the stream passed in
(DESIGN, "Determinism rules": all randomness from seeded named streams)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clearing_sim.domain.latency import (
    Exponential,
    Fixed,
    Latency,
    LogNormal,
    Uniform,
    parse_latency,
)

SAMPLES = 200

distributions = st.one_of(
    st.builds(Fixed, st.integers(0, 10**7)),
    st.integers(0, 10**6).flatmap(
        lambda low: st.builds(Uniform, st.just(low), st.integers(low, low + 10**6))),
    st.builds(Exponential, st.integers(1, 10**6)),
    st.builds(LogNormal, st.integers(1, 10**6), st.floats(0, 2),
              st.one_of(st.none(), st.integers(0, 10**7))),
)


def samples(latency: Latency, seed: int, n: int = SAMPLES) -> list[int]:
    rng = random.Random(seed)
    return [latency.sample(rng) for _ in range(n)]


@settings(max_examples=60)
@given(distributions, st.integers(0, 2**32))
def test_samples_are_whole_milliseconds_not_negative(latency: Latency, seed: int) -> None:
    drawn = samples(latency, seed, 20)
    assert all(type(v) is int and v >= 0 for v in drawn)


@settings(max_examples=60)
@given(distributions, st.integers(0, 2**32))
def test_samples_are_deterministic_for_a_seeded_random(latency: Latency, seed: int) -> None:
    assert samples(latency, seed, 20) == samples(latency, seed, 20)


def test_fixed_is_fixed() -> None:
    assert set(samples(Fixed(250), 1)) == {250}


def test_uniform_stays_within_its_bounds() -> None:
    drawn = samples(Uniform(400, 1_600), 7)
    assert min(drawn) >= 400
    assert max(drawn) <= 1_600
    assert len(set(drawn)) > 1


def test_exponential_is_around_its_mean() -> None:
    drawn = samples(Exponential(1_000), 3, 2_000)
    assert 800 < sum(drawn) / len(drawn) < 1_200


@settings(max_examples=50)
@given(st.integers(1, 10**5), st.floats(0, 3), st.integers(0, 10**5), st.integers(0, 2**32))
def test_lognormal_respects_max_ms(median: int, sigma: float, cap: int, seed: int) -> None:
    assert max(samples(LogNormal(median, sigma, cap), seed, 50)) <= cap


def test_lognormal_median_is_its_median() -> None:
    drawn = sorted(samples(LogNormal(2_000, 0.5), 11, 2_001))
    assert 1_800 < drawn[1_000] < 2_200


@settings(max_examples=60)
@given(st.integers(1, 10**6), st.floats(0, 2), st.one_of(st.none(), st.integers(0, 10**7)),
       st.integers(0, 2**32))
def test_lognormal_draws_what_the_standard_librarys_lognormvariate_draws(
        median: int, sigma: float, cap: int | None, seed: int) -> None:
    """The log keeps its bytes (issue 18): the sample is the stdlib's draw, rounded and capped."""
    rng = random.Random(seed)
    expected = [round(rng.lognormvariate(math.log(median), sigma)) for _ in range(20)]
    if cap is not None:
        expected = [min(v, cap) for v in expected]
    assert samples(LogNormal(median, sigma, cap), seed, 20) == expected


@settings(max_examples=60)
@given(st.integers(0, 10**7), st.integers(0, 10**7), st.integers(0, 2**32))
def test_uniform_draws_what_the_standard_librarys_randint_draws(
        low: int, span: int, seed: int) -> None:
    """The log keeps its bytes (issue 18): the sample is ``randint``'s draw, the stream left
    where ``randint`` leaves it."""
    rng = random.Random(seed)
    expected = [rng.randint(low, low + span) for _ in range(20)]
    after = rng.random()
    rng = random.Random(seed)
    assert [Uniform(low, low + span).sample(rng) for _ in range(20)] == expected
    assert rng.random() == after


def test_uniform_of_one_value_draws_as_randint_does() -> None:
    drawn, reference = random.Random(7), random.Random(7)
    assert [Uniform(5, 5).sample(drawn) for _ in range(10)] == [5] * 10
    for _ in range(10):
        reference.randint(5, 5)
    assert drawn.random() == reference.random()


def test_different_seeds_give_different_draws() -> None:
    assert samples(LogNormal(2_000, 0.5), 1) != samples(LogNormal(2_000, 0.5), 2)


@pytest.mark.parametrize("make", [
    lambda: Fixed(-1), lambda: Uniform(-1, 5), lambda: Uniform(0, -5), lambda: Exponential(0),
    lambda: LogNormal(0), lambda: LogNormal(100, -0.1),
], ids=["fixed<0", "uniform low<0", "uniform high<0", "exponential 0", "lognormal 0",
        "sigma<0"])
def test_constructors_refuse_negative_or_zero_parameters(make: object) -> None:
    with pytest.raises(ValueError):
        make()  # type: ignore[operator]


def test_lognormal_refuses_a_negative_max() -> None:
    with pytest.raises(ValueError):
        parse_latency({"lognormal": {"median": 100, "max": -1}})


@pytest.mark.parametrize(("spec", "expected"), [
    ("5s", Fixed(5_000)),
    (250, Fixed(250)),
    ({"fixed": "5s"}, Fixed(5_000)),
    ({"fixed": 12}, Fixed(12)),
    ({"uniform": ["1s", "3s"]}, Uniform(1_000, 3_000)),
    ({"uniform": [100, "1s"]}, Uniform(100, 1_000)),
    ({"exponential": "2s"}, Exponential(2_000)),
    ({"lognormal": {"median": "2s", "sigma": 0.5, "max": "30s"}}, LogNormal(2_000, 0.5, 30_000)),
    ({"lognormal": {"median": "2s"}}, LogNormal(2_000, 0.5, None)),
    ({"lognormal": {"median": 400, "sigma": 1}}, LogNormal(400, 1.0, None)),
], ids=repr)
def test_parse_latency_forms(spec: object, expected: Latency) -> None:
    assert parse_latency(spec) == expected


@pytest.mark.parametrize("spec", [
    True, 1.5, None, [], ["1s"], {}, "5 seconds", "fast", -5,
    {"fixed": 1, "uniform": [1, 2]},
    {"fixed": True}, {"fixed": 1.5}, {"fixed": "-1s"},
    {"uniform": [1]}, {"uniform": "1s"}, {"uniform": [1, 2, 3]},
    {"exponential": 0}, {"exponential": [1]},
    {"lognormal": "2s"}, {"lognormal": {"median": "2s", "sigma": "wide"}},
    {"lognormal": {"median": "1ms", "extra": 1}}, {"lognormal": {"median": "2s", "sigma": "0.5"}},
    {"lognormal": {"median": "2s", "sigma": "1e-400"}}, {"lognormal": {"median": "2s",
                                                                      "sigma": 1e300}},
    {"lognormal": {"median": "2s", "sigma": True}}, {"lognormal": {"median": "2s",
                                                                   "sigma": float("nan")}},
    {"gamma": 1},
], ids=repr)
def test_parse_latency_refusals(spec: object) -> None:
    with pytest.raises(ValueError):
        parse_latency(spec)


@pytest.mark.parametrize("spec", [
    {"lognormal": {"sigma": 0.5}},
    {"lognormal": {"median": "2s", "sigma": None}},
], ids=repr)
def test_parse_latency_refuses_a_malformed_lognormal_with_value_error(spec: object) -> None:
    with pytest.raises(ValueError):
        parse_latency(spec)


_specs = st.recursive(
    st.none() | st.booleans() | st.integers(-10**40, 10**40) | st.floats()
    | st.sampled_from(["1s", "5ms", "0", "2m", "x", "1e-400", "0.5"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["fixed", "uniform", "exponential", "lognormal", "median", "sigma",
                         "max", "extra"]), inner, max_size=3), max_leaves=8)


@settings(max_examples=300)
@given(spec=_specs, seed=st.integers(0, 2**32))
def test_any_spec_is_a_latency_that_samples_or_a_value_error(spec: object, seed: int) -> None:
    """The hostile-input rule, for the operator's behaviour route and the scenario loader
    alike: a spec is refused with ValueError or is a latency whose every draw is a whole,
    non-negative number of milliseconds (a sigma of 1e300 was taken, and its first draw
    overflowed a float inside the engine; an unknown key or a string sigma were taken)."""
    try:
        latency = parse_latency(spec)
    except ValueError:
        return
    assert all(isinstance(v, int) and v >= 0 for v in samples(latency, seed, 20))
