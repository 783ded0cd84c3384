"""Anytime-valid confidence sequences for a bounded mean (the math of the
``ci`` stopping rule in engine.stopping.rules).

From I. Waudby-Smith and A. Ramdas, "Estimating means of bounded random
variables by betting", JRSS-B 86(1), 2024 (arXiv:2010.09686): the
hedged-capital CS and the predictable plug-in empirical-Bernstein CS, as
pure functions over whole score paths (``hedged_capital_cs``,
``pprl_eb_cs``). engine.stopping.hedged_run computes the hedged CS one score at a
time, bit for bit the batch function's.
"""

from __future__ import annotations

import functools
import math

import numpy as np

# Truncation of the bets, c in the paper (1/2 or 3/4 suggested).
BET_TRUNCATION = 0.5


# ---------------------------------------------------------------------------
# Pure functions: whole confidence-sequence paths


def grid_breaks(epsilon: float) -> int:
    """Grid intervals on [0, 1] so that gridding widens each CS side by <= epsilon/40.

    Reported bounds are the excluded grid points next to the CS, so each side
    may be up to one step too wide; a step of epsilon/4000 (in [0,1] units,
    epsilon in points) costs at most ~5% more documents at the stopping
    point.  The hot path only touches the grid points still inside the CS,
    so a fine grid is cheap after the first few documents.  Never coarser
    than 1/1000.
    """
    return max(1000, math.ceil(4000.0 / epsilon))


def predictable_bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """Untruncated predictable plug-in bets (Waudby-Smith & Ramdas 2024).

    ``lambda_t = sqrt(2 log(2/alpha) / (sigma2_{t-1} t log(1+t)))`` with the
    regularised estimates ``mu_t = (1/2 + sum_{i<=t} x_i) / (t+1)`` and
    ``sigma2_t = (1/4 + sum_{i<=t} (x_i - mu_i)^2) / (t+1)``; ``sigma2_0 = 1/4``.
    ``x`` has shape (..., T) in [0, 1]; returns the same shape.  The same
    IEEE operations as the incremental rule's running estimates, so both give
    identical bets.
    """
    steps = x.shape[-1]
    if not steps:
        return np.empty(x.shape)
    t, t_plus_one, log1p_t = _step_tables(steps)
    # add.accumulate is cumsum without its wrapper (both sum in order)
    mu = (0.5 + np.add.accumulate(x, axis=-1)) / t_plus_one
    sigma2_prev = np.empty(x.shape)
    sigma2_prev[..., 0] = 0.25
    deviation = x[..., :-1] - mu[..., :-1]
    deviation *= deviation
    sigma2_prev[..., 1:] = (0.25 + np.add.accumulate(deviation, axis=-1)) / t_plus_one[:-1]
    return np.sqrt(2.0 * math.log(2.0 / alpha) / (sigma2_prev * t * log1p_t))


_STEP_TABLES: tuple[np.ndarray, np.ndarray, np.ndarray] = (np.empty(0), np.empty(0), np.empty(0))


