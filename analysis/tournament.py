"""Pairwise tournaments: Bradley-Terry strengths of contestants from win /
tie / loss comparisons, with percentile bootstrap CIs, and the swap test.

Ties count as half a win for each side (the "half wins" rule), not
Davidson's tie parameter: the fitted strengths then are those for which
every contestant's expected score equals its observed score, which stays
right for a judge whose ties are symmetric around its win probability; a
Davidson fit would add a parameter the report does not use. The fit is
`choix.ilsr_pairwise_dense` (iterative Luce spectral ranking: the maximum
likelihood estimate, fast for the dense win matrices of a tournament) with
a small regulariser so that an unbeaten contestant keeps a finite
strength. Strengths are log-strengths centred at mean 0 (only differences
are identified); P(a beats b) = 1 / (1 + exp(s_b − s_a)).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

from analysis.options import RaterRow

# A fraction of one comparison added to every transition rate: enough for a
# finite strength when a contestant never lost, negligible beside the counts.
REGULARISER = 0.01


class StrengthRow(RaterRow, frozen=True):
    contestant: str
    rank: int  # 1 = strongest
    strength: float  # centred log-strength
    low: float
    high: float
    wins: float  # ties as halves
    n: int  # comparisons it took part in
    confidence: float


class SwapRow(RaterRow, frozen=True):
    n: int  # comparisons asked in both orders with both answers parsed
    disagreements: int  # the two orders named different winners (or one a tie)
    share: float
    first_shown_wins: float  # share of decisive answers that chose the first document shown


def win_matrix(n: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """W[x, y] = wins of x over y (ties as halves); `outcome` is a's score: 1, 0.5 or 0."""
    w = np.ones(a.size) if weights is None else weights
    matrix = np.zeros((n, n))
    np.add.at(matrix, (a, b), w * outcome)
    np.add.at(matrix, (b, a), w * (1.0 - outcome))
    return matrix


def fit_strengths(matrix: np.ndarray, initial: np.ndarray | None = None) -> np.ndarray:
    import choix

    params = choix.ilsr_pairwise_dense(matrix, alpha=REGULARISER, initial_params=initial, max_iter=500)
    return params - params.mean()


def bootstrap_strengths(
    n: int, a: np.ndarray, b: np.ndarray, outcome: np.ndarray, *, rng: np.random.Generator, n_resamples: int
) -> tuple[np.ndarray, np.ndarray]:
    """(point strengths, n_resamples × n bootstrap strengths), comparisons resampled with replacement."""
    point = fit_strengths(win_matrix(n, a, b, outcome))
    counts = rng.multinomial(a.size, np.full(a.size, 1.0 / a.size), size=n_resamples).astype(float)
    draws = np.array([fit_strengths(win_matrix(n, a, b, outcome, weights), initial=point) for weights in counts])
    return point, draws


def strengths_table(
    rater: tuple[str, str, str],
    contestants: list[str],
    a: np.ndarray,
    b: np.ndarray,
    outcome: np.ndarray,
    *,
    rng: np.random.Generator,
    n_resamples: int,
    confidence: float,
) -> list[StrengthRow]:
    """One row per contestant, strongest first; `rater` = (judge, prompt id, version)."""
    n = len(contestants)
    point, draws = bootstrap_strengths(n, a, b, outcome, rng=rng, n_resamples=n_resamples)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(draws, [tail, 1.0 - tail], axis=0)
    wins = win_matrix(n, a, b, outcome).sum(axis=1)
    games = np.bincount(a, minlength=n) + np.bincount(b, minlength=n)
    order = np.argsort(-point, kind="stable")
    return [
        StrengthRow(*rater, contestants[c], rank + 1, float(point[c]), float(low[c]), float(high[c]), float(wins[c]), int(games[c]), confidence)
        for rank, c in enumerate(order)
    ]


def spearman(fitted: np.ndarray, truth: np.ndarray) -> float:
    return float(sps.spearmanr(fitted, truth).statistic)


def swap_test(rater: tuple[str, str, str], first: np.ndarray, second: np.ndarray) -> SwapRow:
    """`first`/`second`: the score of the same contestant (1, 0.5, 0) when it was
    shown first and when shown second, for each comparison asked both ways."""
    pairs = int(first.size)
    disagree = int(np.count_nonzero(first != second))
    decisive_first = np.concatenate([first[first != 0.5], 1.0 - second[second != 0.5]])
    first_wins = float(decisive_first.mean()) if decisive_first.size else math.nan
    return SwapRow(*rater, pairs, disagree, disagree / pairs if pairs else math.nan, first_wins)
