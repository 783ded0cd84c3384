"""Instrument checks: is the judge fit to measure anything, before any
statistic is read? Shown first in the report.

Order-swap items (order "21") and the design's controls (control
"null_edit" / "negative") feed these checks only, never the main statistics.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import msgspec
import numpy as np

from analysis.fingerprint import adjacent_levels_share
from analysis.load import Table
from analysis.options import GROUP_KEYS, AnalysisOptions, RaterRow, rng_for
from analysis.stats import mean_ci

ITEM_KEYS = ("needle", "hay", "i", "j", "doc_id", "replicate")


def _rater_key(row: Any) -> tuple[str, str, str]:
    return (row.judge, row.prompt_id, row.prompt_version)


def _ok_scores(t: Table) -> np.ndarray:
    return t["score"][(t["status"] == "ok") & ~np.isnan(t["score"])]


# ---------------------------------------------------------------------------
# Item oracle


class OracleRow(msgspec.Struct, frozen=True):
    needle: str
    hay: str
    n_pairs: int  # distinct (document, position) pairs behind the results
    pass_rate: float
    flagged: bool


def oracle_pass_rates(rows: Table, options: AnalysisOptions) -> list[OracleRow]:
    """Share of the judged pairs whose item oracle passed (the needle is in
    the perturbed text and nowhere else), per needle × hay, counting each
    (document, position) once however many judges scored it."""
    out = []
    regular = rows.where(control="")
    for (needle, hay), t in regular.groups("needle", "hay"):
        seen: dict[tuple, bool] = {}
        for key in zip(t["doc_id"].tolist(), t["i"].tolist(), t["j"].tolist(), t["oracle_ok"].tolist()):
            seen[key[:3]] = seen.get(key[:3], True) and bool(key[3])
        rate = float(np.mean(list(seen.values())))
        out.append(OracleRow(needle, hay, len(seen), rate, rate < options.thresholds.min_oracle_pass_rate))
    return out


def manifest_oracle_counts(manifest: dict[str, Any]) -> dict[str, Any]:
    """Oracle failure counts the pair generation recorded in the manifest,
    wherever they sit (top level or under "counts"); {} when absent."""
    found: dict[str, Any] = {}
    for scope in (manifest, manifest.get("counts") if isinstance(manifest.get("counts"), dict) else {}):
        for name, value in scope.items():
            if "oracle" in str(name).lower():
                found[str(name)] = value
    return found


# ---------------------------------------------------------------------------
# Failures and output length per condition


class FailureRow(RaterRow, frozen=True):
    control: str
    order: str
    needle: str
    hay: str
    n: int
    ok_rate: float
    refused_rate: float
    unparseable_rate: float
    error_rate: float
    failure_rate: float
    mean_output_tokens: float
    mean_output_chars: float
    fit_for_analysis: bool  # failure_rate ≤ threshold


def failure_rates(rows: Table, options: AnalysisOptions) -> list[FailureRow]:
    """refused / unparseable / error rates and mean output length per
    judge × prompt × control × order × needle × hay; a condition whose
    failure rate exceeds the threshold is not fit for analysis (its scores
    are a selected subset)."""
    out = []
    for key, t in rows.groups(*GROUP_KEYS, "control", "order", "needle", "hay"):
        status = t["status"]
        rates = {s: float(np.mean(status == s)) for s in ("ok", "refused", "unparseable", "error")}
        failure = 1.0 - rates["ok"]
        out.append(
            FailureRow(
                *key, n=len(t), ok_rate=rates["ok"], refused_rate=rates["refused"], unparseable_rate=rates["unparseable"],
                error_rate=rates["error"], failure_rate=failure, mean_output_tokens=float(t["completion_tokens"].mean()),
                mean_output_chars=float(t["output_chars"].mean()),
                fit_for_analysis=failure <= options.thresholds.max_failure_rate,
            )  # fmt: skip
        )
    return out


# ---------------------------------------------------------------------------
# Order swap


class OrderSwapRow(RaterRow, frozen=True):
    n_pairs: int
    mean_signed_diff: float  # score(21) − score(12)
    low: float
    high: float
    mean_abs_diff: float
    retest_abs_diff: float  # mean |score − score'| over replicates of the same items in order 12; nan without replicates
    n_retest_pairs: int
    exact_agreement: float
    flagged: bool  # a systematic shift beyond its tolerance, or |diff| beyond retest noise (see CheckThresholds)
    confidence: float


def order_swap_symmetry(rows: Table, options: AnalysisOptions) -> list[OrderSwapRow]:
    """The same pair judged with Document 1 and 2 swapped should score the
    same: paired differences 21 − 12 with a percentile bootstrap CI.

    Two swapped judgments differ by the judge's noise as well, so the mean
    |diff| is compared with the retest noise of the same items (replicates
    judged in the same order) when the run has replicates; a noisy but
    order-blind judge is not flagged.
    """
    out = []
    thresholds = options.thresholds
    regular = rows.select((rows["control"] == "") & (rows["status"] == "ok") & ~np.isnan(rows["score"]))
    for key, t in regular.groups(*GROUP_KEYS):
        by_order: dict[str, dict[tuple, float]] = {"12": {}, "21": {}}
        for order, *item, s in zip(t["order"].tolist(), *(t[k].tolist() for k in ITEM_KEYS), t["score"].tolist()):
            by_order[order][tuple(item)] = s
        common = sorted(by_order["12"].keys() & by_order["21"].keys())
        if not common:
            continue
        diff = np.array([by_order["21"][c] - by_order["12"][c] for c in common])
        ci = mean_ci(diff, rng=rng_for(options, "order", *key), n_resamples=options.n_bootstrap, confidence=options.confidence)
        mad = float(np.abs(diff).mean())
        retest = _retest_abs_diffs(by_order["12"], {c[:-1] for c in common})
        retest_mad = float(retest.mean()) if retest.size else math.nan
        systematic = not (math.isnan(ci.low) or ci.low <= 0.0 <= ci.high)
        shifted = systematic and abs(ci.estimate) > thresholds.order_swap_shift_tolerance
        asymmetric = retest.size > 0 and mad - retest_mad > thresholds.order_swap_tolerance
        out.append(OrderSwapRow(*key, len(common), ci.estimate, ci.low, ci.high, mad, retest_mad, int(retest.size),
                                float(np.mean(diff == 0)), shifted or asymmetric, options.confidence))  # fmt: skip
    return out


def _retest_abs_diffs(scores: dict[tuple, float], items: set[tuple]) -> np.ndarray:
    """|s − s'| over every pair of replicates of the same item (keys end with the replicate)."""
    by_item: dict[tuple, list[float]] = {}
    for key, score in scores.items():
        if key[:-1] in items:
            by_item.setdefault(key[:-1], []).append(score)
    diffs = [abs(a - b) for values in by_item.values() for a, b in itertools.combinations(values, 2)]
    return np.array(diffs, dtype=np.float64)


