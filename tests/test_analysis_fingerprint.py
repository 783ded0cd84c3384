from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.fingerprint import QUARTILE_BOUNDARIES, STS_BOUNDARIES, adjacent_levels_share, band_boundaries, score_histogram, scoring_fingerprint
from analysis.load import Run, rows_to_table
from engine.contracts import ResultRow


def test_adjacent_levels_share_by_hand():
    # levels 70:2, 80:3, 90:1 → adjacent pairs hold 5 and 4 of 6
    assert adjacent_levels_share(np.array([70.0, 70, 80, 80, 80, 90])) == (5 / 6, 70.0, 80.0)
    assert adjacent_levels_share(np.array([100.0, 100])) == (1.0, 100.0, 100.0)
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
