"""engine.stopping.confseq: the batch confidence sequences cover the true mean
uniformly over time (and at a stopping time), where a fixed-time interval
monitored over time does not; closed forms and relative widths."""

from __future__ import annotations

import numpy as np
import pytest

from engine.stopping.confseq import grid_breaks, hedged_capital_cs, pprl_eb_cs

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