# ---------------------------------------------------------------------------
# Controls


class NullEditRow(RaterRow, frozen=True):
    n: int
    mean: float
    low: float
    high: float
    n_identical: int
    mean_identical: float  # identical text (needle none); 100 assumed when the run has none
    gap: float  # mean_identical − mean
    flagged: bool  # gap above tolerance: the judge reacts to formatting
    confidence: float


class NegativeRow(RaterRow, frozen=True):
    n: int
    mean: float
    low: float
    high: float
    ceiling: float
    share_at_bottom: float  # share scoring ≤ ceiling
    flagged: bool  # too few at the bottom: the judge does not see unrelated documents as unrelated
    confidence: float


def control_checks(rows: Table, options: AnalysisOptions) -> tuple[list[NullEditRow], list[NegativeRow]]:
    """Null edits (whitespace / line breaks / formatting only) must score
    like identical text; negative controls (two unrelated documents of the
    same length) must land at the bottom of the scale."""
    th = options.thresholds
    nulls, negatives = [], []
    for key, t in rows.groups(*GROUP_KEYS):
        edits = _ok_scores(t.where(control="null_edit"))
        if edits.size:
            identical = _ok_scores(t.where(control="", order="12", needle="none"))
            ref = float(identical.mean()) if identical.size else 100.0
            ci = mean_ci(edits, rng=rng_for(options, "null_edit", *key), n_resamples=options.n_bootstrap, confidence=options.confidence)
            gap = ref - ci.estimate
            nulls.append(NullEditRow(*key, int(edits.size), ci.estimate, ci.low, ci.high, int(identical.size), ref, gap,
                                     gap > th.null_edit_tolerance, options.confidence))  # fmt: skip
        neg = _ok_scores(t.where(control="negative"))
        if neg.size:
            ci = mean_ci(neg, rng=rng_for(options, "negative", *key), n_resamples=options.n_bootstrap, confidence=options.confidence)
            share = float(np.mean(neg <= th.negative_ceiling))
            negatives.append(NegativeRow(*key, int(neg.size), ci.estimate, ci.low, ci.high, th.negative_ceiling, share,
                                         share < th.negative_min_share, options.confidence))  # fmt: skip
    return nulls, negatives


