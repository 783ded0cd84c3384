"""analysis.human against hand-computed answers."""

from __future__ import annotations

import math

import numpy as np
import pytest

from analysis.human import alpha, binary_agreement, snap, weighted_kappa

# Five items on the levels 0, 50, 100; the judge and people disagree on one
# (the judge says 100, people 50). By hand (rows: people, columns: judge):
# observed [[1,0,0],[0,2,1],[0,0,1]] / 5, marginals people (1,3,1), judge (1,2,2).
JUDGE = np.array([0, 50, 100, 100, 50], dtype=float)
HUMAN = np.array([0, 50, 100, 50, 50], dtype=float)


def test_linear_kappa_by_hand():
    # sum w*O = 0.5*1/5 = 0.1; sum w*E = (0.6 + 0.9 + 0.4)/5 = 0.38; 1 - 0.1/0.38 = 14/19
    assert weighted_kappa(JUDGE, HUMAN, weights="linear").value == pytest.approx(14 / 19)


def test_quadratic_kappa_by_hand():
    # sum w*O = 0.25*1/5 = 0.05; sum w*E = (0.5 + 0.45 + 0.3)/5 = 0.25; 1 - 0.05/0.25 = 0.8
    assert weighted_kappa(JUDGE, HUMAN, weights="quadratic").value == pytest.approx(0.8)


def test_kappa_weights_follow_the_explicit_label_set():
    # (moved from the hand-written kappa's tests; scikit-learn computes it now)
    # Labels 0 < 1 < 2, weights |i-j|/2. Observed (0,0) (0,1) (1,1) (2,2), 1/4 each:
    # sum w*O = 1/8; marginals (1/2, 1/4, 1/4) and (1/4, 1/2, 1/4): sum w*E = 7/16; 1 - (1/8)/(7/16) = 5/7.
    people, judge = np.array([0, 0, 1, 2.0]), np.array([0, 1, 1, 2.0])
    assert weighted_kappa(judge, people, weights="linear", levels=np.array([0, 1, 2.0])).value == pytest.approx(5 / 7)
    # An unused label 1.5 stretches 1->2 against 0->1 (indices 0, 1, 3; weights 0, 1/3, 1): kappa = 0.8
    assert weighted_kappa(judge, people, weights="linear", levels=np.array([0, 1, 1.5, 2])).value == pytest.approx(0.8)


def test_interval_alpha_by_hand():
    # D_o = 2*50^2/10 = 500; pooled values 0 x2, 50 x5, 100 x3:
    # D_e = 2*(2*5*2500 + 2*3*10000 + 5*3*2500)/(10*9) = 2722.2; 1 - 500/2722.2 = 40/49
    assert alpha(JUDGE, HUMAN, level="interval").value == pytest.approx(40 / 49)


@pytest.mark.parametrize("level", ["interval", "ordinal"])
def test_the_fast_resample_alpha_equals_the_krippendorff_package(level):
    import krippendorff

    from analysis.stats import krippendorff_alpha

    rng = np.random.default_rng(7)
    human = rng.integers(0, 5, 300) * 25.0
    judge = np.clip(human + rng.normal(0, 20, human.size), 0, 100)
    data = np.vstack([judge if level == "interval" else snap(judge, np.unique(human)), human])
    assert krippendorff_alpha(data, level) == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level), abs=1e-9)
    assert alpha(judge, human, level=level).value == pytest.approx(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def test_the_judge_is_snapped_to_the_levels_people_used():
    assert snap(np.array([10, 26, 74, 75, 99]), np.array([0, 50, 100])).tolist() == [0, 50, 50, 50, 100]
    # 40 and 60 snap to 50: the same kappa as a judge who said 50
    nudged = np.array([0, 40, 100, 100, 60], dtype=float)
    assert weighted_kappa(nudged, HUMAN, weights="linear").value == pytest.approx(14 / 19)


def test_the_false_pass_rate_is_split_out():
    judge = np.append(JUDGE, [60.0, 20.0])
    human = np.append(HUMAN, [10.0, 10.0])
    result = binary_agreement(judge, human, threshold=50)
    # people fail 3 items (0, 10, 10); the judge passes one of them (60)
    assert result.matrix == ((2, 1), (0, 4))
    assert result.false_pass_rate == pytest.approx(1 / 3) and result.false_fail_rate == 0.0
    assert result.accuracy == pytest.approx(6 / 7) and result.n == 7


def test_bootstrap_intervals_hold_the_estimate_and_narrow_with_n():
    rng = np.random.default_rng(3)
    truth = rng.integers(0, 5, 400) * 25.0
    judge = np.clip(truth + rng.normal(0, 15, truth.size), 0, 100)
    small = alpha(judge[:40], truth[:40], seed=1)
    large = alpha(judge, truth, seed=1)
    for est in (small, large):
        assert est.low <= est.value <= est.high
    assert (large.high - large.low) < (small.high - small.low)
    assert large.n == 400


def test_perfect_agreement_and_no_variation():
    assert weighted_kappa(HUMAN, HUMAN).value == pytest.approx(1.0)
    same = np.full(6, 50.0)
    assert math.isnan(alpha(same, same).value) and math.isnan(weighted_kappa(same, same).value)


def test_unpaired_input_is_refused():
    with pytest.raises(ValueError, match="paired"):
        alpha(JUDGE, HUMAN[:3])
