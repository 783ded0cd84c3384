"""Stopping rules: spec validation, hand-worked paper rule, CS coverage and resumption."""

from __future__ import annotations

import math
import tracemalloc

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.contracts import ConfigError
from engine.stopping_spec import SPEC_TYPES, CiSpec, FixedSpec, PaperSpec, StoppingSpec
from engine.stopping import (
    HEDGED_CAPITALS_BUDGET,
    HEDGED_MIN_BAND,
    CiRule,
    FixedRule,
    PaperRule,
    StoppingRule,
    grid_breaks,
    hedged_band,
    hedged_capital_cs,
    make_rule_factory,
    pprl_eb_cs,
    rule_from_state,
)

# ---------------------------------------------------------------------------
# Spec


@pytest.mark.parametrize(
    ("settings", "key"),
    [
        ({"kind": "ci", "epsilon": 0.0}, "stopping.epsilon"),
        ({"kind": "ci", "epsilon": -1.0}, "stopping.epsilon"),
        ({"kind": "ci", "epsilon": 50.0}, "stopping.epsilon"),
        ({"kind": "ci", "alpha": 0.0}, "stopping.alpha"),
        ({"kind": "ci", "alpha": 1.0}, "stopping.alpha"),
        ({"kind": "fixed", "n": 0}, "stopping.n"),
        ({"kind": "paper", "window": 0}, "stopping.window"),
        ({"kind": "paper", "tolerance": -0.5}, "stopping.tolerance"),
        ({"kind": "paper", "min_docs": 0}, "stopping.min_docs"),
        ({"kind": "ci", "max_docs": 0}, "stopping.max_docs"),
        ({"kind": "paper", "max_docs": 50}, "stopping.max_docs"),  # below the default min 100
        ({"kind": "ci", "min_docs": 20, "max_docs": 10}, "stopping.max_docs"),
        ({"kind": "paper", "min_docs": 1, "window": 20, "max_docs": 20}, "stopping.max_docs"),
    ],
)
def test_impossible_settings_name_the_key_and_range(settings, key):
    kind = settings.pop("kind")
    with pytest.raises(ConfigError) as caught:
        SPEC_TYPES[kind](**settings)
    message = str(caught.value)
    assert message.startswith(key + ": expected ")
    assert "got" in message


def test_decoding_picks_the_rules_struct_by_kind_and_rejects_other_rules_keys():
    class Config(msgspec.Struct):
        stopping: StoppingSpec

    with pytest.raises(msgspec.ValidationError, match=r"stopping\.alpha.*\$\.stopping"):
        msgspec.toml.decode(b'[stopping]\nkind = "ci"\nalpha = 1.5\n', type=Config)
    with pytest.raises(msgspec.ValidationError, match="epsilom"):
        msgspec.toml.decode(b'[stopping]\nkind = "ci"\nepsilom = 1.0\n', type=Config)
    # a setting of another rule is an unknown key, not a value silently ignored
    with pytest.raises(msgspec.ValidationError, match="unknown field `epsilon`"):
        msgspec.toml.decode(b'[stopping]\nkind = "paper"\nepsilon = 1.0\n', type=Config)
    with pytest.raises(msgspec.ValidationError, match="unknown field `min_docs`"):
        msgspec.toml.decode(b'[stopping]\nkind = "fixed"\nmin_docs = 3\n', type=Config)
    decoded = msgspec.toml.decode(b'[stopping]\nkind = "ci"\nepsilon = 1.5\n', type=Config)
    assert decoded.stopping == CiSpec(epsilon=1.5)
    assert msgspec.toml.decode(b'[stopping]\nkind = "fixed"\nn = 7\n', type=Config).stopping == FixedSpec(n=7)
    assert msgspec.to_builtins(PaperSpec())["kind"] == "paper"


def test_per_kind_defaults():
    assert PaperSpec().resolved_min_docs == 100
    assert CiSpec().resolved_min_docs == 1
    assert CiSpec(min_docs=30).resolved_min_docs == 30
    assert PaperSpec(min_docs=1).resolved_min_docs == 11  # window 10 + 1
    assert FixedSpec(n=40).resolved_min_docs == 40
    assert FixedSpec(n=40).doc_cap == 40
    assert CiSpec(max_docs=500).doc_cap == 500
    assert PaperSpec().doc_cap is None


