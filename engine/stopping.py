"""Per-cell stopping rules (ARCHITECTURE.md "Stopping rules", issue 4).

A rule consumes one cell's ok scores (0-100 points) strictly in document
order and says when the cell is measured well enough:

``paper``
    The reference paper's rule: stop once the running mean has moved by at
    most ``tolerance`` points over the last ``window`` documents and at least
    ``min_docs`` documents are scored.  Precisely, with running means
    ``m_k = (x_1 + ... + x_k) / k``, stop at the first ``n`` with
    ``n >= max(min_docs, window + 1)`` and
    ``max(m_{n-window}, ..., m_n) - min(m_{n-window}, ..., m_n) <= tolerance``.
    "Changes by at most one point over the last ten documents" is read as
    the whole path of the mean across those ten documents (the mean before
    them and after each of them), not only its two end points: a mean that
    swings up and back within the window has not settled.
``fixed``
    Exactly ``n`` documents.
``ci``
    An anytime-valid confidence sequence (CS) for the cell mean; stop once
    its half-width is at most ``epsilon`` points.  Because a CS covers the
    mean at *every* time simultaneously, stopping on its width does not
    void its coverage.  ``alpha`` is family-wise over the cells of an
    experiment: :func:`make_rule_factory` gives each cell ``alpha / n_cells``
    (union bound), so all cells' intervals hold at once with probability at
    least ``1 - alpha``.

    Methods, both from I. Waudby-Smith and A. Ramdas, "Estimating means of
    bounded random variables by betting", JRSS-B 86(1), 2024 (online 2023;
    arXiv:2010.09686):

    * ``hedged`` (default): the hedged-capital CS -- the average of an
      upward and a downward betting capital process for each candidate mean,
      with their predictable plug-in bets truncated at ``c/m`` and
      ``c/(1-m)``, ``c = 1/2`` -- computed on a fixed grid of candidate means
      chosen from ``epsilon`` (see :func:`grid_breaks`); a cell of a large
      design keeps only the capitals near the two ends of its CS and replays
      the rest from its history when needed (see ``HEDGED_CAPITALS_BUDGET``),
      with bit-identical intervals.  Markedly tighter
      for low-variance scores; at very small per-cell alpha and high
      variance the two methods are close (benchmarks/RESULTS.md).
    * ``eb``: the predictable plug-in empirical-Bernstein (PrPl-EB) CS;
      closed form, O(1) per score.

    Both are intersected over time (a running intersection is still a CS).

The settings of each rule, their defaults and their validation are in
engine.stopping_spec (one Struct per rule, tagged by ``kind``).

The pure functions :func:`hedged_capital_cs` and :func:`pprl_eb_cs` compute
a whole CS path for a batch of streams at once; the rule objects compute the
same thing one score at a time and serialise their state so a resumed run
continues exactly.
"""

from __future__ import annotations

import functools
import math
from array import array
from collections import deque
from typing import Any, Callable, Literal, Protocol, runtime_checkable

import msgspec
import numpy as np

from engine.contracts import ConfigError
from engine.stopping_spec import CiSpec, FixedSpec, PaperSpec, StoppingSpec

# Why a rule stopped ("" while it runs).
StopReason = Literal["", "converged", "n_reached", "max_docs"]

# Truncation of the bets, c in the paper (1/2 or 3/4 suggested).
BET_TRUNCATION = 0.5
# Ties in the paper rule are decided as written, not by float rounding.
_PAPER_SLACK = 1e-9
_STATE_VERSION = 2


