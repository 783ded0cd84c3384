"""Every statistic against a case with a known answer."""

from __future__ import annotations

import math

import msgspec
import numpy as np
import pytest
from scipy import stats as sps

from analysis.stats import (
    bonferroni,
    emd_permutation_test,
    holm,
    krippendorff_alpha,
    ks_test,
    mean_ci,
    mean_difference_ci,
    wasserstein_1d,
)

nan = np.nan


# --- Holm and Bonferroni -----------------------------------------------------


def test_holm_on_the_textbook_example():
    # Wikipedia "Holm–Bonferroni method", example: four hypotheses at α = 0.05,
    # p = 0.01, 0.04, 0.03, 0.005 → H4 and H1 rejected, H2 and H3 not.
    # Adjusted by hand: 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, max(0.04·1, 0.06) = 0.06.
    adjusted = holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adjusted, [0.03, 0.06, 0.06, 0.02])
    assert list(adjusted <= 0.05) == [True, False, False, True]


def test_holm_caps_at_one_and_skips_nan():
    adjusted = holm([0.5, nan, 0.4, 0.01])
    # m = 3: 0.01·3 = 0.03, 0.4·2 = 0.8, max(0.5·1, 0.8) = 0.8
    np.testing.assert_allclose(adjusted, [0.8, nan, 0.8, 0.03])
    # 0.8·2 = 1.6 → capped at 1; max(0.9·1, 1) = 1
    np.testing.assert_allclose(holm([0.9, 0.8]), [1.0, 1.0])


def test_bonferroni():
    np.testing.assert_allclose(bonferroni([0.01, 0.2, nan, 0.5]), [0.03, 0.6, nan, 1.0])


# --- KS ----------------------------------------------------------------------


def test_ks_test_statistic_by_hand_and_empty_input():
    # a = {1, 2, 3}, b = {4, 5}: the ECDFs are fully separated, D = 1.
    res = ks_test(np.array([1.0, 2, 3]), np.array([4.0, 5]))
    assert res.statistic == 1.0 and (res.n_a, res.n_b) == (3, 2)
    assert math.isnan(ks_test(np.array([]), np.array([1.0])).p_value)


# --- Bootstrap ---------------------------------------------------------------


def test_mean_difference_ci_coverage_is_near_nominal():
    truth = 3.0
    covered = 0
    reps = 100
    for r in range(reps):
        rng = np.random.default_rng(r)
        a = rng.normal(50, 10, 60)
        b = rng.normal(50 + truth, 10, 80)
        ci = mean_difference_ci(a, b, rng=np.random.default_rng(1000 + r), n_resamples=600)
        assert ci.low <= ci.estimate <= ci.high
        covered += ci.low <= truth <= ci.high
    # 95% nominal; binomial(100, 0.95) lies in [88, 100] with probability > 0.999
    assert covered >= 88


def test_mean_difference_ci_is_seeded_and_handles_degenerate_data():
    a, b = np.arange(20.0), np.arange(20.0) + 4
    one = mean_difference_ci(a, b, rng=np.random.default_rng(7), n_resamples=300)
    two = mean_difference_ci(a, b, rng=np.random.default_rng(7), n_resamples=300)
    assert one == two and one.estimate == 4.0 and one.n == 40
    constant = mean_difference_ci(np.full(5, 60.0), np.full(7, 70.0), rng=np.random.default_rng(0))
    assert msgspec.structs.astuple(constant) == (10.0, 10.0, 10.0, 12)
    tiny = mean_difference_ci(np.array([1.0]), np.array([2.0, 3.0]), rng=np.random.default_rng(0))
    assert tiny.estimate == 1.5 and math.isnan(tiny.low)


def test_mean_ci_of_paired_differences():
    ci = mean_ci(np.array([1.0, 2, 3, 4, 5]), rng=np.random.default_rng(0), n_resamples=500)
    assert ci.estimate == 3.0 and 1.0 <= ci.low < 3.0 < ci.high <= 5.0


# --- EMD ---------------------------------------------------------------------


