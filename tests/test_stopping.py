"""engine.stopping.rules: spec validation, the hand-worked paper rule, the ci rule
against the batch confidence sequences (resumption: tests/test_resume.py)."""

from __future__ import annotations

import math

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.contracts import ConfigError
from engine.stopping.confseq import hedged_capital_cs, pprl_eb_cs
from engine.stopping.rules import CiRule, FixedRule, PaperRule, StoppingRule, make_rule_factory
from engine.stopping.spec import SPEC_TYPES, CiSpec, FixedSpec, PaperSpec, StoppingSpec

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


ALPHA = 0.05  # StoppingSpec's default family-wise alpha (one cell here)


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
    # a resumed run replays the stored scores into a fresh rule (engine.run.resume)
    spec = CiSpec(epsilon=10.0, min_docs=len(scores) + 1)  # never converges
    rule = make_rule_factory(spec, cells)()
    cut = min(cut, len(scores))
    feed(rule, scores[:cut])
    replayed = make_rule_factory(spec, cells)()
    feed(replayed, scores[:cut])
    bounds = []
    for score in scores[cut:]:
        rule.update(score)
        replayed.update(score)
        assert replayed.interval() == rule.interval()
        bounds.append(rule.interval())
    x = np.array(scores) / 100.0
    lower, upper = hedged_capital_cs(x, 0.05 / cells, breaks=rule.breaks)
    expected = list(zip((lower * 100.0).tolist(), (upper * 100.0).tolist()))[cut:]
    assert bounds == expected
