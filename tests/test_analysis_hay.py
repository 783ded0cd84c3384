from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.hay import hay_comparison
from analysis.load import Run, rows_to_table
from analysis.options import AnalysisOptions
from analysis.synthetic import RAND_LENIENCY, reference_judges, synthetic_rows

OPTIONS = AnalysisOptions(n_bootstrap=1000)


@pytest.fixture(scope="module")
def comparison():
    scored = Run(Path("."), {}, rows_to_table(synthetic_rows(reference_judges(), size=5, docs_per_cell=40))).scored()
    return hay_comparison(scored, OPTIONS)


def test_planted_rand_leniency_is_recovered(comparison):
    shifts, _ = comparison
    by = {(s.judge, s.needle): s for s in shifts}
    # leniency applies wherever the inputs differ: 24 of 25 positions ((0, 0) is the same input under both hays)
    truth = RAND_LENIENCY * 24 / 25
    for needle in ("con", "ner", "neg"):
        s = by[("planted", needle)]
        assert s.low <= truth <= s.high and s.low > 0, s
        # the judge without the effect: CI covers 0 (seeded data)
        f = by[("faulty", needle)]
        assert f.low <= 0.0 <= f.high, f
    assert by[("planted", "neg")].n_orig == 25 * 40


def test_percentile_shift_curve(comparison):
    _, curves = comparison
    con = [c for c in curves if c.judge == "planted" and c.needle == "con"]
    assert [c.percentile for c in con] == list(np.arange(1.0, 100.0))
    middle = [c.shift for c in con if 20 <= c.percentile <= 80]
    assert 4.0 <= np.median(middle) <= 8.0
    assert all(c.shift == pytest.approx(c.rand - c.orig) for c in con)
