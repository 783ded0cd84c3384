from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.length import POOLED, length_profile, overlap_reference
from analysis.load import Run, rows_to_table
from analysis.synthetic import PlantedEffects, SyntheticJudge, synthetic_rows


def test_overlap_reference():
    assert overlap_reference(1) == 0.0
    assert overlap_reference(4) == 75.0
    np.testing.assert_allclose(overlap_reference(np.array([2, 10])), [50.0, 90.0])


def test_length_profile_on_noise_free_scores():
    # neg always 80, con always 95: by hand, 80 > 100(k−1)/k exactly for k ≤ 4 and 95 > it for k ≤ 19.
    judge = SyntheticJudge(name="flat", effects=PlantedEffects(needle_means={"none": 100.0, "neg": 80.0, "con": 95.0}, noise_sd=0.0))
    scored = Run(Path("."), {}, rows_to_table(synthetic_rows([judge], size=5, docs_per_cell=4))).scored()
    rows, summaries = length_profile(scored)
    by = {(r.hay, r.needle, r.k): r for r in rows}
    neg5 = by[("orig", "neg", 5)]
    assert (neg5.mean, neg5.sd, neg5.reference, neg5.above_reference) == (80.0, 0.0, 80.0, False)
    assert by[("orig", "neg", 4)].above_reference and by[("orig", "neg", 4)].n == 4 * 4  # 4 cells with i+j=3, 4 docs
    pooled = by[("orig", POOLED, 3)]
    assert pooled.mean == pytest.approx(87.5) and pooled.n == 2 * 3 * 4
    share = {(s.hay, s.needle): s for s in summaries}
    assert share[("orig", "neg")].share_above == pytest.approx(4 / 9)  # k = 1, 2, 3, 4 of 1..9
    assert share[("orig", "con")].share_above == 1.0
    assert all(s.needle != "none" for s in summaries)
