"""engine.stopping.hedged_run: the one-score-at-a-time hedged CS is bit for bit the
batch CS whatever its band width, and keeps bands, not the grid, for a
large design."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from engine.stopping.confseq import grid_breaks, hedged_capital_cs
from engine.stopping.hedged_run import HEDGED_CAPITALS_BUDGET, HEDGED_MIN_BAND, hedged_band
from engine.stopping.rules import CiRule, make_rule_factory
from engine.stopping.spec import CiSpec
from tests.test_stopping import feed


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
    # gives exactly the batch CS at every step, and a rule replayed from the
    # same scores (a resumed run) continues exactly.
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
            feed(resumed, scores[:cut])
        elif resumed is not None:
            resumed.update(score)
            assert resumed.interval() == rule.interval()
    lower, upper = hedged_capital_cs(np.array(scores) / 100.0, alpha, breaks=rule.breaks)
    assert bounds == list(zip((lower * 100.0).tolist(), (upper * 100.0).tolist()))
    assert resumed is not None and (resumed._run.lo, resumed._run.hi, resumed.n) == (rule._run.lo, rule._run.hi, rule.n)
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
