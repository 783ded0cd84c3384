"""Agreement between a judge and people, and between people (the ceiling).

Pure functions over paired arrays of scores on the 0-100 scale (a judge's
score and a person's label for the same items), each returning a named
result with a bootstrap confidence interval:

- `weighted_kappa`: Cohen's weighted kappa (scikit-learn's
  `cohen_kappa_score`), the judge's score first snapped to the label values
  people used, so that both raters choose from one ordered label set;
- `alpha`: Krippendorff's alpha, interval on the raw scores, ordinal on the
  snapped ones, with its bootstrap CI by analysis.agreement.alpha_ci (the
  one bootstrap of alpha, shared with the agreement among judges; it says
  which code computes alpha at each level), which tests/test_analysis_human.py
  holds equal to the `krippendorff` package's value;
- `binary_agreement`: the confusion matrix at a threshold (scikit-learn's
  `confusion_matrix`), with the false-pass rate split out: the share of the
  items people rated below the threshold that the judge passed.

The libraries compute the statistics; this module only pairs the data and
bootstraps kappa (scipy.stats.bootstrap, percentile intervals, paired).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from typing import Literal

import msgspec
import numpy as np

Weights = Literal["linear", "quadratic"]
BOOTSTRAP_RESAMPLES = 499
MIN_BOOTSTRAP_ITEMS = 5  # fewer paired items: the statistic without an interval
# scikit-learn validates its input on every call (~10 ms): a kappa interval
# takes fewer resamples, enough for a percentile interval to two decimals
KAPPA_RESAMPLES = 199


class Estimate(msgspec.Struct, frozen=True):
    """A statistic, its bootstrap interval (NaN when it cannot be had) and n."""

    value: float
    low: float
    high: float
    n: int
    confidence: float = 0.95


class BinaryAgreement(msgspec.Struct, frozen=True):
    """The judge's pass/fail at `threshold` against people's.

    `matrix` is [[both fail, judge passes a human fail], [judge fails a
    human pass, both pass]] (rows: people, columns: the judge)."""

    threshold: float
    matrix: tuple[tuple[int, int], tuple[int, int]]
    false_pass_rate: float  # judge passes / items people failed
    false_fail_rate: float  # judge fails / items people passed
    accuracy: float
    n: int


def snap(scores: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Each score mapped to the nearest of `levels` (ties to the lower one)."""
    levels = np.unique(np.asarray(levels, dtype=float))
    scores = np.asarray(scores, dtype=float)
    return levels[np.argmin(np.abs(scores[:, None] - levels[None, :]), axis=1)]


def _paired(judge: np.ndarray, human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    judge, human = np.asarray(judge, dtype=float), np.asarray(human, dtype=float)
    if judge.shape != human.shape or judge.ndim != 1:
        raise ValueError(f"judge and human scores must be paired 1-d arrays, got {judge.shape} and {human.shape}")
    keep = ~(np.isnan(judge) | np.isnan(human))
    return judge[keep], human[keep]


def _bootstrap(statistic: Callable[[np.ndarray, np.ndarray], float], judge: np.ndarray, human: np.ndarray,
               *, confidence: float, seed: int, resamples: int) -> Estimate:
    from scipy.stats import bootstrap

    value = statistic(judge, human)
    low = high = math.nan
    if judge.size >= MIN_BOOTSTRAP_ITEMS and not math.isnan(value):
        with warnings.catch_warnings():  # a resample with one distinct value has no kappa: NaN, dropped
            warnings.simplefilter("ignore")
            result = bootstrap((judge, human), statistic, paired=True, vectorized=False, n_resamples=resamples,
                               confidence_level=confidence, method="percentile", rng=np.random.default_rng(seed))
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return Estimate(value=float(value), low=low, high=high, n=int(judge.size), confidence=confidence)


def _kappa(weights: Weights, levels: np.ndarray) -> Callable[[np.ndarray, np.ndarray], float]:
    from sklearn.metrics import cohen_kappa_score

    def statistic(judge: np.ndarray, human: np.ndarray) -> float:
        if np.unique(np.concatenate([judge, human])).size < 2:
            return math.nan
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # as label indices: scikit-learn takes float labels with fractions for a regression target
            first = np.searchsorted(levels, snap(judge, levels))
            second = np.searchsorted(levels, snap(human, levels))
            return float(cohen_kappa_score(first, second, labels=np.arange(levels.size), weights=weights))

    return statistic


def weighted_kappa(judge: np.ndarray, human: np.ndarray, *, weights: Weights = "quadratic",
                   levels: np.ndarray | None = None, confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Cohen's weighted kappa of the judge (snapped to `levels`, by default the
    values people used) against people."""
    judge, human = _paired(judge, human)
    levels = np.unique(human if levels is None else np.asarray(levels, dtype=float))
    return _bootstrap(_kappa(weights, levels), judge, human, confidence=confidence, seed=seed, resamples=KAPPA_RESAMPLES)


def alpha(judge: np.ndarray, human: np.ndarray, *, level: Literal["interval", "ordinal"] = "interval",
          levels: np.ndarray | None = None, confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Krippendorff's alpha between the judge and people (interval on raw
    scores; ordinal with the judge snapped to `levels`, by default people's)."""
    from analysis.agreement import alpha_ci

    judge, human = _paired(judge, human)
    levels = np.unique(human if levels is None else np.asarray(levels, dtype=float))
    data = np.vstack([judge if level == "interval" else snap(judge, levels), human])
    resamples = BOOTSTRAP_RESAMPLES if judge.size >= MIN_BOOTSTRAP_ITEMS else 0
    ci = alpha_ci(data, level, rng=np.random.default_rng(seed), n_resamples=resamples, confidence=confidence)
    return Estimate(value=ci.alpha, low=ci.low, high=ci.high, n=int(judge.size), confidence=confidence)


def binary_agreement(judge: np.ndarray, human: np.ndarray, *, threshold: float = 50.0) -> BinaryAgreement:
    """Pass = a score at or above `threshold` (0-100)."""
    from sklearn.metrics import confusion_matrix

    judge, human = _paired(judge, human)
    matrix = confusion_matrix(human >= threshold, judge >= threshold, labels=[False, True])
    (tn, fp), (fn, tp) = matrix.tolist()
    failed, passed = tn + fp, fn + tp
    return BinaryAgreement(
        threshold=threshold, matrix=((tn, fp), (fn, tp)),
        false_pass_rate=fp / failed if failed else math.nan,
        false_fail_rate=fn / passed if passed else math.nan,
        accuracy=(tn + tp) / judge.size if judge.size else math.nan, n=int(judge.size),
    )