# ---------------------------------------------------------------------------
# fixed and paper


def feed(rule: StoppingRule, scores) -> int | None:
    """Feed scores until the rule stops; return the 1-based stopping index or None."""
    for index, score in enumerate(scores, start=1):
        rule.update(score)
        if rule.done:
            return index
    return None


def test_fixed_stops_at_n_and_refuses_more():
    rule = make_rule_factory(FixedSpec(n=7), n_cells=3)()
    assert isinstance(rule, FixedRule) and isinstance(rule, StoppingRule)
    assert feed(rule, [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0]) == 7
    assert rule.reason == "n_reached"
    assert rule.mean == pytest.approx(40.0)
    with pytest.raises(RuntimeError, match="already stopped"):
        rule.update(50.0)


@pytest.mark.parametrize("bad", [-0.1, 100.5, math.nan, math.inf])
def test_scores_outside_0_100_are_rejected(bad):
    rule = make_rule_factory(PaperSpec(), 1)()
    with pytest.raises(ValueError, match="score must be"):
        rule.update(bad)
    assert rule.n == 0


def test_paper_rule_hand_worked_default_settings():
    # 90 documents scoring 50, then documents scoring 100.  For n > 90 the
    # running mean is m_n = (90*50 + 100*(n-90)) / n = 100 - 4500/n, which
    # rises monotonically, so its range over m_{n-10}..m_n is
    #   m_n - m_{n-10} = 4500 * (1/(n-10) - 1/n) = 45000 / (n (n-10)).
    # That is <= 1 iff n (n-10) >= 45000:
    #   n = 217: 217 * 207 = 44919 < 45000   (range 1.0018, not settled)
    #   n = 218: 218 * 208 = 45344 >= 45000  (range 0.9924, settled)
    # n >= 100 holds, so the rule stops at document 218.
    stream = [50.0] * 90 + [100.0] * 200
    rule = make_rule_factory(PaperSpec(), n_cells=10)()
    assert isinstance(rule, PaperRule)
    assert feed(rule, stream) == 218
    assert rule.reason == "converged"
    assert rule.mean == pytest.approx(100 - 4500 / 218)
    recent = rule.recent_means
    assert len(recent) == 11
    assert recent[-1] - recent[0] == pytest.approx(45000 / (218 * 208))


def test_paper_rule_waits_for_min_docs():
    # A constant stream has a flat running mean from the start, so only the
    # 100-document minimum holds the rule back.
    rule = make_rule_factory(PaperSpec(), 1)()
    assert feed(rule, [50.0] * 150) == 100


def test_paper_rule_uses_the_whole_path_of_the_mean_not_its_end_points():
    # window 2, tolerance 1, min_docs 1: settled when max - min of the means
    # m_{n-2}, m_{n-1}, m_n is <= 1 (needs n >= 3).
    #   x: 40   60   50   56     44   50     50
    #   S: 40  100  150  206    250  300    350
    #   m: 40   50   50  51.5    50   50     50
    # n=3: {40, 50, 50}     range 10
    # n=4: {50, 50, 51.5}   range 1.5
    # n=5: {50, 51.5, 50}   range 1.5  (end points equal: |m5 - m3| = 0 would stop here)
    # n=6: {51.5, 50, 50}   range 1.5
    # n=7: {50, 50, 50}     range 0    -> stop at 7
    spec = PaperSpec(window=2, tolerance=1.0, min_docs=1)
    rule = make_rule_factory(spec, 1)()
    assert feed(rule, [40.0, 60.0, 50.0, 56.0, 44.0, 50.0, 50.0, 50.0]) == 7


def test_paper_rule_max_docs_reason():
    spec = PaperSpec(max_docs=120)
    rule = make_rule_factory(spec, 1)()
    assert feed(rule, [50.0] * 90 + [100.0] * 200) == 120
    assert rule.reason == "max_docs"


# ---------------------------------------------------------------------------
# ci: batch functions against known answers


