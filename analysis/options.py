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


class CheckThresholds(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    max_failure_rate: float = 0.05  # refused + unparseable + error share above which a condition is not fit
    null_edit_tolerance: float = 5.0  # points a null edit may score below identical text
    negative_ceiling: float = 25.0  # a negative control must score at most this (bottom band) ...
    negative_min_share: float = 0.9  # ... in at least this share of items
    order_swap_tolerance: float = 5.0  # mean |score(12) − score(21)| above which a judge is order-sensitive
    resolution_max_share: float = 0.9  # share of scores on two adjacent levels above which resolution is too coarse
    min_oracle_pass_rate: float = 0.95


class AnalysisOptions(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    seed: int = 0
    confidence: float = 0.95
    alpha: float = 0.05
    n_bootstrap: int = 2000
    n_permutations: int = 1000
    kde_points: int = 64
    percentiles: tuple[float, ...] = tuple(float(p) for p in range(1, 100))
    stability_needles: tuple[str, ...] = ("none", "neg", "con")  # deterministic needles at (0, 0)
    thresholds: CheckThresholds = CheckThresholds()


def rng_for(options: AnalysisOptions, *identity: object) -> np.random.Generator:
    """The generator for one resampling, keyed by what is resampled."""
    return item_rng(options.seed, "analysis", *identity)
