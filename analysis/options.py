"""Settings of the analysis: resampling counts, confidence, thresholds.

Resampling counts are settings because the report must stay fast for the
quickstart (tens of thousands of rows on 2 cores) and precise for a paper.
"""

from __future__ import annotations

import msgspec
import numpy as np

from engine.seeding import item_rng

GROUP_KEYS: tuple[str, ...] = ("judge", "prompt_id", "prompt_version")
"""Every table row names its judge and prompt id + version."""


class RaterRow(msgspec.Struct, frozen=True):
    """The first columns of a table row about one rater (GROUP_KEYS): a row type
    subclasses it, and its own fields follow these."""

    judge: str
    prompt_id: str
    prompt_version: str


class CheckThresholds(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    max_failure_rate: float = 0.05  # refused + unparseable + error share above which a condition is not fit
    null_edit_tolerance: float = 5.0  # points a null edit may score below identical text
    negative_ceiling: float = 25.0  # a negative control must score at most this (bottom band) ...
    negative_min_share: float = 0.9  # ... in at least this share of items
    # An order-sensitive judge: a systematic shift score(21) − score(12) whose CI
    # excludes 0 and whose size exceeds order_swap_shift_tolerance, or a mean
    # |score(21) − score(12)| that exceeds the judge's retest noise (mean |score −
    # score'| over replicates of the same item) by order_swap_tolerance. Without
    # replicates per-item swaps cannot be told from noise, so only the shift counts.
    order_swap_shift_tolerance: float = 2.0
    order_swap_tolerance: float = 5.0
    resolution_max_share: float = 0.9  # share of scores on two adjacent levels above which resolution is too coarse
    min_oracle_pass_rate: float = 0.95


class AnalysisOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    seed: int = 0
    confidence: float = 0.95
    alpha: float = 0.05
    n_bootstrap: int = 2000
    n_permutations: int = 1000
    percentiles: tuple[float, ...] = tuple(float(p) for p in range(1, 100))
    stability_needles: tuple[str, ...] = ("none", "neg", "con")  # deterministic needles at (0, 0)
    thresholds: CheckThresholds = CheckThresholds()


def rng_for(options: AnalysisOptions, *identity: object) -> np.random.Generator:
    """The generator for one resampling, keyed by what is resampled."""
    return item_rng(options.seed, "analysis", *identity)