def score_streams(kind: str, runs: int, length: int, rng: np.random.Generator):
    """(scores on [0,1] of shape (runs, length), true mean) for a known distribution."""
    if kind == "beta":  # a smooth, skewed score distribution
        return rng.beta(2.0, 5.0, size=(runs, length)), 2.0 / 7.0
    if kind == "bands":  # mass only on band boundaries 0, 25, 50, 75, 100
        levels = np.array([0.0, 0.25, 0.5, 0.75, 1.0])
        weights = np.array([0.1, 0.15, 0.2, 0.25, 0.3])
        return rng.choice(levels, p=weights, size=(runs, length)), float(levels @ weights)
    if kind == "bernoulli":  # the extreme case: only 0 and 100, mean near the edge
        return (rng.random((runs, length)) < 0.9).astype(np.float64), 0.9
    raise AssertionError(kind)


def stopping_index(lower, upper, epsilon_points, min_docs=1):
    """0-based first index where the CS half-width is <= epsilon (last index if never)."""
    settled = (upper - lower) * 50.0 <= epsilon_points
    settled[..., : min_docs - 1] = False
    return np.where(settled.any(axis=-1), settled.argmax(axis=-1), lower.shape[-1] - 1)


@pytest.fixture(scope="module", params=["beta", "bands", "bernoulli"])
def simulated(request):
    rng = np.random.default_rng([4, 2026, ["beta", "bands", "bernoulli"].index(request.param)])
    x, mu = score_streams(request.param, runs=1000, length=400, rng=rng)
    return request.param, x, mu


ALPHA = 0.05


@pytest.mark.parametrize("method", ["hedged", "eb"])
def test_ci_covers_the_true_mean_uniformly_and_at_the_stopping_time(simulated, method):
    _, x, mu = simulated
    if method == "hedged":
        # A coarser grid than the rule's keeps 1,000 runs cheap; coverage
        # holds for any grid (it only widens the reported bounds).
        lower, upper = hedged_capital_cs(x, ALPHA, breaks=250)
    else:
        lower, upper = pprl_eb_cs(x, ALPHA)
    covered = (lower <= mu) & (mu <= upper)
    uniform = covered.all(axis=-1).mean()
    stop = stopping_index(lower, upper, epsilon_points=8.0)
    at_stop = covered[np.arange(len(x)), stop].mean()
    assert uniform >= 1 - ALPHA
    assert at_stop >= 1 - ALPHA
    # The CS must actually narrow: nearly all runs reach +-8 points within 400 documents.
    assert (stop < x.shape[-1] - 1).mean() > 0.9


def test_a_fixed_time_interval_monitored_over_time_fails_this_check(simulated):
    # The coverage check has teeth: a 95% Wald interval re-checked after
    # every document misses the mean somewhere in far more than 5% of runs.
    _, x, mu = simulated
    t = np.arange(1, x.shape[-1] + 1)
    mean = np.cumsum(x, axis=-1) / t
    sd = np.sqrt(np.maximum(np.cumsum(x * x, axis=-1) / t - mean**2, 1e-12))
    half = 1.96 * sd / np.sqrt(t)
    covered = (np.abs(mean - mu) <= half)[:, 10:]
    assert covered.all(axis=-1).mean() < 1 - ALPHA


def test_stopping_time_falls_as_epsilon_grows():
    rng = np.random.default_rng([4, 7])
    x, _ = score_streams("beta", runs=200, length=500, rng=rng)
    mean_stop = {}
    for epsilon in (5.0, 10.0, 20.0):
        lower, upper = hedged_capital_cs(x, ALPHA, breaks=grid_breaks(epsilon))
        mean_stop[epsilon] = stopping_index(lower, upper, epsilon).mean() + 1
    assert mean_stop[5.0] > mean_stop[10.0] > mean_stop[20.0]
    # A CS narrows roughly like 1/sqrt(n): halving epsilon costs well over 2x documents.
    assert mean_stop[5.0] > 2 * mean_stop[10.0]


