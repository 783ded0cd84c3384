"""Agreement among judges: Krippendorff's alpha between every two raters
(judge × prompt) and within each panel, with percentile bootstrap CIs over
items. `alpha_ci` is the one bootstrap of alpha in the package: analysis.human
(a judge against people) uses it too.

Level: ordinal when every rater's prompt has a short integer scale (at
most `SHORT_SCALE_LEVELS` levels, e.g. 1-7), on the raw answers; interval
on the 0-100 scores otherwise.

Which code computes alpha: the `krippendorff` package for the ordinal
point estimate. For the interval level on 0-100 scores it builds a units ×
values × values array (values = distinct scores: thousands for the baseline
judges' decimals; 800 GB for 3,000 items), so the interval level uses
`analysis.stats.krippendorff_alpha`, whose interval path needs O(values)
memory and agrees with the package to 1e-12 wherever the package fits
(tests/test_analysis_agreement.py checks both on the same data). The
interval bootstrap weights units instead of copying them: alpha depends on
the data only through per-unit sums (count, Σv, Σv², within-unit squared
differences), so B resamples are one B × units matrix product; the ordinal
bootstrap likewise, through each unit's share of the coincidence matrix
(units × levels², a short scale's few levels), where the package would take
~20 ms a resample.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any, Literal

import msgspec
import numpy as np

from analysis.load import Table
from analysis.options import GROUP_KEYS, AnalysisOptions, rng_for
from analysis.stats import krippendorff_alpha

ITEM_KEYS = ("needle", "hay", "i", "j", "doc_id", "replicate", "order", "control")
SHORT_SCALE_LEVELS = 11
RESAMPLE_CHUNK = 100
MAX_COINCIDENCE_CELLS = 4_000_000  # units × levels² floats (32 MB) for the one-product ordinal bootstrap

Level = Literal["interval", "ordinal"]


class AlphaCI(msgspec.Struct, frozen=True):
    """Alpha, its percentile bootstrap interval (NaN when it cannot be had) and the units behind it."""

    alpha: float
    low: float
    high: float
    n_units: int  # items rated by at least two of the raters
    confidence: float = 0.95


class PairAgreementRow(msgspec.Struct, frozen=True):
    judge_a: str
    prompt_a_id: str
    prompt_a_version: str
    judge_b: str
    prompt_b_id: str
    prompt_b_version: str
    level: str
    n: int  # items both rated
    alpha: float
    alpha_low: float
    alpha_high: float
    mean_abs_diff: float  # on 0-100
    confidence: float


class PanelAgreementRow(msgspec.Struct, frozen=True):
    judge: str  # the panel
    prompt_id: str  # "panel"
    prompt_version: str
    members: str  # "judge (prompt id), ..."
    level: str
    n: int  # items rated by at least two members
    alpha: float
    alpha_low: float
    alpha_high: float
    confidence: float


def ordinal_alpha(data: np.ndarray) -> float:
    """Ordinal alpha of a raters × units matrix (NaN = missing), by the `krippendorff` package."""
    import krippendorff

    present = ~np.isnan(data)
    if np.unique(data[present]).size < 2:
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))


def alpha(data: np.ndarray, level: Level) -> float:
    data = np.asarray(data, dtype=float)
    return ordinal_alpha(data) if level == "ordinal" else krippendorff_alpha(data, "interval")


def _interval_unit_sums(data: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pairable unit (>= 2 values): m, Σv, Σv², and Σ_{i≠j}(v_i − v_j)²/(m − 1)."""
    present = ~np.isnan(data)
    m = present.sum(axis=0)
    keep = m >= 2
    values = np.where(present, data, 0.0)[:, keep]
    m = m[keep].astype(float)
    s1, s2 = values.sum(axis=0), (values * values).sum(axis=0)
    within = (2.0 * m * s2 - 2.0 * s1 * s1) / (m - 1.0)
    return m, s1, s2, within


