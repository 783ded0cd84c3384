"""Agreement between a judge and people, and between people (the ceiling).

Pure functions over paired arrays of scores on the 0-100 scale (a judge's
score and a person's label for the same items), each returning a named
result with a bootstrap confidence interval:

- `weighted_kappa`: Cohen's weighted kappa (scikit-learn's
  `cohen_kappa_score`), the judge's score first snapped to the label values
  people used, so that both raters choose from one ordered label set;
- `alpha`: Krippendorff's alpha (the `krippendorff` package), interval on
  the raw scores, ordinal on the snapped ones. The package builds a units x
  values x values tensor, so one call on 400 continuous scores takes ~150 ms
  and a 999-resample bootstrap minutes; the resamples therefore use
  analysis.stats.krippendorff_alpha (the same coincidence-matrix definition in
  O(n log n), ~0.2 ms), which tests/test_analysis_human.py holds equal to the
  package's value on random data;
- `binary_agreement`: the confusion matrix at a threshold (scikit-learn's
  `confusion_matrix`), with the false-pass rate split out: the share of the
  items people rated below the threshold that the judge passed.

The libraries compute the statistics; this module only pairs the data and
bootstraps it (scipy.stats.bootstrap, percentile intervals, paired).
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
               *, confidence: float, seed: int, value: float | None = None, resamples: int = BOOTSTRAP_RESAMPLES) -> Estimate:
    from scipy.stats import bootstrap

    value = statistic(judge, human) if value is None else value
    low = high = math.nan
    if judge.size >= 5 and not math.isnan(value):
        with warnings.catch_warnings():  # a resample with one distinct value has no kappa/alpha: NaN, dropped
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


def _alpha(level: Literal["interval", "ordinal"], levels: np.ndarray, *, reference: bool) -> Callable[[np.ndarray, np.ndarray], float]:
    import krippendorff

    from analysis.stats import krippendorff_alpha

    def statistic(judge: np.ndarray, human: np.ndarray) -> float:
        data = np.vstack([judge if level == "interval" else snap(judge, levels), human])
        if np.unique(data).size < 2:
            return math.nan
        if reference:
            return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
        return float(krippendorff_alpha(data, level))

    return statistic


def alpha(judge: np.ndarray, human: np.ndarray, *, level: Literal["interval", "ordinal"] = "interval",
          levels: np.ndarray | None = None, confidence: float = 0.95, seed: int = 0) -> Estimate:
    """Krippendorff's alpha between the judge and people (interval on raw
    scores; ordinal with the judge snapped to `levels`, by default people's)."""
    judge, human = _paired(judge, human)
    levels = np.unique(human if levels is None else np.asarray(levels, dtype=float))
    value = _alpha(level, levels, reference=True)(judge, human)
    return _bootstrap(_alpha(level, levels, reference=False), judge, human, confidence=confidence, seed=seed, value=value)


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