def test_hedged_cs_of_a_constant_stream_has_the_closed_form_edge():
    # All 300 scores are 0.  The plug-in variance collapses, so the raw bet
    # stays above the truncation (about 2 at t=300 against c/(1-m) ~ 0.5)
    # and the downward bet on m is exactly c/(1-m) = 0.5/(1-m) every time:
    #   K-_t(m) = (1 + 0.5 m / (1-m))^t,  while K+_t(m) shrinks to ~0.
    # m is excluded once 0.5 K-_t(m) >= 1/alpha, i.e.
    #   t log(1 + 0.5 m/(1-m)) >= log(2/alpha) = log(200) = 5.2983 (alpha = 0.01):
    #   m = 0.034: 300 * log(1.017598) = 5.2335  -> kept
    #   m = 0.035: 300 * log(1.018135) = 5.3917  -> excluded
    # so the last kept grid point is 0.034 and the reported (conservative)
    # upper bound is the next one, 0.035; the lower bound is 0.  All 1s mirror it.
    lower, upper = hedged_capital_cs(np.zeros(300), 0.01)
    assert (lower[-1], upper[-1]) == (0.0, pytest.approx(0.035))
    lower, upper = hedged_capital_cs(np.ones(300), 0.01)
    assert (lower[-1], upper[-1]) == (pytest.approx(0.965), 1.0)
    eb_lower, eb_upper = pprl_eb_cs(np.zeros(300), 0.01)
    assert eb_lower[-1] == 0.0 and 0.0 < eb_upper[-1] < 0.2


def test_hedged_is_no_wider_than_empirical_bernstein_on_average():
    # Waudby-Smith & Ramdas report the hedged-capital CS as the tighter one.
    rng = np.random.default_rng([4, 8])
    x, _ = score_streams("beta", runs=100, length=300, rng=rng)
    hedged = np.subtract(*hedged_capital_cs(x, ALPHA)[::-1])[:, -1].mean()
    eb = np.subtract(*pprl_eb_cs(x, ALPHA)[::-1])[:, -1].mean()
    assert hedged < eb


# ---------------------------------------------------------------------------
# ci: incremental rules


def ci_run(spec: StoppingSpec, scores, n_cells: int = 1):
    rule = make_rule_factory(spec, n_cells)()
    assert isinstance(rule, CiRule)
    bounds = []
    for score in scores:
        rule.update(score)
        bounds.append(rule.interval())
        if rule.done:
            break
    return rule, np.array(bounds)


@pytest.mark.parametrize("method", ["hedged", "eb"])
def test_incremental_rule_matches_the_batch_cs(method):
    rng = np.random.default_rng([4, 9])
    scores = rng.beta(2.0, 3.0, size=3000) * 100.0
    x = scores / 100.0  # exactly what the rule does to a score
    spec = CiSpec(epsilon=3.0, method=method)
    rule, bounds = ci_run(spec, scores)
    assert rule.reason == "converged"
    if method == "hedged":
        lower, upper = hedged_capital_cs(x[: rule.n], ALPHA, breaks=rule.breaks)
        np.testing.assert_array_equal(bounds[:, 0], lower * 100.0)
        np.testing.assert_array_equal(bounds[:, 1], upper * 100.0)
    else:
        lower, upper = pprl_eb_cs(x[: rule.n], ALPHA)
        np.testing.assert_allclose(bounds[:, 0], lower * 100.0, rtol=1e-12, atol=1e-10)
        np.testing.assert_allclose(bounds[:, 1], upper * 100.0, rtol=1e-12, atol=1e-10)
    half = (bounds[:, 1] - bounds[:, 0]) / 2
    assert half[-1] <= 3.0 + 1e-12
    assert np.all(half[:-1] > 3.0)  # it stopped at the first settled document
    assert rule.mean == pytest.approx(scores[: rule.n].mean())


def test_union_bound_gives_each_cell_a_smaller_alpha_and_a_wider_cs():
    rng = np.random.default_rng([4, 10])
    scores = rng.beta(2.0, 3.0, size=4000) * 100.0
    spec = CiSpec(epsilon=3.0, alpha=0.05)
    single, single_bounds = ci_run(spec, scores, n_cells=1)
    many, many_bounds = ci_run(spec, scores, n_cells=200)
    assert single.alpha == 0.05
    assert many.alpha == pytest.approx(0.05 / 200)
    length = len(single_bounds)
    assert np.all(np.diff(many_bounds[:length], axis=1) >= np.diff(single_bounds, axis=1))
    assert many.n > single.n


def test_ci_min_and_max_docs():
    rng = np.random.default_rng([4, 11])
    scores = rng.beta(2.0, 3.0, size=2000) * 100.0
    capped, _ = ci_run(CiSpec(epsilon=1.0, max_docs=150), scores)
    assert (capped.n, capped.reason) == (150, "max_docs")
    assert capped.half_width > 1.0
    late, _ = ci_run(CiSpec(epsilon=20.0, min_docs=300), scores)
    assert (late.n, late.reason) == (300, "converged")


