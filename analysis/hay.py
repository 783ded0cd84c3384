"""Hay type: does replacing the surrounding sentences with random ones
(rand) instead of the document's own (orig) change the scores?

Sign convention: shift = rand − orig; positive means the judge is more
lenient when the hay is random.
"""

from __future__ import annotations

import numpy as np

from analysis.load import Table
from analysis.options import GROUP_KEYS, AnalysisOptions, RaterRow, rng_for
from analysis.stats import mean_difference_ci


class HayShift(RaterRow, frozen=True):
    needle: str
    n_orig: int
    n_rand: int
    mean_orig: float
    mean_rand: float
    shift: float  # mean_rand − mean_orig
    low: float
    high: float
    confidence: float


class PercentileShift(RaterRow, frozen=True):
    needle: str
    percentile: float
    orig: float  # the percentile of the orig scores
    rand: float
    shift: float  # rand − orig at this percentile
    n_orig: int
    n_rand: int


def hay_comparison(scored: Table, options: AnalysisOptions) -> tuple[list[HayShift], list[PercentileShift]]:
    """Mean difference rand − orig with a percentile bootstrap CI per judge ×
    prompt × needle, and the percentile shift curve (each percentile of the
    orig scores against its change under rand; numpy linear interpolation).
    """
    shifts, curves = [], []
    for key, t in scored.groups(*GROUP_KEYS, "needle"):
        orig = t["score"][t["hay"] == "orig"]
        rand = t["score"][t["hay"] == "rand"]
        if orig.size == 0 or rand.size == 0:
            continue
        ci = mean_difference_ci(
            orig, rand, rng=rng_for(options, "hay", *key), n_resamples=options.n_bootstrap, confidence=options.confidence
        )
        shifts.append(HayShift(*key, int(orig.size), int(rand.size), float(orig.mean()), float(rand.mean()),
                               ci.estimate, ci.low, ci.high, options.confidence))  # fmt: skip
        q = np.asarray(options.percentiles, dtype=float)
        po, pr = np.percentile(orig, q), np.percentile(rand, q)
        for pct, a, b in zip(q.tolist(), po.tolist(), pr.tolist()):
            curves.append(PercentileShift(*key, pct, a, b, b - a, int(orig.size), int(rand.size)))
    return shifts, curves