# ---------------------------------------------------------------------------
# Resolution


class ResolutionRow(RaterRow, frozen=True):
    n: int
    adjacent_share: float
    level_low: float
    level_high: float
    flagged: bool  # nearly all scores on two adjacent levels


def resolution(scored: Table, options: AnalysisOptions) -> list[ResolutionRow]:
    """Share of a judge's scores on the two adjacent levels holding the most."""
    out = []
    for key, t in scored.groups(*GROUP_KEYS):
        adj = adjacent_levels_share(t["score"])
        out.append(ResolutionRow(*key, len(t), adj.share, adj.low, adj.high, adj.share > options.thresholds.resolution_max_share))
    return out


# ---------------------------------------------------------------------------
# Verdict


class JudgeVerdict(RaterRow, frozen=True):
    n: int  # experimental rows (order 1-2, no control) of this judge × prompt
    fit: bool  # no instrument check flagged
    reasons: str  # the failed checks, "; "-separated


def judge_verdicts(
    rows: Table,
    failures: list[FailureRow],
    swaps: list[OrderSwapRow],
    nulls: list[NullEditRow],
    negatives: list[NegativeRow],
    resolutions: list[ResolutionRow],
) -> list[JudgeVerdict]:
    """One line per judge × prompt: fit for analysis, or which checks failed,
    each failed check with the n it rests on (not the judge's total rows)."""
    reasons: dict[tuple, list[str]] = {}
    unfit: dict[tuple, list[FailureRow]] = {}
    for r in failures:
        if not r.fit_for_analysis:
            unfit.setdefault(_rater_key(r), []).append(r)
    for key, conditions in unfit.items():
        n = sum(r.n for r in conditions)
        reasons.setdefault(key, []).append(f"{len(conditions)} condition(s) above the failure-rate threshold (n={n} items in them)")
    checked: list[tuple[str, list[Any], str, str]] = [
        ("order-swap asymmetry", swaps, "n_pairs", "swapped pairs"),
        ("null edits scored unlike identical text", nulls, "n", "null edits"),
        ("negative controls not at the bottom of the scale", negatives, "n", "negative controls"),
        ("scores on two adjacent levels", resolutions, "n", "scores"),
    ]
    for label, results, n_field, unit in checked:
        for r in results:
            if r.flagged:
                reasons.setdefault(_rater_key(r), []).append(f"{label} (n={getattr(r, n_field)} {unit})")
    out = []
    for key, t in rows.groups(*GROUP_KEYS):
        n = int(np.count_nonzero(t.mask(control="", order="12")))
        why = reasons.get(key, [])
        out.append(JudgeVerdict(*key, n, not why, "; ".join(why)))
    return out
