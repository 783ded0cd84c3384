"""Planted: a 5-point early-position penalty for neg only (judge `planted`).

Sign convention: bias = mean(i > j) − mean(i < j), so a penalty on early
needles gives bias +5."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.load import Run, rows_to_table
from analysis.options import AnalysisOptions
from analysis.positionality import mirror_cell_emd, position_grids, positionality
from analysis.synthetic import EARLY_PENALTY_NEG, PlantedEffects, SyntheticJudge, reference_judges, synthetic_rows

OPTIONS = AnalysisOptions(n_bootstrap=1000, n_permutations=500)


@pytest.fixture(scope="module")
def scored():
    rows = synthetic_rows(reference_judges(), size=5, docs_per_cell=40)
    return Run(Path("."), {}, rows_to_table(rows)).scored()


@pytest.fixture(scope="module")
def results(scored):
    return {(r.judge, r.needle, r.hay): r for r in positionality(scored, OPTIONS)}


def test_planted_early_penalty_is_recovered_and_significant(results):
    for hay in ("orig", "rand"):
        r = results[("planted", "neg", hay)]
        assert r.bias_low <= EARLY_PENALTY_NEG <= r.bias_high, r
        assert r.bias_low > 0 and r.significant and r.p_holm < 1e-6
        assert r.n_first == r.n_second == 10 * 40  # 10 cells with i < j, 40 documents each


def test_needles_without_the_effect_are_not_declared_significant(results):
    null_cells = [r for key, r in results.items() if key[1] != "neg" or key[0] != "planted"]
    assert len(null_cells) == 14
    assert not any(r.significant for r in null_cells)
    # the Holm adjustment is over all 16 tests of the run
    raw = sorted(r.p_value for r in results.values())
    assert min(r.p_holm for r in results.values()) == pytest.approx(min(1.0, raw[0] * 16))


def test_mirror_cell_emd_flags_the_planted_cells(scored):
    rows = mirror_cell_emd(scored, OPTIONS)
    planted = [r for r in rows if r.judge == "planted" and r.needle == "neg" and r.hay == "orig"]
    assert len(planted) == 10 and all(r.i < r.j for r in planted)
    # a 5-point shift at n = 40 per cell with sd 6: most cells exceed the null
    assert sum(r.exceeds for r in planted) >= 7
    null = [r for r in rows if r.needle == "con"]
    assert sum(r.exceeds for r in null) / len(null) < 0.2
    assert all(0 < r.p_value <= 1 for r in rows)


def test_position_grid_layout(scored):
    grids = {g.key: g for g in position_grids(scored)}
    g = grids[("planted", "bands", "v1-synth", "neg", "orig")]
    assert g.size == 5 and g.n.sum() == 25 * 40
    upper = g.mean[np.triu_indices(5, 1)]
    lower = g.mean[np.tril_indices(5, -1)]
    assert upper.mean() < lower.mean() - 3


def test_constant_scores_do_not_break_positionality():
    judge = SyntheticJudge(name="flat", effects=PlantedEffects(needle_means={"neg": 100.0}, noise_sd=0.0))
    scored = Run(Path("."), {}, rows_to_table(synthetic_rows([judge], size=3, docs_per_cell=5))).scored()
    rows = positionality(scored, OPTIONS)
    assert all(r.bias == 0.0 and r.bias_low == r.bias_high == 0.0 and not r.significant for r in rows)
    assert all(r.emd == 0.0 and r.p_value == 1.0 and not r.exceeds for r in mirror_cell_emd(scored, OPTIONS))