# ---------------------------------------------------------------------------
# Resumption


RESUMABLE = [
    PaperSpec(),
    FixedSpec(n=250),
    CiSpec(epsilon=3.0, method="hedged"),
    CiSpec(epsilon=3.0, method="eb"),
]


@pytest.mark.parametrize("spec", RESUMABLE, ids=lambda s: f"{s.kind}-{getattr(s, 'method', '')}")
def test_state_round_trip_mid_stream_continues_identically(spec):
    rng = np.random.default_rng([4, 12])
    scores = (rng.beta(2.0, 3.0, size=3000) * 100.0).tolist()
    straight = make_rule_factory(spec, 5)()
    stop = feed(straight, scores)
    cut = 95  # the paper rule's window of means is full here, the CSs still wide
    assert stop is not None and stop > cut + 1

    first = make_rule_factory(spec, 5)()
    feed(first, scores[:cut])
    saved = msgspec.msgpack.decode(msgspec.msgpack.encode(first.state()))
    resumed = rule_from_state(spec, 5, saved)
    assert resumed.n == cut and not resumed.done
    assert feed(resumed, scores[cut:]) + cut == stop
    assert resumed.state() == straight.state()
    assert resumed.reason == straight.reason and resumed.mean == straight.mean
    if spec.kind == "ci":
        assert resumed.interval() == straight.interval()


def test_restoring_under_changed_settings_is_refused():
    rule = make_rule_factory(CiSpec(epsilon=3.0), 4)()
    feed(rule, [40.0, 60.0, 55.0])
    saved = rule.state()
    with pytest.raises(ConfigError, match="stopping settings changed"):
        rule_from_state(CiSpec(epsilon=2.0), 4, saved)
    with pytest.raises(ConfigError, match="alpha"):
        rule_from_state(CiSpec(epsilon=3.0), 8, saved)
    with pytest.raises(ValueError, match="cannot restore"):
        rule_from_state(PaperSpec(), 4, saved)


# ---------------------------------------------------------------------------
# Properties on arbitrary streams

score_lists = st.lists(
    st.one_of(st.sampled_from([0.0, 25.0, 50.0, 75.0, 100.0]), st.floats(0.0, 100.0)),
    min_size=1,
    max_size=400,
)


def paper_stop_by_definition(scores, window, tolerance, min_docs):
    """The paper rule written out directly: recompute every mean from scratch."""
    for n in range(max(min_docs, window + 1), len(scores) + 1):
        means = [sum(scores[:k]) / k for k in range(n - window, n + 1)]
        if max(means) - min(means) <= tolerance + 1e-9:
            return n
    return None


@settings(max_examples=40, deadline=None)
@given(
    scores=score_lists,
    window=st.integers(1, 12),
    tolerance=st.sampled_from([0.5, 1.0, 3.0]),
    min_docs=st.integers(1, 120),
)
def test_paper_rule_agrees_with_its_definition(scores, window, tolerance, min_docs):
    spec = PaperSpec(window=window, tolerance=tolerance, min_docs=min_docs)
    expected = paper_stop_by_definition(scores, window, tolerance, min_docs)
    assert feed(make_rule_factory(spec, 1)(), scores) == expected


@settings(max_examples=25, deadline=None)
@given(scores=score_lists, cut=st.integers(0, 400), cells=st.sampled_from([1, 30, 20_000]))
def test_hedged_rule_equals_batch_cs_and_survives_any_cut(scores, cut, cells):
    spec = CiSpec(epsilon=10.0, min_docs=len(scores) + 1)  # never converges
    rule = make_rule_factory(spec, cells)()
    cut = min(cut, len(scores))
    feed(rule, scores[:cut])
    rule = rule_from_state(spec, cells, msgspec.msgpack.decode(msgspec.msgpack.encode(rule.state())))
    bounds = []
    for score in scores[cut:]:
        rule.update(score)
        bounds.append(rule.interval())
    x = np.array(scores) / 100.0
    lower, upper = hedged_capital_cs(x, 0.05 / cells, breaks=rule.breaks)
    expected = list(zip((lower * 100.0).tolist(), (upper * 100.0).tolist()))[cut:]
    assert bounds == expected


