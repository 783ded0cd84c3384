"""The wave planner against hand-computed answers and the real rules."""

from __future__ import annotations

import math

import pytest

from engine.stopping.rules import CiRule, FixedRule, PaperRule
from engine.stopping.spec import CiSpec, FixedSpec, PaperSpec
from engine.run.batch.wave_planner import ci_target, estimate_waves, fixed_remaining, paper_next_decision, wave_size


def test_fixed_remainder():
    assert fixed_remaining(10, 3, 2) == 5
    assert fixed_remaining(10, 8, 2) == 0
    assert fixed_remaining(10, 9, 4) == 0
    rule = FixedRule(FixedSpec(n=10))
    assert wave_size(rule, outstanding=0, cap=10, min_docs=10) == 10  # first wave: all of it
    for _ in range(7):
        rule.update(50.0)
    assert wave_size(rule, outstanding=1, cap=10, min_docs=10) == 2


def test_paper_next_decision_by_hand():
    # no score yet: the rule's floor
    assert paper_next_decision([], 0, window=2, tolerance=1.0, floor=3) == 3
    # m3..m5 = 50, 52, 50.5; N=6 keeps m4..m5 (span 1.5 > 1), N=7 keeps m5 only
    assert paper_next_decision([50.0, 52.0, 50.5], 5, window=2, tolerance=1.0, floor=3) == 2
    # span of the last two already within tolerance: the next document may stop it
    assert paper_next_decision([50.0, 52.0, 51.5], 5, window=2, tolerance=1.0, floor=3) == 1
    # below the floor: at least up to it (m1, m2 both leave the window by N=5)
    assert paper_next_decision([40.0, 60.0], 2, window=2, tolerance=1.0, floor=5) == 3
    # at the floor the known part m2..m3 must still fit: 60 vs 40.5 does not, m3 alone does
    assert paper_next_decision([40.0, 60.0, 40.5], 3, window=2, tolerance=1.0, floor=4) == 2


def test_paper_next_decision_is_the_earliest_possible_stop():
    """Feeding scores equal to the running mean stops the real rule exactly
    at the planned point, and the real score path never stops it earlier."""
    spec = PaperSpec(window=5, tolerance=1.0, min_docs=8)
    scores = [80, 20, 75, 30, 60, 55, 90, 10, 50, 52, 49, 51, 50, 48, 53, 50, 50, 51, 49, 50, 50, 50]
    checked = 0
    for cut in range(1, len(scores)):
        rule = PaperRule(spec)
        for score in scores[:cut]:
            rule.update(score)
            if rule.done:
                break
        if rule.done:
            break
        k = wave_size(rule, outstanding=0, cap=1000, min_docs=spec.resolved_min_docs)
        assert k == paper_next_decision(rule.recent_means, rule.n, window=5, tolerance=1.0, floor=8)
        # best case: every further score equals the running mean
        best = PaperRule(spec)
        for score in scores[:cut]:
            best.update(score)
        mean = best.mean
        fed = 0
        while not best.done:
            best.update(mean)
            fed += 1
        assert fed == k, (cut, fed, k)
        # the real path does not stop before n + k
        real = PaperRule(spec)
        for n, score in enumerate(scores, start=1):
            real.update(score)
            if real.done:
                assert n >= cut + k
                break
        checked += 1
    assert checked >= 10


def test_ci_target_by_hand():
    # 100 scores, half-width 6 at target 3: 100·4·1.15 = 460, capped at 4·100
    assert ci_target(100, 6.0, 3.0, min_docs=1) == 400
    assert ci_target(100, 6.0, 3.0, min_docs=1, growth=10.0) == 460
    # 100·(3.3/3)²·1.15 = 139.15 -> 140
    assert ci_target(100, 3.3, 3.0, min_docs=1) == 140
    # no margin: 100·1.21 = 121 (ceil of 121.00000000000001 is 122: float noise must not matter much)
    assert ci_target(100, 3.3, 3.0, min_docs=1, margin=0.0) in (121, 122)
    # almost there: at least one more document
    assert ci_target(100, 3.01, 3.0, min_docs=1, margin=0.0) == 101
    # nothing scored: the sure minimum
    assert ci_target(0, 50.0, 3.0, min_docs=30) == 30


def test_ci_wave_from_the_real_rule():
    spec = CiSpec(epsilon=3.0, alpha=0.05, min_docs=20, max_docs=500)
    rule = CiRule(spec, 0.05 / 8)
    assert wave_size(rule, outstanding=0, cap=500, min_docs=20) == 20  # first wave: min_docs
    for n in range(40):
        rule.update(30.0 + (n * 37) % 41)  # spread scores, SD ~ 12 points
    h = rule.half_width
    assert h > 3.0 and not rule.done
    expected_total = min(math.ceil(40 * (h / 3.0) ** 2 * 1.15), 160)
    assert wave_size(rule, outstanding=0, cap=500, min_docs=20) == expected_total - 40
    assert wave_size(rule, outstanding=5, cap=500, min_docs=20) == expected_total - 45
    # the cap bounds the wave
    assert wave_size(rule, outstanding=0, cap=50, min_docs=20) == 10


def test_done_rule_and_unknown_kind():
    rule = FixedRule(FixedSpec(n=1))
    rule.update(10.0)
    assert rule.done and wave_size(rule, outstanding=0, cap=5, min_docs=1) == 0

    class Odd:
        kind, n, done, spec = "odd", 1, False, None

    with pytest.raises(ValueError, match="odd"):
        wave_size(Odd(), outstanding=0, cap=5, min_docs=1)  # type: ignore[arg-type]


def test_min_wave_only_after_the_first_scores():
    spec = PaperSpec(window=2, tolerance=1.0, min_docs=3)
    rule = PaperRule(spec)
    for score in (50.0, 70.0, 40.0):  # means 50, 60, 53.3: the next decision point is 2 away
        rule.update(score)
    assert not rule.done
    assert wave_size(rule, outstanding=0, cap=100, min_docs=3) == 2
    assert wave_size(rule, outstanding=0, cap=100, min_docs=3, min_wave=5) == 5
    assert wave_size(rule, outstanding=0, cap=4, min_docs=3, min_wave=5) == 1


def test_estimate_waves():
    assert estimate_waves("fixed", min_docs=10, cap=10) == 1
    assert estimate_waves("paper", min_docs=100, cap=400, window=10) == 11
    assert estimate_waves("paper", min_docs=100, cap=104, window=10) == 5
    # 1 -> 4 -> 16 -> 64 -> 256 >= 200: five waves
    assert estimate_waves("ci", min_docs=1, cap=200) == 5
