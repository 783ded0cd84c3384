"""Statistical building blocks: pure functions over numpy arrays.

scipy.stats does the work where it has the function (KS test, bootstrap,
permutation test, Wasserstein distance); the few things it
lacks (Holm and Bonferroni adjustment, weighted Cohen's kappa over explicit
labels, Krippendorff's alpha) are small and tested against published or
hand-computed answers. Every random draw takes an explicit numpy Generator
(callers derive it from engine.seeding.item_rng, keyed by what is tested).
"""

from __future__ import annotations

import math
import warnings
from typing import Literal, Sequence

import msgspec
import numpy as np
from scipy import stats as sps

# ---------------------------------------------------------------------------
# Multiple-comparison corrections


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values (Holm 1979).

    Sort the m p-values ascending, multiply the r-th smallest (r = 0..m−1)
    by (m − r), enforce monotonicity with a running maximum and cap at 1.
    Rejecting where the adjusted value ≤ α is Holm's procedure at level α.
    NaN entries (tests that could not be run) stay NaN and do not count in m.
    """
    p = np.asarray(p_values, dtype=float)
    out = np.full(p.shape, np.nan)
    valid = np.flatnonzero(~np.isnan(p))
    m = valid.size
    if m == 0:
        return out
    order = valid[np.argsort(p[valid], kind="stable")]
    scaled = p[order] * (m - np.arange(m))
    out[order] = np.minimum(np.maximum.accumulate(scaled), 1.0)
    return out


def bonferroni(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Bonferroni adjusted p-values: min(1, m·p) over the m non-NaN tests."""
    p = np.asarray(p_values, dtype=float)
    m = int(np.count_nonzero(~np.isnan(p)))
    return np.minimum(p * m, 1.0) if m else p.copy()


# ---------------------------------------------------------------------------
# Two-sample tests and intervals


class KsTest(msgspec.Struct, frozen=True):
    statistic: float
    p_value: float
    n_a: int
    n_b: int


def ks_test(a: np.ndarray, b: np.ndarray) -> KsTest:
    """Two-sample Kolmogorov–Smirnov test (scipy.stats.ks_2samp, two-sided).

    Returns NaN statistic and p-value when either sample is empty.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        return KsTest(math.nan, math.nan, int(a.size), int(b.size))
    with warnings.catch_warnings():
        # "Exact calculation unsuccessful. Switching to method=asymp" is scipy's documented fallback
        warnings.simplefilter("ignore", RuntimeWarning)
        res = sps.ks_2samp(a, b)
    return KsTest(float(res.statistic), float(res.pvalue), int(a.size), int(b.size))


class Interval(msgspec.Struct, frozen=True):
    """A point estimate with a two-sided confidence interval."""

    estimate: float
    low: float
    high: float
    n: int  # sample size behind the estimate (both samples for a difference)


def _percentile_bootstrap(
    data: tuple[np.ndarray, ...], statistic, estimate: float, *, rng: np.random.Generator, n_resamples: int, confidence: float
) -> tuple[float, float]:
    if all(np.ptp(x) == 0 for x in data):
        return estimate, estimate  # no sampling variability at all
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = sps.bootstrap(
            data,
            statistic,
            n_resamples=n_resamples,
            vectorized=True,
            confidence_level=confidence,
            method="percentile",
            batch=max(1, min(n_resamples, 4_000_000 // max(1, sum(x.size for x in data)))),
            rng=rng,
        )
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def _mean_diff(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(b, axis=axis) - np.mean(a, axis=axis)


def mean_difference_ci(
    a: np.ndarray, b: np.ndarray, *, rng: np.random.Generator, n_resamples: int = 2000, confidence: float = 0.95
) -> Interval:
    """mean(b) − mean(a) with a percentile bootstrap CI (Efron & Tibshirani
    1993, ch. 13), resampling each sample independently (scipy.stats.bootstrap).

    NaN interval when either sample has fewer than two values.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    n = int(a.size + b.size)
    if a.size == 0 or b.size == 0:
        return Interval(math.nan, math.nan, math.nan, n)
    est = float(b.mean() - a.mean())
    if a.size < 2 or b.size < 2:
        return Interval(est, math.nan, math.nan, n)
    low, high = _percentile_bootstrap((a, b), _mean_diff, est, rng=rng, n_resamples=n_resamples, confidence=confidence)
    return Interval(est, low, high, n)