def _interval_alpha_weighted(m: np.ndarray, s1: np.ndarray, s2: np.ndarray, within: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Interval alpha for each row of `weights` (units counted that many times)."""
    n = weights @ m
    observed = (weights @ within) / n
    total, squares = weights @ s1, weights @ s2
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (2.0 * n * squares - 2.0 * total * total) / (n * (n - 1.0))
        return np.where(expected > 0, 1.0 - observed / expected, np.nan)


def _ordinal_unit_coincidences(data: np.ndarray) -> np.ndarray:
    """Per pairable unit, its contribution to the coincidence matrix
    (n_uc·n_uk − [c = k]·n_uc)/(m_u − 1), flattened: units × levels²."""
    present = ~np.isnan(data)
    values = np.unique(data[present])
    counts = np.stack([(data == v).sum(axis=0) for v in values], axis=1).astype(float)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    pairs = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(values.size)
    return (pairs / (m - 1.0)[:, None, None]).reshape(counts.shape[0], -1)


def _ordinal_alpha_weighted(unit_coincidences: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Ordinal alpha for each row of `weights` (units counted that many times);
    δ² as analysis.stats.krippendorff_alpha, from each resample's level counts."""
    levels = math.isqrt(unit_coincidences.shape[1])
    coincidences = (weights @ unit_coincidences).reshape(-1, levels, levels)
    n_c = coincidences.sum(axis=2)
    n = n_c.sum(axis=1)
    cumulative = np.concatenate([np.zeros((n_c.shape[0], 1)), np.cumsum(n_c, axis=1)], axis=1)
    lo = np.minimum.outer(np.arange(levels), np.arange(levels))
    hi = np.maximum.outer(np.arange(levels), np.arange(levels))
    delta = (cumulative[:, hi + 1] - cumulative[:, lo] - (n_c[:, lo] + n_c[:, hi]) / 2.0) ** 2
    observed = (coincidences * delta).sum(axis=(1, 2)) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (n_c[:, :, None] * n_c[:, None, :] * delta).sum(axis=(1, 2)) / (n * (n - 1.0))
        return np.where(expected > 0, 1.0 - observed / expected, np.nan)


def alpha_ci(data: np.ndarray, level: Level, *, rng: np.random.Generator, n_resamples: int, confidence: float) -> AlphaCI:
    """Alpha of a raters × units matrix (NaN = missing) and its percentile
    bootstrap CI, units resampled (n_resamples = 0: no interval)."""
    data = np.asarray(data, dtype=float)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    data = data[:, pairable]
    units = data.shape[1]
    if units < 2:
        return AlphaCI(math.nan, math.nan, math.nan, units, confidence)
    point = alpha(data, level)
    if math.isnan(point) or n_resamples < 1:
        return AlphaCI(point, math.nan, math.nan, units, confidence)
    if level == "interval":
        sums = _interval_unit_sums(data)
        weighted = lambda weights: _interval_alpha_weighted(*sums, weights)  # noqa: E731
    elif np.unique(data[~np.isnan(data)]).size ** 2 * units <= MAX_COINCIDENCE_CELLS:
        unit_coincidences = _ordinal_unit_coincidences(data)
        weighted = lambda weights: _ordinal_alpha_weighted(unit_coincidences, weights)  # noqa: E731
    else:  # many levels (people's labels on a fine scale): one coincidence matrix a resample
        weighted = lambda weights: np.array([krippendorff_alpha(np.repeat(data, w.astype(int), axis=1), "ordinal") for w in weights])  # noqa: E731
    chunks = []
    for start in range(0, n_resamples, RESAMPLE_CHUNK):  # ~RESAMPLE_CHUNK × units floats at a time
        size = min(RESAMPLE_CHUNK, n_resamples - start)
        picks = rng.integers(0, units, size=(size, units)) + (np.arange(size) * units)[:, None]
        chunks.append(weighted(np.bincount(picks.ravel(), minlength=size * units).reshape(size, units).astype(float)))
    draws = np.concatenate(chunks)
    draws = draws[~np.isnan(draws)]
    if draws.size == 0:
        return AlphaCI(point, math.nan, math.nan, units, confidence)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail])
    return AlphaCI(point, float(low), float(high), units, confidence)


def alpha_sentence(alpha: float) -> str:
    """One sentence reading an agreement α for someone who sees a number."""
    if math.isnan(alpha):
        return "α is undefined here (no variation in the scores)."
    if alpha < 0:
        return ("below 0, the two disagree more than scores paired at random would: a systematic difference "
                "(one scores on another part of the scale, or orders the items differently), not mere noise.")  # fmt: skip
    if alpha < 0.667:
        return "below 0.667, the usual floor for even tentative conclusions: they measure the items differently."
    if alpha < 0.8:
        return "between 0.667 and 0.8: tentative agreement."
    return "0.8 or above: the two largely agree."


# ---------------------------------------------------------------------------
# Over a run's rows


def short_scale(scale: str) -> bool:
    """An integer scale of at most SHORT_SCALE_LEVELS levels ("1-7", "-3..3")."""
    from engine.prompts.scales import parse_scale
    from engine.contracts import ConfigError

    try:
        parsed = parse_scale(scale)
    except ConfigError:
        return False
    return parsed.integer and parsed.high - parsed.low + 1 <= SHORT_SCALE_LEVELS