def _step_tables(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """t, t + 1 and log(1 + t) (by math.log1p, as the rule computes it) for t = 1..n.

    Cached and grown on demand: hedged cells replay their bets often.
    """
    global _STEP_TABLES
    if _STEP_TABLES[0].size < n:
        size = max(n, 2 * _STEP_TABLES[0].size, 1024)
        t = np.arange(1, size + 1, dtype=np.float64)
        tables = (t, t + 1.0, np.array([math.log1p(k) for k in range(1, size + 1)]))
        for table in tables:
            table.flags.writeable = False
        _STEP_TABLES = tables
    return tuple(table[:n] for table in _STEP_TABLES)  # type: ignore[return-value]


@functools.lru_cache(maxsize=16)
def shared_grid(breaks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(grid, c/m, c/(1-m)): the grid of candidate means and its truncations, read-only, one per grid
    size for all cells."""
    grid = np.linspace(0.0, 1.0, breaks + 1)
    arrays = (grid, *_truncations(grid))
    for values in arrays:
        values.flags.writeable = False
    return arrays  # type: ignore[return-value]


def _truncations(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """c/m and c/(1-m): the largest bets that keep every capital factor >= 1-c."""
    with np.errstate(divide="ignore"):
        return BET_TRUNCATION / grid, BET_TRUNCATION / (1.0 - grid)


def _bet_on_grid(
    capital_plus: np.ndarray,
    capital_minus: np.ndarray,
    diff: np.ndarray,
    bet: np.ndarray | float,
    cap_plus: np.ndarray,
    cap_minus: np.ndarray,
    untruncated: bool,
) -> None:
    """One round of betting on every candidate mean of a grid slice, in place.

    ``diff`` is x - m for the slice's grid points m.  ``untruncated`` says
    the bet is below both truncations on the whole slice, which skips two
    passes (the common case once the CS is narrow).

    Capitals are kept as plain products, not logs (several times cheaper
    than log1p): every factor is at least 1 - c = 1/2, so they never turn
    negative or NaN; an excluded point's capital may overflow to inf, which
    is harmless (it stays excluded), and near the true mean a capital drifts
    down only like exp(-O(log log t)), far from underflow.
    Shapes: capitals and diff (..., G); bet (..., 1) or a scalar; caps (G,).
    """
    if untruncated:
        payoff = bet * diff
        capital_plus *= 1.0 + payoff
        capital_minus *= 1.0 - payoff
    else:
        capital_plus *= 1.0 + np.minimum(bet, cap_plus) * diff
        capital_minus *= 1.0 - np.minimum(bet, cap_minus) * diff


def hedged_capital_cs(
    x: np.ndarray, alpha: float, *, breaks: int = 1000
) -> tuple[np.ndarray, np.ndarray]:
    """Hedged-capital confidence sequence (Waudby-Smith & Ramdas 2024).

    For every candidate mean ``m`` on the grid ``{0, 1/breaks, ..., 1}`` the
    capital ``K_t(m) = (prod(1 + l+_i(m)(x_i - m)) + prod(1 - l-_i(m)(x_i - m))) / 2``
    with bets ``l+_i(m) = min(lambda_i, c/m)``, ``l-_i(m) = min(lambda_i,
    c/(1-m))`` (``lambda_i`` from :func:`predictable_bets`) is a nonnegative
    martingale with initial value 1 when ``m`` is the true mean, so by
    Ville's inequality the true mean has ``K_s < 1/alpha`` at every s with
    probability >= 1 - alpha.  The CS is kept as a run of grid points: each
    round, the run shrinks to the first..last of its points whose capital
    is still below 1/alpha (a superset of the running intersection of the
    sets ``{m : K_s(m) < 1/alpha}``, so just as valid).  Should no point be
    left (probability <= alpha), the one with the smallest capital is kept,
    so the CS never empties.  Reported bounds are the excluded grid points
    just outside the run.

    ``x``: shape (..., T), values in [0, 1].  Returns (lower, upper), each of
    shape (..., T), in [0, 1]; entry t is the CS after x[..., :t+1].
    """
    x = np.asarray(x, dtype=np.float64)
    grid = np.linspace(0.0, 1.0, breaks + 1)
    cap_plus, cap_minus = _truncations(grid)
    bets = predictable_bets(x, alpha)
    level = 2.0 / alpha  # K_t >= 1/alpha  <=>  K+ + K- >= 2/alpha
    batch = x.shape[:-1]
    capital_plus = np.ones(batch + grid.shape)
    capital_minus = np.ones(batch + grid.shape)
    first = np.zeros(batch, dtype=np.intp)  # each row's run of grid points, inclusive
    last = np.full(batch, breaks, dtype=np.intp)
    lower = np.empty(x.shape)
    upper = np.empty(x.shape)
    # Only the union of all rows' runs is updated: excluded points never return.
    lo, hi = 0, breaks + 1
    for t in range(x.shape[-1]):
        bet = bets[..., t, None]
        largest_bet = float(np.max(bet))
        plus, minus = capital_plus[..., lo:hi], capital_minus[..., lo:hi]
        _bet_on_grid(
            plus,
            minus,
            x[..., t, None] - grid[lo:hi],
            bet,
            cap_plus[lo:hi],
            cap_minus[lo:hi],
            largest_bet <= cap_plus[hi - 1] and largest_bet <= cap_minus[lo],
        )
        capital = plus + minus
        index = np.arange(lo, hi)
        in_run = (index >= first[..., None]) & (index <= last[..., None])
        inside = in_run & (capital < level)
        nonempty = inside.any(axis=-1)
        new_first = lo + np.argmax(inside, axis=-1)
        new_last = hi - 1 - np.argmax(inside[..., ::-1], axis=-1)
        if not nonempty.all():
            keep = lo + np.argmin(np.where(in_run, capital, np.inf), axis=-1)
            new_first = np.where(nonempty, new_first, keep)
            new_last = np.where(nonempty, new_last, keep)
        first, last = new_first, new_last
        lower[..., t] = np.maximum(first - 1, 0) / breaks
        upper[..., t] = np.minimum(last + 1, breaks) / breaks
        lo, hi = int(np.min(first)), int(np.max(last)) + 1
    return lower, upper


def pprl_eb_cs(x: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Predictable plug-in empirical-Bernstein CS (Waudby-Smith & Ramdas 2024).

    ``C_t = sum(l_i x_i)/sum(l_i) +- (log(2/alpha) + sum(v_i psi_E(l_i))) / sum(l_i)``
    with ``v_i = 4 (x_i - mu_{i-1})^2``, ``psi_E(l) = (-log(1-l) - l)/4`` and the
    bets of :func:`predictable_bets` truncated at c = 1/2; intersected with
    [0, 1] and over time.  ``x``: shape (..., T) in [0, 1]; returns
    (lower, upper) of the same shape.
    """
    x = np.asarray(x, dtype=np.float64)
    t = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    bets = np.minimum(predictable_bets(x, alpha), BET_TRUNCATION)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1.0)
    mu_prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.5), mu[..., :-1]], axis=-1)
    penalty = (x - mu_prev) ** 2 * (-np.log1p(-bets) - bets)
    bet_sum = np.cumsum(bets, axis=-1)
    centre = np.cumsum(bets * x, axis=-1) / bet_sum
    margin = (math.log(2.0 / alpha) + np.cumsum(penalty, axis=-1)) / bet_sum
    lower = np.maximum.accumulate(np.maximum(centre - margin, 0.0), axis=-1)
    upper = np.minimum.accumulate(np.minimum(centre + margin, 1.0), axis=-1)
    return lower, upper
