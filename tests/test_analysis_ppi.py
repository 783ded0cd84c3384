"""analysis.ppi on a planted bias: the judge adds +6 points to every item.

The design: 20 cells whose true means are known (40..78); 500 items a cell,
true score = cell mean + noise; the judge sees the truth + 6 + its own noise;
people label 200 items drawn at random from the whole design, without bias.
"""

from __future__ import annotations

import numpy as np
import pytest

from analysis.ppi import contrast, ppi_mean

CELLS, ITEMS, LABELS, BIAS = 20, 500, 200, 6.0
TRUE_MEANS = np.linspace(40, 78, CELLS)


def planted(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cell = np.repeat(np.arange(CELLS), ITEMS)
    truth = np.clip(TRUE_MEANS[cell] + rng.normal(0, 12, cell.size), 0, 100)
    judge = np.clip(truth + BIAS + rng.normal(0, 6, cell.size), 0, 100)
    labelled = rng.choice(cell.size, LABELS, replace=False)
    human = np.clip(truth[labelled] + rng.normal(0, 5, LABELS), 0, 100)
    return judge, truth, labelled, human


def test_the_judge_only_interval_misses_the_truth_and_ppi_covers_it():
    judge, truth, labelled, human = planted(seed=0)
    true_mean = truth.mean()
    est = ppi_mean(human, judge[labelled], judge, confidence=0.95)
    assert not est.judge_low <= true_mean <= est.judge_high  # biased by ~6 points, CI ~±0.3
    assert est.ppi_low <= true_mean <= est.ppi_high
    assert est.ppi_half_width < 2.0  # the judge's 10,000 scores make it far tighter than 200 labels alone (~±1.8)
    assert est.conclusion_changed(true_mean) and est.n_labelled == LABELS and est.n_items == CELLS * ITEMS


def test_ppi_covers_the_truth_at_its_nominal_rate_over_seeds():
    hits = judge_hits = 0
    seeds = range(200)
    for seed in seeds:
        judge, truth, labelled, human = planted(seed)
        est = ppi_mean(human, judge[labelled], judge, confidence=0.90)
        hits += est.ppi_low <= truth.mean() <= est.ppi_high
        judge_hits += est.judge_low <= truth.mean() <= est.judge_high
    rate = hits / len(seeds)
    # nominal 0.90; 200 seeds: binomial sd 0.021, so 0.84-0.96 is +-3 sd
    assert 0.84 <= rate <= 0.96, rate
    assert judge_hits == 0


def test_a_stratified_sample_is_weighted_by_its_inclusion_probabilities():
    # cell 0 (true mean 40) labelled at 10x the rate of cell 19 (78): unweighted, the
    # labels pull the correction toward cell 0's; weighted, the estimate is unbiased
    rng = np.random.default_rng(5)
    judge, truth, _, _ = planted(seed=5)
    cell = np.repeat(np.arange(CELLS), ITEMS)
    rate = np.where(cell < CELLS // 2, 0.08, 0.008)
    labelled = np.flatnonzero(rng.random(cell.size) < rate)
    # people agree with the judge in the low cells and are 12 points lower in the high ones
    human = truth[labelled] + np.where(cell[labelled] < CELLS // 2, BIAS, -6.0)
    weighted = ppi_mean(human, judge[labelled], judge, inclusion=rate[labelled])
    unweighted = ppi_mean(human, judge[labelled], judge)
    target = truth.mean() + (BIAS - 6.0) / 2  # what people would say of the whole design on average
    assert abs(weighted.ppi - target) < abs(unweighted.ppi - target)
    assert weighted.ppi_low <= target <= weighted.ppi_high


def test_a_contrast_between_groups():
    judge, truth, labelled, human = planted(seed=3)
    cell = np.repeat(np.arange(CELLS), ITEMS)
    low, high = cell < CELLS // 2, cell >= CELLS // 2
    in_low = labelled[low[labelled]]
    in_high = labelled[high[labelled]]
    label_of = dict(zip(labelled.tolist(), human.tolist()))
    a = ppi_mean([label_of[k] for k in in_high], judge[in_high], judge[high])
    b = ppi_mean([label_of[k] for k in in_low], judge[in_low], judge[low])
    diff = contrast(a, b)
    true_diff = truth[high].mean() - truth[low].mean()
    assert diff.ppi_low <= true_diff <= diff.ppi_high
    assert diff.judge_only == pytest.approx(judge[high].mean() - judge[low].mean())
    assert not diff.conclusion_changed()  # both far from 0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="paired"):
        ppi_mean([1.0, 2.0], [1.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="at least 2"):
        ppi_mean([1.0], [1.0], [1.0, 2.0])
