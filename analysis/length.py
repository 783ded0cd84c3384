"""Document length: scores by k = i + j + 1 against the surface reference.

With one of k sentences perturbed, 100·(k − 1)/k is the share of the
document left untouched: a judge that scores above it rates the pair more
similar than plain sentence overlap would.
"""

from __future__ import annotations

import numpy as np

from analysis.load import Table
from analysis.options import GROUP_KEYS, RaterRow

POOLED = "all"  # the needle label of rows pooled over the perturbing needles


def overlap_reference(k: int | np.ndarray) -> float | np.ndarray:
    """100·(k − 1)/k: percent of sentences unchanged in a k-sentence document."""
    return 100.0 * (k - 1) / k


class LengthRow(RaterRow, frozen=True):
    hay: str
    needle: str  # a needle type, or "all" for the perturbing needles pooled
    k: int
    n: int
    mean: float
    sd: float  # sample standard deviation (ddof = 1); NaN for n < 2
    reference: float
    above_reference: bool


class LengthSummary(RaterRow, frozen=True):
    hay: str
    needle: str
    n: int
    n_lengths: int
    n_above: int  # lengths k whose mean score exceeds the reference
    share_above: float  # n_above / n_lengths


def _rows_for(key: tuple, needle: str, t: Table) -> list[LengthRow]:
    rows = []
    for (k,), cell in t.groups("k"):
        s = cell["score"]
        ref = float(overlap_reference(k))
        mean = float(s.mean())
        rows.append(LengthRow(*key, needle, int(k), int(s.size), mean, float(s.std(ddof=1)) if s.size > 1 else float("nan"), ref, mean > ref))
    return rows


def length_profile(scored: Table) -> tuple[list[LengthRow], list[LengthSummary]]:
    """Mean and sd of scores by length k per judge × prompt × hay, per
    perturbing needle and pooled over them; plus the share of lengths above
    the 100·(k−1)/k reference.
    """
    rows: list[LengthRow] = []
    summaries: list[LengthSummary] = []
    perturbed = scored.select(scored["needle"] != "none")
    for key, t in perturbed.groups(*GROUP_KEYS, "hay"):
        parts = [(POOLED, t)] + [(needle, sub) for (needle,), sub in t.groups("needle")]
        for needle, sub in parts:
            block = _rows_for(key, needle, sub)
            rows.extend(block)
            above = sum(r.above_reference for r in block)
            summaries.append(LengthSummary(*key, needle, len(sub), len(block), above, above / len(block)))
    return rows, summaries
