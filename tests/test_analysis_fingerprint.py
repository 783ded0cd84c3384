from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import msgspec

from analysis.fingerprint import (
    QUARTILE_BOUNDARIES, STS_BOUNDARIES, adjacent_levels_share, band_boundaries, most_frequent, score_histogram, scoring_fingerprint,
)  # fmt: skip
from analysis.load import Run, rows_to_table
from engine.contracts import ResultRow


def test_adjacent_levels_share_by_hand():
    # levels 70:2, 80:3, 90:1 → adjacent pairs hold 5 and 4 of 6
    astuple = msgspec.structs.astuple
    assert astuple(adjacent_levels_share(np.array([70.0, 70, 80, 80, 80, 90]))) == (5 / 6, 70.0, 80.0)
    assert astuple(adjacent_levels_share(np.array([100.0, 100]))) == (1.0, 100.0, 100.0)
    assert np.isnan(adjacent_levels_share(np.array([])).share)


def test_band_boundaries_from_manifest_or_default():
    manifest = {"prompts": {"mine": {"id": "custom", "version": "1", "band_boundaries": [0, 33, 66, 100]}}}
    assert band_boundaries("custom", manifest) == (0.0, 33.0, 66.0, 100.0)
    assert band_boundaries("bands", manifest) == QUARTILE_BOUNDARIES
    assert band_boundaries("sts", {}) == STS_BOUNDARIES


def test_fingerprint_by_hand():
    scores = [0.0, 25.0, 30.0, 50.0, 75.0, 100.0, 99.0, 10.0]
    rows = [ResultRow(run_id="r", judge="j", adapter="a", model="m", prompt_id="bands", prompt_version="v", needle="neg",
                      hay="orig", i=0, j=n, doc_id="d", doc_index=n, score=s) for n, s in enumerate(scores)]  # fmt: skip
    (fp,) = scoring_fingerprint(Run(Path("."), {}, rows_to_table(rows)).scored(), {})
    assert fp.n == 8 and fp.distinct_levels == 8
    assert fp.share_on_boundaries == pytest.approx(5 / 8)  # 0, 25, 50, 75, 100
    assert fp.share_multiple_of_10 == pytest.approx(5 / 8)  # 0, 30, 50, 100, 10
    assert fp.share_multiple_of_5 == pytest.approx(7 / 8)
    assert (fp.adjacent_share, fp.adjacent_low) == (pytest.approx(2 / 8), 0.0)
    counts, edges = score_histogram(np.array(scores))
    assert counts.sum() == 8 and counts[100] == 1 and counts[99] == 1 and edges[-1] == 101


def test_most_frequent_bins_continuous_scores_and_says_when_nothing_repeats():
    assert most_frequent(np.array([80.0, 80, 80, 70, 70, 10])) == "80 (50%), 70 (33%)"  # 10 occurs once: not a "most frequent" level
    assert most_frequent(np.array([1.0, 2, 3])) == "no repeated value"
    continuous = np.array([99.375, 97.5, 96.25, 12.5, 13.75, 51.1])
    assert most_frequent(continuous) == "5-point bins 95–100 (50%), 10–15 (33%), 50–55 (17%)"
    assert most_frequent(np.array([50.0] * 300 + [60.0] * 2)) == "50 (99%), 60 (0.7%)"  # a rare level is not shown as 0%
