"""Prediction-powered estimates: a judge's mean corrected by human labels.

A judge scores every item; people label a random subset. The judge-only
mean is precise but carries the judge's bias; the mean of the labels alone
is unbiased but wide. Prediction-powered inference (Angelopoulos et al.,
Science 2023; PPI++, arXiv:2311.01453) combines them: the judge's mean over
all items plus the mean of (label - judge) on the labelled ones, with an
interval valid whatever the judge's bias. `ppi_py` (ppi-python, by the
method's authors) computes it; this module pairs the data and reports it
beside the judge-only interval.

Labelled items must be a random sample of the group estimated. A stratified
sample draws each stratum at its own rate: pass each labelled item's
inclusion probability and the labels are weighted by its inverse.
"""

from __future__ import annotations

import math

import msgspec
import numpy as np


class Corrected(msgspec.Struct, frozen=True):
    """A quantity estimated twice: with the PPI++ correction by the labels, and from the judge's scores alone."""

    ppi: float
    ppi_low: float
    ppi_high: float
    judge_only: float
    judge_low: float
    judge_high: float
    confidence: float

    @property
    def ppi_half_width(self) -> float:
        return (self.ppi_high - self.ppi_low) / 2

    def conclusion_changed(self, reference: float = 0.0) -> bool:
        """Whether `reference` (0 for a difference; e.g. 100 for a null edit's
        mean) lies inside one interval and outside the other."""
        return (self.ppi_low <= reference <= self.ppi_high) != (self.judge_low <= reference <= self.judge_high)


class MeanEstimate(Corrected, frozen=True):
    """One group's mean."""

    n_labelled: int
    n_items: int


class Contrast(Corrected, frozen=True):
    """The difference a - b of two independent groups' means (normal approximation)."""


def ppi_mean(labels: np.ndarray, judge_labelled: np.ndarray, judge_all: np.ndarray, *,
             inclusion: np.ndarray | None = None, confidence: float = 0.95) -> MeanEstimate:
    """The group's mean score: `labels` and `judge_labelled` are the people's
    and the judge's scores of the labelled items, `judge_all` the judge's
    scores of every item of the group (labelled ones included)."""
    from ppi_py import ppi_mean_ci, ppi_mean_pointestimate
    from scipy import stats

    y = np.asarray(labels, dtype=float)
    yhat = np.asarray(judge_labelled, dtype=float)
    yhat_all = np.asarray(judge_all, dtype=float)
    if y.shape != yhat.shape or y.ndim != 1:
        raise ValueError(f"labels and the judge's scores of the labelled items must be paired 1-d arrays, got {y.shape}, {yhat.shape}")
    if y.size < 2 or yhat_all.size < 2:
        raise ValueError(f"a PPI mean needs at least 2 labelled items and 2 items, got {y.size} and {yhat_all.size}")
    weights = None
    if inclusion is not None:
        weights = 1.0 / np.asarray(inclusion, dtype=float)
        weights = weights * weights.size / weights.sum()  # ppi_py expects weights of mean 1
    alpha = 1 - confidence
    point = float(np.ravel(ppi_mean_pointestimate(y, yhat, yhat_all, w=weights))[0])
    low, high = (float(np.ravel(v)[0]) for v in ppi_mean_ci(y, yhat, yhat_all, alpha=alpha, w=weights))
    judge_mean = float(yhat_all.mean())
    sem = float(stats.sem(yhat_all)) if yhat_all.size > 1 else math.nan
    z = float(stats.norm.ppf(1 - alpha / 2))
    return MeanEstimate(
        ppi=point, ppi_low=low, ppi_high=high, judge_only=judge_mean,
        judge_low=judge_mean - z * sem, judge_high=judge_mean + z * sem,
        n_labelled=int(y.size), n_items=int(yhat_all.size), confidence=confidence,
    )


def contrast(a: MeanEstimate, b: MeanEstimate) -> Contrast:
    """a - b for two groups with disjoint items and labels: each interval's
    half-width read as z x its standard error, the errors added in quadrature."""
    from scipy import stats

    if a.confidence != b.confidence:
        raise ValueError(f"contrast of estimates at different confidence levels: {a.confidence} and {b.confidence}")
    z = float(stats.norm.ppf(1 - (1 - a.confidence) / 2))

    def combine(mean_a: float, low_a: float, high_a: float, mean_b: float, low_b: float, high_b: float) -> tuple[float, float, float]:
        se = math.hypot((high_a - low_a) / (2 * z), (high_b - low_b) / (2 * z))
        diff = mean_a - mean_b
        return diff, diff - z * se, diff + z * se

    ppi = combine(a.ppi, a.ppi_low, a.ppi_high, b.ppi, b.ppi_low, b.ppi_high)
    judge = combine(a.judge_only, a.judge_low, a.judge_high, b.judge_only, b.judge_low, b.judge_high)
    return Contrast(*ppi, *judge, confidence=a.confidence)