def prompt_scales(manifest: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(prompt id, version) -> scale name, from the manifest's prompts."""
    prompts = manifest.get("prompts")
    entries = prompts.values() if isinstance(prompts, dict) else ()
    return {(e["id"], e["version"]): e.get("scale", "") for e in entries if isinstance(e, dict) and "id" in e and "version" in e}


def _level(raters: list[tuple], scales: dict[tuple[str, str], str]) -> Level:
    return "ordinal" if all(short_scale(scales.get((r[1], r[2]), "")) for r in raters) else "interval"


def _rater_scores(scored: Table) -> tuple[dict[tuple, tuple[np.ndarray, np.ndarray]], list]:
    """Per rater (GROUP_KEYS): (sorted item codes, 0-100 scores); an item rated twice keeps its last score."""
    items = scored.key_codes(*ITEM_KEYS)
    scores = scored["score"]
    order, starts, keys = scored.group_index(*GROUP_KEYS)
    raters = {}
    for g, key in enumerate(keys):
        rows = np.sort(order[starts[g] : starts[g + 1]])[::-1]
        unique_items, first = np.unique(items[rows], return_index=True)
        raters[key] = (unique_items, scores[rows[first]])
    return raters, list(keys)


def _matrix(raters: dict[tuple, tuple[np.ndarray, np.ndarray]], chosen: list[tuple]) -> np.ndarray:
    """A raters × units matrix over the union of the chosen raters' items (NaN = not rated)."""
    units = np.unique(np.concatenate([raters[r][0] for r in chosen]))
    data = np.full((len(chosen), units.size), np.nan)
    for row, r in enumerate(chosen):
        data[row, np.searchsorted(units, raters[r][0])] = raters[r][1]
    return data


def _to_raw(data: np.ndarray, scale: str) -> np.ndarray:
    """0-100 scores back on a short scale's levels (for the ordinal level)."""
    from engine.prompts.scales import parse_scale

    s = parse_scale(scale)
    return np.round(s.low + data * (s.high - s.low) / 100.0)


def pair_agreement(scored: Table, manifest: dict[str, Any], options: AnalysisOptions) -> list[PairAgreementRow]:
    """Alpha between every two raters over the items both scored."""
    raters, keys = _rater_scores(scored)
    scales = prompt_scales(manifest)
    out = []
    for a, b in itertools.combinations(keys, 2):
        data = _matrix(raters, [a, b])
        both = ~np.isnan(data).any(axis=0)
        if both.sum() < 2:
            continue
        data = data[:, both]
        level = _level([a, b], scales)
        diff = float(np.abs(data[0] - data[1]).mean())
        if level == "ordinal":
            data = _to_raw(data, scales[(a[1], a[2])])
        ci = alpha_ci(data, level, rng=rng_for(options, "agreement", *a, *b), n_resamples=options.n_bootstrap, confidence=options.confidence)
        out.append(PairAgreementRow(*a, *b, level, int(both.sum()), ci.alpha, ci.low, ci.high, diff, options.confidence))
    return out


def panel_agreement(scored: Table, manifest: dict[str, Any], options: AnalysisOptions) -> list[PanelAgreementRow]:
    """Alpha among each panel's members (the raters the panel asked:
    manifest["panels"][panel]["raters"]) over the items the panel judged."""
    panels = manifest.get("panels")
    if not isinstance(panels, dict) or not panels:
        return []
    raters, _ = _rater_scores(scored)
    scales = prompt_scales(manifest)
    out = []
    for panel, spec in sorted(panels.items()):
        chosen = [tuple(m) for m in spec.get("raters", []) if tuple(m) in raters]
        for key in (k for k in raters if k[0] == panel):
            if len(chosen) < 2:
                continue
            data = _matrix(raters, chosen)
            units = np.unique(np.concatenate([raters[r][0] for r in chosen]))
            data = data[:, np.isin(units, raters[key][0])]
            level = _level(chosen, scales)
            if level == "ordinal":
                data = _to_raw(data, scales[(chosen[0][1], chosen[0][2])])
            ci = alpha_ci(data, level, rng=rng_for(options, "panel-agreement", *key), n_resamples=options.n_bootstrap, confidence=options.confidence)
            members = ", ".join(f"{m[0]} ({m[1]})" for m in chosen)
            out.append(PanelAgreementRow(*key, members, level, ci.n_units, ci.alpha, ci.low, ci.high, options.confidence))
    return out


def panel_agreement_from_rows(rows: Sequence[Any], panels: dict[str, Any], options: AnalysisOptions) -> list[PanelAgreementRow]:
    """Alpha among a panel's members from the panel's own rows (`members`,
    `member_scores`): for members with no rows of their own (alone = false).
    A cascade's rows hold the later members only where it escalated, so its
    alpha rests on those items alone."""
    out = []
    for name, spec in sorted(panels.items()):
        raters = [m[0] for m in spec.get("raters", [])]
        mine = [r for r in rows if r.judge == name and r.members]
        if len(raters) < 2 or not mine:
            continue
        data = np.full((len(raters), len(mine)), np.nan)
        for unit, r in enumerate(mine):
            for member, score in zip(r.members, r.member_scores):
                data[raters.index(member), unit] = score
        ci = alpha_ci(data, "interval", rng=rng_for(options, "panel-agreement", name), n_resamples=options.n_bootstrap, confidence=options.confidence)
        members = ", ".join(f"{m[0]} ({m[1]})" for m in spec["raters"]) + " (from the panel's rows)"
        out.append(PanelAgreementRow(name, mine[0].prompt_id, mine[0].prompt_version, members, "interval", ci.n_units, ci.alpha, ci.low, ci.high, options.confidence))
    return out