@runtime_checkable
class StoppingRule(Protocol):
    """One cell's rule.  Feed ok scores in document order; stop feeding when done.

    ``update`` after ``done`` raises: the data must not depend on how many
    completions happened to be in flight when the cell stopped.
    """

    kind: str
    n: int

    def update(self, score: float) -> None: ...

    @property
    def done(self) -> bool: ...

    @property
    def mean(self) -> float: ...

    @property
    def reason(self) -> str: ...

    def state(self) -> dict[str, Any]: ...

    def restore(self, state: dict[str, Any]) -> None: ...


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
def _shared_grid(breaks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid of candidate means and its truncations, read-only, one per grid
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


# ---------------------------------------------------------------------------
# Incremental rules


# How much memory the hedged rules of one experiment may spend on capitals
# (their dominant state): a cell keeps the capitals of a band of grid points
# at each end of its CS run, as wide as this allows (at least
# HEDGED_MIN_BAND points, at most the whole grid), and recomputes the
# interior from its score history only when an end reaches it.  Keeping the
# whole grid in every cell of a 1M-call design took hundreds of MB
# (benchmarks/RESULTS.md, "Peak memory"); a few hundred cells still keep it
# whole (the fastest).
HEDGED_CAPITALS_BUDGET = 16 * 2**20
HEDGED_MIN_BAND = 64
# Row 0 of a capital pair bets up (K+), row 1 down (K-): the factor of row r
# is 1 + min(bet, cap_r) * sign_r * (x - m), which is bit for bit
# _bet_on_grid's 1 + min(bet, c/m)(x - m) and 1 - min(bet, c/(1-m))(x - m)
# (negation is exact), in half the numpy calls.
_SIGNS = np.array([[1.0], [-1.0]])


def hedged_band(breaks: int, n_cells: int) -> int:
    """Grid points a hedged cell keeps at each end of its CS run (see HEDGED_CAPITALS_BUDGET).

    Two bands of two float64 capitals a point: 32 bytes a point of band.
    """
    return max(HEDGED_MIN_BAND, min(breaks + 1, HEDGED_CAPITALS_BUDGET // (32 * n_cells)))


@functools.lru_cache(maxsize=16)
def _shared_truncation_pairs(breaks: int) -> np.ndarray:
    """(2, breaks + 1): c/m over c/(1-m) on the grid, read-only, shared by all cells."""
    pairs = np.stack(_shared_grid(breaks)[1:])
    pairs.flags.writeable = False
    return pairs


def _replay_capitals(xs: np.ndarray, bets: np.ndarray, start: int, stop: int, breaks: int) -> np.ndarray:
    """The (2, stop - start) capital pairs of grid points [start, stop) after betting
    ``bets`` (:func:`predictable_bets` of ``xs``) on every score in ``xs``.

    Bit for bit what the incremental rule holds: each factor is the same
    IEEE expression as :func:`_bet_on_grid`'s (:meth:`_Segment.bet`'s signed
    form negates exactly), and a product along axis 0 multiplies in row
    order starting from the first factor (1.0 * f is f exactly).
    """
    grid, cap_plus, cap_minus = _shared_grid(breaks)
    bets = bets[:, None]
    diff = np.subtract.outer(xs, grid[start:stop])
    capital = np.empty((2, stop - start))
    factor = np.minimum(bets, cap_plus[start:stop])
    factor *= diff
    factor += 1.0
    np.multiply.reduce(factor, axis=0, out=capital[0])
    factor = np.minimum(bets, cap_minus[start:stop])
    factor *= diff
    np.subtract(1.0, factor, out=factor)
    np.multiply.reduce(factor, axis=0, out=capital[1])
    return capital


class _Segment:
    """The capital pairs of the contiguous grid points [start, stop)."""

    __slots__ = ("start", "stop", "capital", "smallest_cap")

    def __init__(self, start: int, stop: int, capital: np.ndarray, breaks: int) -> None:
        self.start, self.stop, self.capital = start, stop, capital
        cap_plus, cap_minus = _shared_grid(breaks)[1:]
        # The truncations' smallest values here (c/m falls, c/(1-m) rises with m).
        self.smallest_cap = min(float(cap_plus[stop - 1]), float(cap_minus[start]))

    def bet(self, x: float, bet: float, grid: np.ndarray, pairs: np.ndarray) -> None:
        signed = (x - grid[self.start : self.stop]) * _SIGNS
        if bet <= self.smallest_cap:  # no truncation anywhere here (common once narrow)
            signed *= bet
        else:
            signed *= np.minimum(bet, pairs[:, self.start : self.stop])
        signed += 1.0
        self.capital *= signed

    def total(self, point: int) -> float:
        """K+ + K- at one grid point (the hedged capital is half of it)."""
        column = self.capital[:, point - self.start]
        return float(column[0] + column[1])


class _HedgedRun:
    """One stream's hedged-capital CS, one score at a time, in O(band) memory.

    Exactly the run of :func:`hedged_capital_cs` (bit for bit, which the
    tests check): the run [lo, hi) of grid points still in the CS shrinks,
    each step, to the first..last of its points whose capital is below the
    level.  That decision needs the capitals near the run's two ends only,
    and a point inside the run has been inside at every earlier step, so
    its capital is the plain product of all factors so far.  Hence only a
    band of points at each end is kept (``left`` and ``right``; one segment
    once the run is at most two bands wide), and when an end moves within
    half a band of its band's inner edge the next points are recomputed from
    the score history (:func:`_replay_capitals`).  A band may still hold a
    few points just outside the run; they are updated and ignored.
    """

    __slots__ = (
        "breaks", "alpha", "level", "band", "xs", "lo", "hi", "left", "right", "_pieces", "_bets", "_grid", "_pairs"
    )

    def __init__(self, breaks: int, alpha: float, band: int) -> None:
        self.breaks, self.alpha, self.band = breaks, alpha, band
        self.level = 2.0 / alpha  # K_t >= 1/alpha  <=>  K+ + K- >= 2/alpha
        self._grid = _shared_grid(breaks)[0]
        self._pairs = _shared_truncation_pairs(breaks)
        # The history the interior's capitals are replayed from (8 bytes a score).
        self.xs = array("d")
        self.lo, self.hi = 0, breaks + 1
        self._pieces: list[_Segment] = []
        self._bets: np.ndarray | None = None  # the history's bets, while one step needs them
        self.left: _Segment
        self.right: _Segment | None = None
        self._layout(0, breaks + 1)

    @property
    def n(self) -> int:
        return len(self.xs)

    def held(self) -> int:
        """How many grid points' capitals are kept (for tests and memory checks)."""
        return sum(segment.capital.shape[1] for segment in self._segments())

    def _segments(self) -> list[_Segment]:
        return [self.left] if self.right is None else [self.left, self.right]

    def observe(self, x: float, bet: float) -> bool:
        """Bet ``bet`` on score ``x``; True when the run changed."""
        self.xs.append(x)
        left, right, lo, hi, level = self.left, self.right, self.lo, self.hi, self.level
        left.bet(x, bet, self._grid, self._pairs)
        if right is None:  # the whole run is kept
            if left.total(lo) < level and left.total(hi - 1) < level:
                return False
            run = left.capital[:, lo - left.start : hi - left.start]
            capital = run[0] + run[1]
            inside = np.flatnonzero(capital < level)
            if inside.size:
                self.lo, self.hi = lo + int(inside[0]), lo + int(inside[-1]) + 1
            else:  # no point left (probability <= alpha): see hedged_capital_cs
                self.lo = lo + int(np.argmin(capital))
                self.hi = self.lo + 1
            return True
        right.bet(x, bet, self._grid, self._pairs)
        left_kept = left.total(lo) < level
        right_kept = right.total(hi - 1) < level
        if left_kept and right_kept:
            return False
        first: int | None = lo
        last: int | None = hi - 1
        if not left_kept:
            band = left.capital[:, lo - left.start :]
            inside = np.flatnonzero(band[0] + band[1] < level)
            first = lo + int(inside[0]) if inside.size else None
        if not right_kept:
            band = right.capital[:, : hi - right.start]
            inside = np.flatnonzero(band[0] + band[1] < level)
            last = right.start + int(inside[-1]) if inside.size else None
        self._pieces = [left, right]
        if first is None:  # past the left band: scan the replayed interior
            first = self._scan(left.stop, hi, upward=True)
        if first is None:
            first = last = self._smallest_capital()
        elif last is None:
            last = self._scan(first, right.start, upward=False)
            assert last is not None  # first itself is inside
        self._layout(first, last + 1)
        self._pieces = []
        self._bets = None
        return True

    def _replay(self, start: int, stop: int) -> np.ndarray:
        xs = np.frombuffer(self.xs)
        if self._bets is None:  # once a step, however many ranges it replays
            self._bets = predictable_bets(xs, self.alpha)
        return _replay_capitals(xs, self._bets, start, stop, self.breaks)

    def _capitals(self, start: int, stop: int) -> np.ndarray:
        """Capital pairs of the run's points [start, stop): from kept pieces, else replayed."""
        for piece in self._pieces:
            if piece.start <= start and stop <= piece.stop:
                return piece.capital[:, start - piece.start : stop - piece.start]
        capital = np.empty((2, stop - start))
        filled = np.zeros(stop - start, dtype=bool)
        for piece in self._pieces:
            a, b = max(start, piece.start), min(stop, piece.stop)
            if a < b:
                capital[:, a - start : b - start] = piece.capital[:, a - piece.start : b - piece.start]
                filled[a - start : b - start] = True
        if not filled.all():
            missing = np.flatnonzero(~filled)
            a, b = start + int(missing[0]), start + int(missing[-1]) + 1
            replayed = _Segment(a, b, self._replay(a, b), self.breaks)
            gap = ~filled[a - start : b - start]
            capital[:, a - start : b - start][:, gap] = replayed.capital[:, gap]
            self._pieces.append(replayed)
        return capital

    def _scan(self, start: int, stop: int, *, upward: bool) -> int | None:
        """The first (upward) or last point of [start, stop) with capital below the level."""
        chunk = self.band
        while start < stop:
            # A kept piece whole first, then replayed chunks of doubling size.
            if upward:
                a = start
                b = min(next((p.stop for p in self._pieces if p.start <= a < p.stop), a + chunk), stop)
            else:
                b = stop
                a = max(next((p.start for p in self._pieces if p.start < b <= p.stop), b - chunk), start)
            capital = self._capitals(a, b)
            inside = np.flatnonzero(capital[0] + capital[1] < self.level)
            if inside.size:
                return a + int(inside[0] if upward else inside[-1])
            if upward:
                start = b
            else:
                stop = a
            chunk *= 2
        return None

    def _smallest_capital(self) -> int:
        capital = self._capitals(self.lo, self.hi)
        return self.lo + int(np.argmin(capital[0] + capital[1]))

    def _layout(self, lo: int, hi: int) -> None:
        """Keep bands for the run [lo, hi), reusing a band while half of it is left."""
        self.lo, self.hi = lo, hi
        band, breaks, left, right = self.band, self.breaks, self.left if self.n else None, self.right
        if hi - lo <= 2 * band:
            self.left = _Segment(lo, hi, self._fresh(lo, hi), breaks)
            self.right = None
            return
        half = max(1, band // 2)
        if left is None or left.stop - lo < half:
            self.left = _Segment(lo, lo + band, self._extended(left, lo, lo + band), breaks)
        if right is None or hi - right.start < half:
            self.right = _Segment(hi - band, hi, self._extended(right, hi - band, hi), breaks)

    def _extended(self, kept: _Segment | None, start: int, stop: int) -> np.ndarray:
        """[start, stop)'s capital pairs: the part ``kept`` holds copied, the rest replayed."""
        if kept is None or not self.xs or kept.stop <= start or stop <= kept.start:
            return self._fresh(start, stop)
        a, b = max(start, kept.start), min(stop, kept.stop)
        held = kept.capital[:, a - kept.start : b - kept.start]
        if start == a and b < stop:  # the left band grows inward
            return np.concatenate((held, self._replay(b, stop)), axis=1)
        if start < a and b == stop:  # the right band grows inward
            return np.concatenate((self._replay(start, a), held), axis=1)
        return self._fresh(start, stop)

    def _fresh(self, start: int, stop: int) -> np.ndarray:
        """An own copy of [start, stop)'s capital pairs (so no large array stays referenced)."""
        if not self.xs:
            return np.ones((2, stop - start))
        return self._capitals(start, stop).copy()

    def state(self) -> dict[str, Any]:
        return {
            "xs": self.xs.tolist(),
            "lo": self.lo,
            "hi": self.hi,
            "segments": [[segment.start, segment.stop] for segment in self._segments()],
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.xs = array("d", state["xs"])
        self.lo, self.hi = int(state["lo"]), int(state["hi"])
        # A band's points outside the run are replayed too: bit for bit what
        # the saved rule held there.
        segments = [_Segment(start, stop, self._replay(start, stop), self.breaks) for start, stop in state["segments"]]
        self._bets = None
        self.left = segments[0]
        self.right = segments[1] if len(segments) > 1 else None


class _RuleBase:
    """Shared bookkeeping: count, mean, score checks, min/max documents, state header."""

    kind: str = ""

    def __init__(self, spec: StoppingSpec) -> None:
        self.spec = spec
        self.n = 0
        self.total = 0.0
        self._reason: str = ""
        self._min_docs = spec.resolved_min_docs

    @property
    def done(self) -> bool:
        return bool(self._reason)

    @property
    def reason(self) -> str:
        return self._reason

    @property
    def mean(self) -> float:
        """Running mean of the scores fed so far, in points (nan before any)."""
        return self.total / self.n if self.n else math.nan

    def update(self, score: float) -> None:
        if self._reason:
            raise RuntimeError(
                f"{self.kind} stopping rule already stopped ({self._reason}) after {self.n} "
                "documents; the scheduler must not feed it more scores"
            )
        value = float(score)
        if not (0.0 <= value <= 100.0):  # also rejects nan
            raise ValueError(f"score must be a number of points in [0, 100], got {score!r}")
        self.n += 1
        self.total += value
        converged = self._observe(value)
        if converged and self.n >= self._min_docs:
            self._reason = "converged"
        elif self.spec.max_docs is not None and self.n >= self.spec.max_docs:
            self._reason = "max_docs"

    def _observe(self, value: float) -> bool:
        raise NotImplementedError

    def _identity(self) -> dict[str, Any]:
        """The settings a saved state must have been produced under."""
        return {"spec": msgspec.to_builtins(self.spec)}

    def state(self) -> dict[str, Any]:
        """Plain data (str, int, float, bool, lists) for msgpack; restore() continues exactly.

        A hedged rule's capitals inside the CS run may include inf (an
        excluded interior point), which msgpack carries but strict JSON does not.
        """
        return {
            "version": _STATE_VERSION,
            "kind": self.kind,
            **self._identity(),
            "n": self.n,
            "total": self.total,
            "reason": self._reason,
            **self._extra_state(),
        }

    def _extra_state(self) -> dict[str, Any]:
        return {}

    def restore(self, state: dict[str, Any]) -> None:
        if state.get("version") != _STATE_VERSION or state.get("kind") != self.kind:
            raise ValueError(
                f"cannot restore a {self.kind} rule (state version {_STATE_VERSION}) from "
                f"kind={state.get('kind')!r} version={state.get('version')!r}"
            )
        for key, expected in self._identity().items():
            if state.get(key) != expected:
                raise ConfigError(
                    f"stopping: the saved rule state was made with {key}={state.get(key)!r} but "
                    f"the config now gives {expected!r}; the stopping settings changed since the "
                    "interrupted run"
                )
        self.n = int(state["n"])
        self.total = float(state["total"])
        self._reason = str(state["reason"])
        self._restore_extra(state)

    def _restore_extra(self, state: dict[str, Any]) -> None:
        pass


class FixedRule(_RuleBase):
    """Stop after exactly ``spec.n`` documents."""

    kind = "fixed"

    def update(self, score: float) -> None:
        super().update(score)
        if not self._reason and self.n >= self.spec.n:
            self._reason = "n_reached"

    def _observe(self, value: float) -> bool:
        return False


class PaperRule(_RuleBase):
    """The reference paper's rule; see the module docstring for the exact reading."""

    kind = "paper"

    def __init__(self, spec: PaperSpec) -> None:
        super().__init__(spec)
        self._recent: deque[float] = deque(maxlen=spec.window + 1)

    def _observe(self, value: float) -> bool:
        self._recent.append(self.total / self.n)
        if len(self._recent) <= self.spec.window:
            return False
        return max(self._recent) - min(self._recent) <= self.spec.tolerance + _PAPER_SLACK

    @property
    def recent_means(self) -> list[float]:
        """Running means m_{n-window}..m_n (fewer at the start), points."""
        return list(self._recent)

    def _extra_state(self) -> dict[str, Any]:
        return {"recent_means": list(self._recent)}

    def _restore_extra(self, state: dict[str, Any]) -> None:
        self._recent = deque((float(v) for v in state["recent_means"]), maxlen=self.spec.window + 1)


class CiRule(_RuleBase):
    """Stop when an anytime-valid CS for the mean has half-width <= epsilon points.

    ``alpha`` here is this cell's share (see :func:`make_rule_factory`).
    """

    kind = "ci"

    def __init__(self, spec: CiSpec, alpha: float, *, band: int | None = None) -> None:
        super().__init__(spec)
        if not (0.0 < alpha < 1.0):
            raise ValueError(f"per-cell alpha must be in (0, 1), got {alpha!r}")
        self.alpha = alpha
        self._log_two_over_alpha = math.log(2.0 / alpha)
        # Predictable plug-in estimates (see predictable_bets).
        self._sum_x = 0.0
        self._sum_sq_dev = 0.0
        self._sigma2_prev = 0.25
        self._mu_prev = 0.5
        self._lower = 0.0
        self._upper = 1.0
        if spec.method == "hedged":
            self.breaks = grid_breaks(spec.epsilon)
            # ``band``: see hedged_band (None keeps the whole grid).
            self._run = _HedgedRun(self.breaks, alpha, self.breaks + 1 if band is None else band)
            self._half_width = 50.0
        else:
            self._bet_sum = 0.0
            self._weighted_sum = 0.0
            self._penalty_sum = 0.0

    def _identity(self) -> dict[str, Any]:
        return {**super()._identity(), "alpha": self.alpha}

    def interval(self) -> tuple[float, float]:
        """Current CS bounds for the mean, in points."""
        return self._lower * 100.0, self._upper * 100.0

    @property
    def half_width(self) -> float:
        """Half the CS width, in points."""
        if self.spec.method == "hedged":
            return self._half_width
        return (self._upper - self._lower) * 50.0

    def _next_bet(self) -> float:
        t = self.n
        return math.sqrt(2.0 * self._log_two_over_alpha / (self._sigma2_prev * t * math.log1p(t)))

    def _advance_estimates(self, x: float) -> None:
        t = self.n
        self._sum_x += x
        mu = (0.5 + self._sum_x) / (t + 1.0)
        deviation = x - mu
        self._sum_sq_dev += deviation * deviation  # x * x, not pow(): predictable_bets squares the same way
        self._sigma2_prev = (0.25 + self._sum_sq_dev) / (t + 1.0)
        self._mu_prev = mu

    def _observe(self, value: float) -> bool:
        x = value / 100.0
        bet = self._next_bet()
        if self.spec.method == "hedged":
            self._observe_hedged(x, bet)
        else:
            self._observe_eb(x, bet)
        self._advance_estimates(x)
        return self.half_width <= self.spec.epsilon

    def _observe_hedged(self, x: float, bet: float) -> None:
        run = self._run
        if not run.observe(x, bet):
            return  # the CS is unchanged
        lower_index, upper_index = max(run.lo - 1, 0), min(run.hi, self.breaks)
        self._lower = lower_index / self.breaks
        self._upper = upper_index / self.breaks
        # Exact on the grid, so a width of exactly epsilon is not lost to rounding.
        self._half_width = (upper_index - lower_index) * 50.0 / self.breaks

    def _observe_eb(self, x: float, bet: float) -> None:
        bet = min(bet, BET_TRUNCATION)
        self._bet_sum += bet
        self._weighted_sum += bet * x
        self._penalty_sum += (x - self._mu_prev) ** 2 * (-math.log1p(-bet) - bet)
        centre = self._weighted_sum / self._bet_sum
        margin = (self._log_two_over_alpha + self._penalty_sum) / self._bet_sum
        self._lower = max(self._lower, centre - margin, 0.0)
        self._upper = min(self._upper, centre + margin, 1.0)

    def _extra_state(self) -> dict[str, Any]:
        state: dict[str, Any] = {
            "sum_x": self._sum_x,
            "sum_sq_dev": self._sum_sq_dev,
            "sigma2_prev": self._sigma2_prev,
            "mu_prev": self._mu_prev,
            "lower": self._lower,
            "upper": self._upper,
        }
        if self.spec.method == "hedged":
            state.update(self._run.state(), half_width=self._half_width)
        else:
            state.update(
                bet_sum=self._bet_sum,
                weighted_sum=self._weighted_sum,
                penalty_sum=self._penalty_sum,
            )
        return state

    def _restore_extra(self, state: dict[str, Any]) -> None:
        self._sum_x = float(state["sum_x"])
        self._sum_sq_dev = float(state["sum_sq_dev"])
        self._sigma2_prev = float(state["sigma2_prev"])
        self._mu_prev = float(state["mu_prev"])
        self._lower = float(state["lower"])
        self._upper = float(state["upper"])
        if self.spec.method == "hedged":
            self._half_width = float(state["half_width"])
            self._run.restore(state)
        else:
            self._bet_sum = float(state["bet_sum"])
            self._weighted_sum = float(state["weighted_sum"])
            self._penalty_sum = float(state["penalty_sum"])


def make_rule_factory(spec: StoppingSpec, n_cells: int) -> Callable[[], StoppingRule]:
    """A factory of fresh per-cell rules for an experiment of ``n_cells`` cells.

    For ``ci`` each cell gets ``spec.alpha / n_cells`` (union bound), so the
    probability that any cell's CS misses its mean is at most ``spec.alpha``.
    """
    if n_cells < 1:
        raise ValueError(f"n_cells must be >= 1, got {n_cells!r}")
    spec.validate()
    if isinstance(spec, PaperSpec):
        return lambda: PaperRule(spec)
    if isinstance(spec, FixedSpec):
        return lambda: FixedRule(spec)
    cell_alpha = spec.alpha / n_cells
    if spec.method == "hedged":
        band = hedged_band(grid_breaks(spec.epsilon), n_cells)
        return lambda: CiRule(spec, cell_alpha, band=band)
    return lambda: CiRule(spec, cell_alpha)


def rule_from_state(spec: StoppingSpec, n_cells: int, state: dict[str, Any]) -> StoppingRule:
    """A rule of the experiment's kind continued from a saved ``state()``."""
    rule = make_rule_factory(spec, n_cells)()
    rule.restore(state)
    return rule
