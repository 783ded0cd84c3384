"""Bradley-Terry strengths against planted truth: a simulated pairwise judge
(simulation/pairwise.py) with known strengths over 10 contestants, and over
positions and documents as contestants with the strengths the fake server's
judge plants for them (simulation/answers.py: its mean score / 10)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from analysis import tournament
from engine.tournament import TournamentSpec, comparison_graph, parse_position
from simulation import judge as sim
from simulation.answers import PAIRWISE_SCALE
from simulation.pairwise import SCORE_OF_FIRST, SimPairwiseParams, answer, first_wins_probability

CONTESTANTS = [f"c{n}" for n in range(10)]
TRUTH = np.linspace(-1.5, 1.5, len(CONTESTANTS))  # centred log-strengths


def _tournament(
    params: SimPairwiseParams, repeats: int, contestants: list[str] = CONTESTANTS, edges: object = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every pair of `edges` (default: all pairs) `repeats` times, each asked in both orders: (a, b,
    outcome as one comparison per order, a's score when shown first, a's score when shown second)."""
    a, b, outcome, first, second = [], [], [], [], []
    pairs = itertools.combinations(range(len(contestants)), 2) if edges is None else edges
    for (x, y), r in itertools.product(pairs, range(repeats)):  # type: ignore[call-overload]
        cx, cy = contestants[x], contestants[y]
        shown_first = SCORE_OF_FIRST[answer(params, cx, cy, f"doc{r}")]
        shown_second = 1.0 - SCORE_OF_FIRST[answer(params, cy, cx, f"doc{r}")]
        a += [x, x]
        b += [y, y]
        outcome += [shown_first, shown_second]
        first.append(shown_first)
        second.append(shown_second)
    return np.array(a), np.array(b), np.array(outcome), np.array([first, second])


def _params(seed: int, **extra) -> SimPairwiseParams:
    return SimPairwiseParams(seed=seed, strengths=dict(zip(CONTESTANTS, TRUTH.tolist())), **extra)


def test_the_simulated_judge_scores_the_first_contestant_at_its_planted_probability():
    params = _params(0)
    scores = [SCORE_OF_FIRST[answer(params, "c7", "c2", str(n))] for n in range(20_000)]
    p = first_wins_probability(params, "c7", "c2")
    assert np.mean(scores) == pytest.approx(p, abs=0.01)
    assert 0.05 < np.mean(np.array(scores) == 0.5) < 0.3  # ties happen, at the planted band's rate


def test_fitted_strengths_rank_like_the_truth_and_cis_cover_it_at_their_rate():
    hits = total = 0
    for seed in range(20):
        a, b, outcome, _ = _tournament(_params(seed), repeats=4)
        rows = tournament.strengths_table(("sim", "closer", "v"), CONTESTANTS, a, b, outcome, rng=np.random.default_rng(seed), n_resamples=150, confidence=0.9)
        fitted = np.array([next(r.strength for r in rows if r.contestant == c) for c in CONTESTANTS])
        assert tournament.spearman(fitted, TRUTH) >= 0.9
        for row in rows:
            truth = TRUTH[CONTESTANTS.index(row.contestant)]
            hits += row.low <= truth <= row.high
            total += 1
    # nominal 90% over 200 intervals (binomial sd 2.1 points)
    assert 0.84 <= hits / total <= 0.96


def _coverage(contestants: list[str], truth: np.ndarray, edges: object, repeats: int, seeds: int = 12) -> float:
    """Over seeds: every fit ranks like the truth (Spearman >= 0.9); the share of
    90% intervals that hold the (centred) truth."""
    truth = truth - truth.mean()
    hits = total = 0
    for seed in range(seeds):
        params = SimPairwiseParams(seed=seed, strengths=dict(zip(contestants, truth.tolist())))
        a, b, outcome, _ = _tournament(params, repeats, contestants, edges)
        rows = tournament.strengths_table(("sim", "closer_pairs", "v"), contestants, a, b, outcome, rng=np.random.default_rng(seed),
                                          n_resamples=150, confidence=0.9)  # fmt: skip
        fitted = np.array([next(r.strength for r in rows if r.contestant == c) for c in contestants])
        assert tournament.spearman(fitted, truth) >= 0.9
        hits += sum(r.low <= truth[contestants.index(r.contestant)] <= r.high for r in rows)
        total += len(rows)
    return hits / total


