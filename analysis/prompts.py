"""Prompts: the same judge under different prompt families, and the null
experiment (a document against itself should score 100).
"""

from __future__ import annotations

import itertools

import msgspec
import numpy as np

from analysis.load import Table
from analysis.options import GROUP_KEYS, AnalysisOptions, RaterRow, rng_for
from analysis.stats import bonferroni, ks_test, mean_ci, mean_difference_ci


class PromptPair(msgspec.Struct, frozen=True):
    judge: str
    needle: str
    hay: str
    prompt_a_id: str
    prompt_a_version: str
    prompt_b_id: str
    prompt_b_version: str
    n_a: int
    n_b: int
    mean_a: float
    mean_b: float
    difference: float  # mean_b − mean_a
    low: float
    high: float
    ks_statistic: float
    p_value: float
    p_bonferroni: float  # over all prompt pairs × needle × hay of this judge
    significant: bool


def prompt_comparison(scored: Table, options: AnalysisOptions) -> list[PromptPair]:
    """For each judge scored under two or more prompt versions: per needle ×
    hay, the mean difference between every two prompts (percentile bootstrap
    CI) and a two-sample KS test, Bonferroni-corrected within the judge.
    """
    rows: list[PromptPair] = []
    for (judge,), t in scored.groups("judge"):
        prompts = sorted(set(zip(t["prompt_id"].tolist(), t["prompt_version"].tolist())))
        if len(prompts) < 2:
            continue
        partial = []
        for (needle, hay), cond in t.groups("needle", "hay"):
            for pa, pb in itertools.combinations(prompts, 2):
                a = cond.where(prompt_id=pa[0], prompt_version=pa[1])["score"]
                b = cond.where(prompt_id=pb[0], prompt_version=pb[1])["score"]
                if a.size == 0 or b.size == 0:
                    continue
                ci = mean_difference_ci(
                    a, b, rng=rng_for(options, "prompts", judge, needle, hay, *pa, *pb),
                    n_resamples=options.n_bootstrap, confidence=options.confidence,
                )  # fmt: skip
                partial.append((needle, hay, pa, pb, a, b, ci, ks_test(a, b)))
        adjusted = bonferroni([p[-1].p_value for p in partial])
        for (needle, hay, pa, pb, a, b, ci, ks), p_adj in zip(partial, adjusted):
            rows.append(PromptPair(judge, needle, hay, *pa, *pb, int(a.size), int(b.size), float(a.mean()), float(b.mean()),
                                   ci.estimate, ci.low, ci.high, ks.statistic, ks.p_value, float(p_adj), bool(p_adj <= options.alpha)))  # fmt: skip
    return rows


class NullExperiment(RaterRow, frozen=True):
    hay: str
    n: int
    mean: float
    low: float
    high: float
    share_100: float  # share of identical pairs scored exactly 100
    confidence: float


def null_experiment(scored: Table, options: AnalysisOptions) -> list[NullExperiment]:
    """Identical documents (needle "none", at any position): mean score with
    a percentile bootstrap CI and the share scoring 100, per judge × prompt × hay.
    """
    rows = []
    for key, t in scored.where(needle="none").groups(*GROUP_KEYS, "hay"):
        s = t["score"]
        ci = mean_ci(s, rng=rng_for(options, "null", *key), n_resamples=options.n_bootstrap, confidence=options.confidence)
        rows.append(NullExperiment(*key, int(s.size), ci.estimate, ci.low, ci.high, float(np.mean(s == 100.0)), options.confidence))
    return rows
