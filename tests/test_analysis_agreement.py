"""Agreement among judges: alpha against hand-computed values, the package
cross-check, bootstrap coverage, and the run-level tables."""

from __future__ import annotations

import math
from pathlib import Path

import krippendorff
import numpy as np
import pytest

from analysis import agreement
from analysis.load import Run, Table, rows_to_table
from analysis.options import AnalysisOptions
from analysis.synthetic import reference_judges, synthetic_rows
from engine.contracts import ResultRow

# Two raters, three units: (1, 1), (2, 2), (3, 4).
SMALL = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 4.0]])


def test_interval_alpha_by_hand():
    # D_o: only unit 3 disagrees: 2·(3−4)²/(2−1) = 2 over n = 6 values → 1/3.
    # D_e: values 1,1,2,2,3,4; Σ_{i≠j}(v_i − v_j)² = 2n·Σ(v − v̄)² = 12·(35 − 169/6) = 82,
    # over n(n − 1) = 30 → 82/30. α = 1 − (1/3)/(82/30) = 36/41.
    assert agreement.alpha(SMALL, "interval") == pytest.approx(36 / 41, abs=1e-12)


def test_ordinal_alpha_by_hand():
    # n_1 = n_2 = 2, n_3 = n_4 = 1; δ²(c, k) = (Σ_{g=c..k} n_g − (n_c + n_k)/2)²:
    # (1,2) 4, (1,3) 12.25, (1,4) 20.25, (2,3) 2.25, (2,4) 6.25, (3,4) 1.
    # D_o = 2·δ²(3,4)/6 = 1/3; D_e = 2·(4·4 + 2·12.25 + 2·20.25 + 2·2.25 + 2·6.25 + 1)/30 = 198/30.
    # α = 1 − (1/3)/(198/30) = 188/198.
    assert agreement.alpha(SMALL, "ordinal") == pytest.approx(188 / 198, abs=1e-12)


def test_interval_path_agrees_with_the_package_where_the_package_fits():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 101, 200).astype(float)
    data = np.vstack([truth, np.clip(truth + rng.integers(-9, 10, 200), 0, 100), truth])
    data[1, ::7] = np.nan
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement="interval")
    assert agreement.alpha(data, "interval") == pytest.approx(expected, abs=1e-12)


def test_weighted_interval_alpha_equals_alpha_of_the_copied_units():
    rng = np.random.default_rng(4)
    data = rng.normal(50, 10, (3, 40))
    data[0, :5] = np.nan
    pick = rng.integers(0, 40, 40)
    weights = np.bincount(pick, minlength=40).astype(float)[None, :]
    sums = agreement._interval_unit_sums(data)
    assert agreement._interval_alpha_weighted(*sums, weights)[0] == pytest.approx(agreement.alpha(data[:, pick], "interval"), abs=1e-12)


def test_weighted_ordinal_alpha_equals_alpha_of_the_copied_units():
    rng = np.random.default_rng(6)
    data = rng.integers(1, 8, (3, 50)).astype(float)
    data[1, :6] = np.nan
    pick = rng.integers(0, 50, 50)
    weights = np.bincount(pick, minlength=50).astype(float)[None, :]
    coincidences = agreement._ordinal_unit_coincidences(data)
    assert agreement._ordinal_alpha_weighted(coincidences, weights)[0] == pytest.approx(agreement.alpha(data[:, pick], "ordinal"), abs=1e-12)


def test_the_ordinal_bootstrap_gives_the_same_interval_one_resample_at_a_time(monkeypatch):
    rng = np.random.default_rng(8)
    truth = rng.integers(1, 8, 80)
    data = np.vstack([truth, np.clip(truth + rng.integers(-1, 2, 80), 1, 7)]).astype(float)
    fast = agreement.alpha_ci(data, "ordinal", rng=np.random.default_rng(1), n_resamples=150, confidence=0.9)
    monkeypatch.setattr(agreement, "MAX_COINCIDENCE_CELLS", 0)  # as for labels with many levels
    slow = agreement.alpha_ci(data, "ordinal", rng=np.random.default_rng(1), n_resamples=150, confidence=0.9)
    assert fast.low < fast.alpha < fast.high
    assert (fast.low, fast.high) == pytest.approx((slow.low, slow.high), abs=1e-12)


def test_bootstrap_interval_covers_the_population_alpha_at_about_its_rate():
    # Two raters = truth + independent N(0, 10) noise, truth ~ N(50, 20):
    # population alpha = var(truth)/(var(truth) + var(noise)) = 400/500 = 0.8.
    hits, trials = 0, 60
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        truth = rng.normal(50, 20, 150)
        data = truth + rng.normal(0, 10, (2, 150))
        ci = agreement.alpha_ci(data, "interval", rng=rng, n_resamples=400, confidence=0.9)
        hits += ci.low <= 0.8 <= ci.high
    assert 0.75 <= hits / trials <= 1.0