def test_wasserstein_matches_scipy_and_the_shift():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=31), rng.normal(size=47) * 2 + 1
    assert wasserstein_1d(a, b) == pytest.approx(sps.wasserstein_distance(a, b), rel=1e-12)
    # a pure shift by c moves every quantile by c: EMD = c
    assert wasserstein_1d(a, a + 7.5) == pytest.approx(7.5)
    rows = rng.normal(size=(4, 10))
    cols = rng.normal(size=(4, 12))
    np.testing.assert_allclose(wasserstein_1d(rows, cols), [sps.wasserstein_distance(x, y) for x, y in zip(rows, cols)])


def test_emd_permutation_test_detects_a_shift_and_matches_scipy():
    rng = np.random.default_rng(5)
    a, b = rng.normal(50, 5, 40), rng.normal(56, 5, 40)
    res = emd_permutation_test(a, b, rng=np.random.default_rng(1), n_permutations=2000)
    assert res.emd > res.null_q95 and res.p_value < 0.01
    ref = sps.permutation_test((a, b), wasserstein_1d, vectorized=True, n_resamples=2000, alternative="greater", rng=1)
    assert res.p_value == pytest.approx(ref.pvalue, abs=0.01)


def test_emd_permutation_null_is_calibrated():
    # Under H0 the p-value is uniform: about 5% of tests fall below 0.05.
    hits = 0
    reps = 200
    for r in range(reps):
        rng = np.random.default_rng(r)
        res = emd_permutation_test(rng.normal(size=25), rng.normal(size=25), rng=rng, n_permutations=300)
        hits += res.p_value <= 0.05
    # binomial(200, 0.05): P(X > 22) < 0.001
    assert hits <= 22


def test_emd_of_constant_data():
    res = emd_permutation_test(np.full(10, 100.0), np.full(12, 100.0), rng=np.random.default_rng(0))
    assert (res.emd, res.p_value) == (0.0, 1.0)


# --- KDE ---------------------------------------------------------------------


# --- Krippendorff's alpha ----------------------------------------------------

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the
# worked example: 4 observers × 12 units, values 1–5, missing data.
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
        [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
    ]
)


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)]
)
def test_krippendorff_alpha_on_the_published_worked_example(level, published):
    assert round(krippendorff_alpha(KRIPPENDORFF_2011, level), 3) == published


def test_krippendorff_alpha_on_the_wikipedia_example():
    # en.wikipedia.org "Krippendorff's alpha", computational example: 3 coders × 15 units.
    data = np.array(
        [
            [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
            [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
            [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
        ]
    )
    assert krippendorff_alpha(data, "nominal") == pytest.approx(0.691358, abs=1e-6)
    assert krippendorff_alpha(data, "interval") == pytest.approx(0.810845, abs=1e-6)


def test_krippendorff_alpha_edge_cases():
    assert krippendorff_alpha(np.array([[1.0, 2, 3], [1, 2, 3]]), "interval") == 1.0
    assert math.isnan(krippendorff_alpha(np.array([[1.0, 1], [1, 1]])))
    with pytest.raises(ValueError, match="two or more raters"):
        krippendorff_alpha(np.array([[1.0, nan], [nan, 2]]))
    with pytest.raises(ValueError, match="level"):
        krippendorff_alpha(KRIPPENDORFF_2011, "circular")  # type: ignore[arg-type]


def test_interval_alpha_on_continuous_scores_matches_the_pairwise_definition():
    # thousands of distinct levels (continuous baseline scores): computed without a levels × levels matrix
    rng = np.random.default_rng(3)
    truth = rng.uniform(0, 100, 400)
    data = np.vstack([truth + rng.normal(0, 10, 400), truth + rng.normal(5, 10, 400), rng.uniform(0, 100, 400)])
    data[rng.random(data.shape) < 0.2] = nan
    values, within = [], 0.0
    for unit in data.T:
        v = unit[~np.isnan(unit)]
        if v.size >= 2:
            values.extend(v)
            within += sum((a - b) ** 2 for a in v for b in v) / (v.size - 1)
    v = np.array(values)
    expected = (v[:, None] - v[None, :]) ** 2
    alpha = 1 - (within / v.size) / (expected.sum() / (v.size * (v.size - 1)))
    assert krippendorff_alpha(data, "interval") == pytest.approx(alpha, rel=1e-9)
    assert krippendorff_alpha(-data[:2] * 1.0 + 100, "interval") == pytest.approx(krippendorff_alpha(data[:2], "interval"), rel=1e-9)