def test_hedged_band_follows_the_memory_budget():
    breaks = grid_breaks(2.0)  # 2,001 grid points
    assert hedged_band(breaks, 1) == breaks + 1  # a few cells keep the whole grid
    assert hedged_band(breaks, 1000) == HEDGED_CAPITALS_BUDGET // (32 * 1000)
    assert hedged_band(breaks, 11_200) == HEDGED_MIN_BAND  # the 1M-call design


def hedged_stream(kind: str, rng: np.random.Generator, length: int = 300) -> list[float]:
    if kind == "beta":
        return (rng.beta(2.0, 5.0, size=length) * 100.0).tolist()
    if kind == "bernoulli":  # only 0 and 100: the ends move in big jumps
        return ((rng.random(length) < 0.9) * 100.0).tolist()
    if kind == "constant":  # bets hit the truncation every time
        return [0.0] * length
    if kind == "shift":  # 0 then 100: every point is excluded, the fallback keeps one
        return [0.0] * 60 + [100.0] * (length - 60)
    if kind == "bands":
        return rng.choice([0.0, 25.0, 50.0, 75.0, 100.0], size=length).tolist()
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["beta", "bernoulli", "constant", "shift", "bands"])
@pytest.mark.parametrize("band", [1, 3, 16, 64, None])
@pytest.mark.parametrize("cells", [1, 11_200])
def test_banded_hedged_rule_is_bit_identical_to_the_batch_cs(kind, band, cells):
    # The bands are a memory layout only: whatever their width, the rule
    # gives exactly the batch CS at every step, and its saved state
    # continues exactly, including the points a band holds outside the run.
    rng = np.random.default_rng([4, 14, ["beta", "bernoulli", "constant", "shift", "bands"].index(kind)])
    scores = hedged_stream(kind, rng)
    alpha = 0.05 / cells
    spec = CiSpec(epsilon=2.0, method="hedged", min_docs=len(scores) + 1)
    rule = CiRule(spec, alpha, band=band)
    bounds, cut, resumed = [], 97, None
    for n, score in enumerate(scores, 1):
        rule.update(score)
        bounds.append(rule.interval())
        held = rule._run.held()
        if band is not None:
            assert held <= max(2 * band, rule._run.hi - rule._run.lo + 2 * band)
        if n == cut:
            resumed = CiRule(spec, alpha, band=band)
            resumed.restore(msgspec.msgpack.decode(msgspec.msgpack.encode(rule.state())))
        elif resumed is not None:
            resumed.update(score)
            assert resumed.interval() == rule.interval()
    lower, upper = hedged_capital_cs(np.array(scores) / 100.0, alpha, breaks=rule.breaks)
    assert bounds == list(zip((lower * 100.0).tolist(), (upper * 100.0).tolist()))
    assert resumed is not None and resumed.state() == rule.state()
    if kind == "shift":  # the fallback ran: a single point is left
        assert rule._run.hi - rule._run.lo == 1


def test_hedged_cells_of_a_large_design_keep_bands_not_the_grid():
    # 11,200 fresh cells kept 32 kB of capitals each (~360 MB) before.
    spec = CiSpec(epsilon=2.0, method="hedged")
    factory = make_rule_factory(spec, 11_200)
    factory()  # the shared grid is built once, outside the measurement
    rng = np.random.default_rng([4, 13])
    scores = rng.beta(2.0, 3.0, size=(500, 95)) * 100.0
    tracemalloc.start()
    try:
        rules = [factory() for _ in range(len(scores))]
        fresh = tracemalloc.get_traced_memory()[0] / len(rules)
        for column in scores.T:
            for rule, score in zip(rules, column.tolist()):
                rule.update(score)
        fed = (tracemalloc.get_traced_memory()[0]) / len(rules)
    finally:
        tracemalloc.stop()
    assert all(rule._run.held() <= 2 * HEDGED_MIN_BAND for rule in rules)
    assert fresh < 6_000, fresh
    assert fed < 10_000, fed  # bands plus 95 scores and bets of history
    assert all(rule.half_width < 50.0 and not rule.done for rule in rules)