def test_alpha_ci_degenerate_inputs():
    assert math.isnan(agreement.alpha_ci(np.array([[1.0], [2.0]]), "interval", rng=np.random.default_rng(0), n_resamples=10, confidence=0.9).alpha)
    no_interval = agreement.alpha_ci(SMALL, "interval", rng=np.random.default_rng(0), n_resamples=0, confidence=0.9)
    assert no_interval.alpha == pytest.approx(36 / 41) and math.isnan(no_interval.low) and math.isnan(no_interval.high)
    same = np.array([[3.0, 3.0, 3.0], [3.0, 3.0, 3.0]])
    assert math.isnan(agreement.alpha_ci(same, "ordinal", rng=np.random.default_rng(0), n_resamples=10, confidence=0.9).alpha)


def _rows(judge: str, prompt: str, scores: list[float]) -> list[ResultRow]:
    return [
        ResultRow(run_id="r", judge=judge, adapter="x", model="m", prompt_id=prompt, prompt_version="v", needle="neg", hay="orig",
                  i=0, j=0, doc_id=f"d{n}", doc_index=n, score=s)  # fmt: skip
        for n, s in enumerate(scores)
    ]


def test_pair_and_panel_agreement_over_rows():
    rng = np.random.default_rng(5)
    truth = rng.uniform(0, 100, 60)
    a, b = truth + rng.normal(0, 3, 60), truth + rng.normal(0, 3, 60)
    rows = _rows("a", "bands", list(a)) + _rows("b", "pair", list(b)) + _rows("noise", "bands", list(rng.uniform(0, 100, 60)))
    rows += _rows("panel", "panel", list((a + b) / 2))
    manifest = {
        "prompts": {"bands": {"id": "bands", "version": "v", "scale": "0-100"}, "pair": {"id": "pair", "version": "v", "scale": "0-100"}},
        "panels": {"panel": {"raters": [["a", "bands", "v"], ["b", "pair", "v"]], "rule": "mean"}},
    }
    options = AnalysisOptions(n_bootstrap=200)
    table = rows_to_table(rows)
    pairs = {(r.judge_a, r.judge_b): r for r in agreement.pair_agreement(table, manifest, options)}
    assert len(pairs) == 6
    assert pairs[("a", "b")].alpha > 0.95 and pairs[("a", "b")].level == "interval" and pairs[("a", "b")].n == 60
    assert abs(pairs[("a", "noise")].alpha) < 0.4
    (panel,) = agreement.panel_agreement(table, manifest, options)
    assert panel.alpha == pytest.approx(pairs[("a", "b")].alpha) and panel.alpha_low <= panel.alpha <= panel.alpha_high


def test_short_scales_use_the_ordinal_level():
    assert agreement.short_scale("1-7") and agreement.short_scale("-3..3")
    assert not agreement.short_scale("0-100") and not agreement.short_scale("0-5")
    rows = _rows("a", "likert", [0.0, 50.0, 100.0, 100.0 / 6]) + _rows("b", "likert", [0.0, 50.0, 100.0, 200.0 / 6])
    manifest = {"prompts": {"likert": {"id": "likert", "version": "v", "scale": "1-7"}}}
    (row,) = agreement.pair_agreement(rows_to_table(rows), manifest, AnalysisOptions(n_bootstrap=50))
    # raw answers (1, 4, 7, 2) and (1, 4, 7, 3)
    expected = krippendorff.alpha(reliability_data=np.array([[1.0, 4, 7, 2], [1, 4, 7, 3]]), level_of_measurement="ordinal")
    assert row.level == "ordinal" and row.alpha == pytest.approx(expected)


def test_pair_agreement_over_the_synthetic_judges():
    # (moved from the instrument checks' alpha without an interval, which the report no longer has)
    scored = Run(Path("."), {}, rows_to_table(synthetic_rows(reference_judges(), size=4, docs_per_cell=20))).scored()
    (pair,) = agreement.pair_agreement(scored, {}, AnalysisOptions(n_bootstrap=100))
    assert (pair.judge_a, pair.judge_b, pair.level) == ("faulty", "planted", "interval")
    assert 0.5 < pair.alpha_low <= pair.alpha <= pair.alpha_high < 1.0 and pair.n > 1000
    columns = {k: np.concatenate([v, v]) for k, v in scored.where(judge="planted").columns.items()}
    columns["judge"] = np.array(["x"] * (len(columns["score"]) // 2) + ["y"] * (len(columns["score"]) // 2))
    (same,) = agreement.pair_agreement(Table(columns), {}, AnalysisOptions(n_bootstrap=100))
    assert (same.alpha, same.alpha_low, same.alpha_high, same.mean_abs_diff) == (1.0, 1.0, 1.0, 0.0)


def test_alpha_sentence_reads_each_band():
    assert "undefined" in agreement.alpha_sentence(math.nan)
    assert agreement.alpha_sentence(-0.1).startswith("below 0,")
    assert agreement.alpha_sentence(0.5).startswith("below 0.667")
    assert agreement.alpha_sentence(0.7).startswith("between 0.667 and 0.8")
    assert agreement.alpha_sentence(0.8).startswith("0.8 or above")
