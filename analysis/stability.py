"""Score stability: at position (0, 0) the document is the needle sentence
alone, so orig and rand hay give identical inputs for deterministic needles;
a stable judge scores them identically.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from analysis.load import Table
from analysis.options import GROUP_KEYS, AnalysisOptions


class StabilityRow(NamedTuple):
    judge: str
    prompt_id: str
    prompt_version: str
    needle: str
    n_pairs: int  # documents scored at (0, 0) under both orig and rand
    exact_agreement: float
    mean_abs_diff: float
    max_abs_diff: float


def score_stability(scored: Table, options: AnalysisOptions) -> list[StabilityRow]:
    """Exact-agreement rate and mean absolute difference between the orig
    and rand scores of the same (document, replicate) at (0, 0), for the
    deterministic needles in options.stability_needles.
    """
    rows = []
    origin = scored.select((scored["i"] == 0) & (scored["j"] == 0) & np.isin(scored["needle"], list(options.stability_needles)))
    for key, t in origin.groups(*GROUP_KEYS, "needle"):
        by_hay: dict[str, dict[tuple[str, int], float]] = {"orig": {}, "rand": {}}
        for hay, doc, rep, s in zip(t["hay"].tolist(), t["doc_id"].tolist(), t["replicate"].tolist(), t["score"].tolist()):
            if hay in by_hay:
                by_hay[hay][(doc, rep)] = s
        common = sorted(by_hay["orig"].keys() & by_hay["rand"].keys())
        if not common:
            continue
        diff = np.abs(np.array([by_hay["orig"][c] - by_hay["rand"][c] for c in common]))
        rows.append(StabilityRow(*key, len(common), float(np.mean(diff == 0)), float(diff.mean()), float(diff.max()) if diff.size else math.nan))
    return rows