def mean_ci(x: np.ndarray, *, rng: np.random.Generator, n_resamples: int = 2000, confidence: float = 0.95) -> Interval:
    """mean(x) with a percentile bootstrap CI (for paired differences)."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return Interval(math.nan, math.nan, math.nan, 0)
    est = float(x.mean())
    if x.size < 2:
        return Interval(est, math.nan, math.nan, 1)
    low, high = _percentile_bootstrap(
        (x,), lambda v, axis=-1: np.mean(v, axis=axis), est, rng=rng, n_resamples=n_resamples, confidence=confidence
    )
    return Interval(est, low, high, int(x.size))


# ---------------------------------------------------------------------------
# Earth mover's distance with a permutation null


def wasserstein_1d(a: np.ndarray, b: np.ndarray, axis: int = -1) -> np.ndarray:
    """First Wasserstein distance (EMD) between 1-D samples, vectorised over
    leading axes: ∫|F_a − F_b| over the pooled support. Equal to
    scipy.stats.wasserstein_distance for each row.
    """
    a = np.moveaxis(np.asarray(a, dtype=float), axis, -1)
    b = np.moveaxis(np.asarray(b, dtype=float), axis, -1)
    na, nb = a.shape[-1], b.shape[-1]
    pooled = np.concatenate([a, b], axis=-1)
    order = np.argsort(pooled, axis=-1, kind="stable")
    values = np.take_along_axis(pooled, order, axis=-1)
    from_a = order < na
    cdf_gap = np.cumsum(np.where(from_a, 1.0 / na, -1.0 / nb), axis=-1)
    return np.sum(np.abs(cdf_gap[..., :-1]) * np.diff(values, axis=-1), axis=-1)


class EmdTest(msgspec.Struct, frozen=True):
    emd: float
    p_value: float  # share of label permutations with EMD ≥ the observed one
    null_q95: float  # 95th percentile of the permutation null
    n_a: int
    n_b: int


def emd_permutation_test(
    a: np.ndarray, b: np.ndarray, *, rng: np.random.Generator, n_permutations: int = 1000
) -> EmdTest:
    """EMD between two samples and its label-permutation null (one-sided:
    p = (1 + #{null ≥ observed}) / (1 + permutations), Phipson & Smyth 2010,
    the randomised-test p-value of scipy.stats.permutation_test).

    Under H0 both samples come from one distribution, so shuffling the
    sample labels gives the EMD a sampling-noise floor (≈3 points at n=100
    on a 0–100 scale); an observed EMD above the null says the two cells
    really differ. Constant pooled data gives EMD 0 and p = 1. Done in one
    vectorised numpy pass (many small cells: scipy's per-call overhead
    dominated).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        return EmdTest(math.nan, math.nan, math.nan, int(a.size), int(b.size))
    pooled = np.concatenate([a, b])
    observed = float(wasserstein_1d(a, b))
    if np.ptp(pooled) == 0:
        return EmdTest(0.0, 1.0, 0.0, int(a.size), int(b.size))
    shuffled = rng.permuted(np.broadcast_to(pooled, (n_permutations, pooled.size)), axis=1)
    null = wasserstein_1d(shuffled[:, : a.size], shuffled[:, a.size :])
    # tolerance as scipy uses, so ties of the observed value count as "≥"
    exceed = np.count_nonzero(null >= observed * (1 - 1e-14))
    p_value = (exceed + 1) / (n_permutations + 1)
    return EmdTest(observed, float(p_value), float(np.quantile(null, 0.95)), int(a.size), int(b.size))


# ---------------------------------------------------------------------------
# Agreement


def _interval_alpha(data: np.ndarray, present: np.ndarray) -> float:
    """Krippendorff's alpha for the interval metric δ² = (c − k)² in O(values):
    the sums of squared differences over pairs come from per-unit sums
    (Σ_{i≠j} (v_i − v_j)² = 2mΣv² − 2(Σv)²), so no values × values
    coincidence matrix is built (continuous scores have thousands of levels)."""
    units, raters = np.nonzero(present.T)
    per_unit = np.bincount(units, minlength=data.shape[1])
    pairable = per_unit[units] >= 2
    if not pairable.any():
        raise ValueError("Krippendorff's alpha needs at least one unit rated by two or more raters")
    units, v = units[pairable], data[raters[pairable], units[pairable]]
    m = per_unit[per_unit >= 2].astype(float)
    dense = np.searchsorted(np.flatnonzero(per_unit >= 2), units)
    s1 = np.bincount(dense, weights=v, minlength=m.size)
    s2 = np.bincount(dense, weights=v * v, minlength=m.size)
    n = float(v.size)
    observed = float(((2.0 * m * s2 - 2.0 * s1 * s1) / (m - 1.0)).sum()) / n
    expected = (2.0 * n * float((v * v).sum()) - 2.0 * float(v.sum()) ** 2) / (n * (n - 1.0))
    if expected <= 0:
        return math.nan
    return 1.0 - observed / expected


AlphaLevel = Literal["nominal", "ordinal", "interval", "ratio"]


def krippendorff_alpha(reliability_data: np.ndarray, level: AlphaLevel = "interval") -> float:
    """Krippendorff's alpha (Krippendorff 2011, "Computing Krippendorff's
    Alpha-Reliability") for a raters × units matrix with NaN for missing.

    Builds the coincidence matrix o_ck = Σ_u (pairs of values c,k in u)/(m_u − 1)
    over units with m_u ≥ 2 values, then α = 1 − D_o/D_e with
    D_o = Σ o_ck δ²_ck / n and D_e = Σ n_c n_k δ²_ck / (n(n − 1)).
    δ² by level: nominal [c ≠ k]; ordinal (Σ_{g=c..k} n_g − (n_c + n_k)/2)²;
    interval (c − k)²; ratio ((c − k)/(c + k))².
    """
    data = np.asarray(reliability_data, dtype=float)
    if data.ndim != 2:
        raise ValueError(f"reliability data must be raters × units, got shape {data.shape}")
    present = ~np.isnan(data)
    values = np.unique(data[present])
    if values.size < 2:
        return math.nan  # no variation: alpha is undefined
    if level == "interval":
        return _interval_alpha(data, present)
    units, raters = np.nonzero(present.T)
    value_idx = np.searchsorted(values, data[raters, units])
    counts = np.bincount(units * values.size + value_idx, minlength=data.shape[1] * values.size)
    counts = counts.reshape(data.shape[1], values.size).astype(float)
    m = counts.sum(axis=1)
    pairable = m >= 2
    counts, m = counts[pairable], m[pairable]
    if counts.shape[0] == 0:
        raise ValueError("Krippendorff's alpha needs at least one unit rated by two or more raters")
    weighted = counts / (m - 1)[:, None]
    coincidences = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    n_c = coincidences.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta = 1.0 - np.eye(values.size)
    elif level == "interval":
        delta = np.subtract.outer(values, values) ** 2
    elif level == "ratio":
        total = np.add.outer(values, values)
        with np.errstate(divide="ignore", invalid="ignore"):
            delta = np.where(total == 0, 0.0, (np.subtract.outer(values, values) / total) ** 2)
    elif level == "ordinal":
        cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
        lo = np.minimum.outer(np.arange(values.size), np.arange(values.size))
        hi = np.maximum.outer(np.arange(values.size), np.arange(values.size))
        between = cumulative[hi + 1] - cumulative[lo]
        delta = (between - (n_c[lo] + n_c[hi]) / 2.0) ** 2
    else:
        raise ValueError(f"level must be nominal, ordinal, interval or ratio, got {level!r}")
    observed = float((coincidences * delta).sum()) / n
    expected = float((np.outer(n_c, n_c) * delta).sum()) / (n * (n - 1))
    if expected == 0:
        return math.nan
    return 1.0 - observed / expected
