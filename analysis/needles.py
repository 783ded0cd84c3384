"""Needle type: which perturbations does a judge notice, and how much?"""

from __future__ import annotations

import itertools
import math

from analysis.load import Table
from analysis.options import GROUP_KEYS, AnalysisOptions, RaterRow, rng_for
from analysis.stats import bonferroni, ks_test, mean_difference_ci


class NeedleMean(RaterRow, frozen=True):
    hay: str
    needle: str
    n: int
    mean: float
    sd: float
    rank: int  # 1 = highest mean score (least noticed)


class NeedleOrdering(RaterRow, frozen=True):
    hay: str
    # needles by mean score, highest first: ">" between neighbours whose
    # Bonferroni-corrected KS test is significant, "≈" where it is not,
    # e.g. "none > con ≈ ner > neg" (ordering_text)
    ordering: str
    n: int


class NeedlePairKs(RaterRow, frozen=True):
    hay: str
    needle_a: str
    needle_b: str
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    ks_statistic: float
    p_value: float
    p_bonferroni: float  # over the needle pairs of this judge × prompt × hay
    significant: bool


class ConNegGap(RaterRow, frozen=True):
    hay: str
    gap: float  # mean(con) − mean(neg)
    low: float
    high: float
    n_con: int
    n_neg: int
    confidence: float


def ordering_text(ranked: list[str], significant: dict[frozenset[str], bool]) -> str:
    """`ranked` (highest mean first) joined by ">" where the corrected test
    of the two neighbours is significant and by "≈" where it is not (or was
    not run): the text claims no order its test does not show."""
    if not ranked:
        return ""
    parts = [ranked[0]]
    for a, b in zip(ranked, ranked[1:]):
        parts += [">" if significant.get(frozenset((a, b)), False) else "≈", b]
    return " ".join(parts)


def needle_comparison(
    scored: Table, options: AnalysisOptions
) -> tuple[list[NeedleMean], list[NeedleOrdering], list[NeedlePairKs], list[ConNegGap]]:
    """Mean score per needle type and their ordering; pairwise two-sample KS
    tests between needle types with Bonferroni correction; and the con–neg
    gap with a percentile bootstrap CI, per judge × prompt × hay.
    """
    means, orderings, pairs, gaps = [], [], [], []
    for key, t in scored.groups(*GROUP_KEYS, "hay"):
        by_needle = {n: sub["score"] for (n,), sub in t.groups("needle")}
        ranked = sorted(by_needle, key=lambda n: -by_needle[n].mean())
        for rank, needle in enumerate(ranked, start=1):
            s = by_needle[needle]
            means.append(NeedleMean(*key, needle, int(s.size), float(s.mean()), float(s.std(ddof=1)) if s.size > 1 else math.nan, rank))
        tests = [(a, b, ks_test(by_needle[a], by_needle[b])) for a, b in itertools.combinations(sorted(by_needle), 2)]
        significant: dict[frozenset[str], bool] = {}
        for (a, b, ks), p_adj in zip(tests, bonferroni([ks.p_value for *_, ks in tests])):
            pairs.append(
                NeedlePairKs(*key, a, b, ks.n_a, ks.n_b, float(by_needle[a].mean()), float(by_needle[b].mean()),
                             ks.statistic, ks.p_value, float(p_adj), bool(p_adj <= options.alpha))  # fmt: skip
            )
            significant[frozenset((a, b))] = pairs[-1].significant
        orderings.append(NeedleOrdering(*key, ordering_text(ranked, significant), len(t)))
        if "con" in by_needle and "neg" in by_needle:
            ci = mean_difference_ci(
                by_needle["neg"], by_needle["con"], rng=rng_for(options, "con-neg", *key),
                n_resamples=options.n_bootstrap, confidence=options.confidence,
            )  # fmt: skip
            gaps.append(ConNegGap(*key, ci.estimate, ci.low, ci.high, int(by_needle["con"].size), int(by_needle["neg"].size), options.confidence))
    return means, orderings, pairs, gaps