# the fake server's judge for pairs (simulation.answers.pairs_comparison_answer): strength = mean score / 10
PLANTED = sim.SimJudgeParams(seed=4, length_slope=4.0, early_penalty=6.0, doc_sd=12.0)
POSITIONS = TournamentSpec(judges=("sim",), kind="positions", positions=((0, 0), (1, 1), (0, 4), (4, 0), (3, 3), (2, 6), (6, 2), (5, 5)))
DOCUMENTS = TournamentSpec(judges=("sim",), kind="documents", entrants=10, graph="random", degree=5, positions=((1, 1), (2, 2)))


def position_strengths(params: sim.SimJudgeParams, labels: list[str], needle: str) -> np.ndarray:
    return np.array([sim.mean_score(params, sim.ItemInfo(needle=needle, i=i, j=j)) for i, j in map(parse_position, labels)]) / PAIRWISE_SCALE


def document_strengths(params: sim.SimJudgeParams, doc_ids: list[str]) -> np.ndarray:
    return np.array([sim.doc_effect(params, d) for d in doc_ids]) / PAIRWISE_SCALE


def test_positions_as_contestants_rank_like_their_planted_strengths_with_covering_cis():
    labels = list(POSITIONS.labels())
    truth = position_strengths(PLANTED, labels, POSITIONS.needle)
    assert len(labels) >= 8 and len(set(truth.round(6))) == len(labels)
    coverage = _coverage(labels, truth, comparison_graph(POSITIONS, 0), repeats=6)
    assert 0.82 <= coverage <= 0.97  # nominal 90% over 96 intervals (binomial sd 3 points)


def test_documents_as_contestants_on_a_sparse_graph_rank_like_their_planted_strengths_with_covering_cis():
    doc_ids = [f"doc-{n}" for n in range(DOCUMENTS.entrants)]
    edges = comparison_graph(DOCUMENTS, 3)
    assert len(edges) < 45  # sparse
    coverage = _coverage(doc_ids, document_strengths(PLANTED, doc_ids), edges, repeats=len(DOCUMENTS.repetitions((1, 1))))
    assert 0.82 <= coverage <= 0.97  # nominal 90% over 120 intervals (binomial sd 2.7 points)


def test_ranks_and_counts_in_the_table():
    a, b, outcome, _ = _tournament(_params(1), repeats=2)
    rows = tournament.strengths_table(("sim", "closer", "v"), CONTESTANTS, a, b, outcome, rng=np.random.default_rng(0), n_resamples=20, confidence=0.9)
    assert [r.rank for r in rows] == list(range(1, 11))
    assert all(r.n == 2 * 2 * 9 for r in rows)
    assert sum(r.wins for r in rows) == pytest.approx(a.size)
    assert rows[0].contestant in ("c9", "c8") and rows[-1].contestant in ("c0", "c1")


def test_an_unbeaten_contestant_keeps_a_finite_strength():
    # contestant 0 beats 1 and 2 every time; 1 and 2 tie
    a, b, outcome = np.array([0, 0, 1]), np.array([1, 2, 2]), np.array([1.0, 1.0, 0.5])
    strengths = tournament.fit_strengths(tournament.win_matrix(3, a, b, outcome))
    assert np.isfinite(strengths).all() and strengths[0] > strengths[1] == pytest.approx(strengths[2])


def test_the_swap_test_counts_disagreements_and_sees_a_planted_position_bias():
    _, _, _, (first, second) = _tournament(_params(2), repeats=3)
    fair = tournament.swap_test(("fair", "closer", "v"), first, second)
    _, _, _, (first, second) = _tournament(_params(2, position_bias=1.5), repeats=3)
    biased = tournament.swap_test(("biased", "closer", "v"), first, second)
    assert fair.n == biased.n == 45 * 3
    assert biased.disagreements > fair.disagreements
    assert biased.first_shown_wins > 0.65 and 0.4 < fair.first_shown_wins < 0.6
