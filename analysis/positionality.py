"""Positionality: does the needle's place in the document change the score?

Sign convention: early-positionality bias = mean(second half) − mean(first
half), where the first half holds needles with i < j (fewer sentences
before the needle than after, i.e. early) and the second half i > j. A
positive bias means early needles lower the score more than late ones (the
judge weighs the beginning of a document more); the diagonal i = j is in
neither half.
"""

from __future__ import annotations

import math

import msgspec
import numpy as np

from analysis.load import Table
from analysis.options import GROUP_KEYS, AnalysisOptions, RaterRow, rng_for
from analysis.stats import emd_permutation_test, holm, ks_test, mean_difference_ci

CONDITION_KEYS = (*GROUP_KEYS, "needle", "hay")


class PositionalityRow(RaterRow, frozen=True):
    needle: str
    hay: str
    n_first: int  # needles with i < j
    n_second: int  # needles with i > j
    mean_first: float
    mean_second: float
    ks_statistic: float
    p_value: float
    p_holm: float  # Holm over every KS test of the run
    significant: bool  # p_holm ≤ alpha
    bias: float  # mean_second − mean_first
    bias_low: float
    bias_high: float
    confidence: float


def positionality(scored: Table, options: AnalysisOptions) -> list[PositionalityRow]:
    """Two-sample KS test first half vs second half per judge × prompt ×
    needle × hay (scipy.stats.ks_2samp), Holm-corrected over all of them
    (Holm 1979), and the early-positionality bias with a percentile
    bootstrap CI.
    """
    partial = []
    for key, t in scored.groups(*CONDITION_KEYS):
        first = t["score"][t["i"] < t["j"]]
        second = t["score"][t["i"] > t["j"]]
        ks = ks_test(first, second)
        ci = mean_difference_ci(
            first, second, rng=rng_for(options, "bias", *key), n_resamples=options.n_bootstrap, confidence=options.confidence
        )
        partial.append((key, first, second, ks, ci))
    adjusted = holm([ks.p_value for *_, ks, _ in partial])
    rows = []
    for (key, first, second, ks, ci), p_adj in zip(partial, adjusted):
        rows.append(
            PositionalityRow(
                *key,
                n_first=int(first.size),
                n_second=int(second.size),
                mean_first=float(first.mean()) if first.size else math.nan,
                mean_second=float(second.mean()) if second.size else math.nan,
                ks_statistic=ks.statistic,
                p_value=ks.p_value,
                p_holm=float(p_adj),
                significant=bool(p_adj <= options.alpha),
                bias=ci.estimate,
                bias_low=ci.low,
                bias_high=ci.high,
                confidence=options.confidence,
            )
        )
    return rows


class CellEmdRow(RaterRow, frozen=True):
    needle: str
    hay: str
    i: int  # the cell (i, j) with i < j, compared with its mirror (j, i)
    j: int
    n_ij: int
    n_ji: int
    emd: float
    null_q95: float  # 95th percentile of the permutation null
    p_value: float
    p_holm: float  # Holm over the cells of this judge × prompt × needle × hay grid
    exceeds: bool  # emd > null_q95 (the uncorrected 5% noise floor)


def mirror_cell_emd(scored: Table, options: AnalysisOptions) -> list[CellEmdRow]:
    """EMD (first Wasserstein distance) between the scores at (i, j) and at
    its mirror (j, i), with a label-permutation null per cell.
    """
    rows: list[CellEmdRow] = []
    for key, t in scored.groups(*CONDITION_KEYS):
        by_cell: dict[tuple[int, int], list[float]] = {}
        for i, j, s in zip(t["i"].tolist(), t["j"].tolist(), t["score"].tolist()):
            by_cell.setdefault((i, j), []).append(s)
        grid = []
        for (i, j), scores in sorted(by_cell.items()):
            if i < j and (j, i) in by_cell:
                test = emd_permutation_test(
                    np.asarray(scores),
                    np.asarray(by_cell[(j, i)]),
                    rng=rng_for(options, "emd", *key, i, j),
                    n_permutations=options.n_permutations,
                )
                grid.append((i, j, test))
        adjusted = holm([test.p_value for *_, test in grid])
        for (i, j, test), p_adj in zip(grid, adjusted):
            rows.append(
                CellEmdRow(
                    *key, i=i, j=j, n_ij=test.n_a, n_ji=test.n_b, emd=test.emd, null_q95=test.null_q95,
                    p_value=test.p_value, p_holm=float(p_adj), exceeds=bool(test.emd > test.null_q95),
                )  # fmt: skip
            )
    return rows


class PositionGrid(msgspec.Struct, frozen=True):
    """Scores of one judge × prompt × needle × hay laid out by (i, j)."""

    key: tuple[str, ...]  # CONDITION_KEYS values
    size: int  # positions 0..size-1 on each axis
    mean: np.ndarray  # size × size, NaN where no data
    n: np.ndarray  # size × size counts
    scores: dict[tuple[int, int], np.ndarray]


def position_grids(scored: Table) -> list[PositionGrid]:
    grids = []
    for key, t in scored.groups(*CONDITION_KEYS):
        size = int(max(t["i"].max(), t["j"].max())) + 1
        mean = np.full((size, size), np.nan)
        count = np.zeros((size, size), dtype=np.int64)
        scores: dict[tuple[int, int], np.ndarray] = {}
        for (i, j), cell in t.groups("i", "j"):
            scores[(i, j)] = cell["score"]
            mean[i, j] = cell["score"].mean()
            count[i, j] = len(cell)
        grids.append(PositionGrid(key, size, mean, count, scores))
    return grids
