"""The hedged-capital confidence sequence one score at a time, in O(band)
memory: the incremental form of engine.stopping.confseq.hedged_capital_cs that the
``ci`` stopping rule (engine.stopping.rules) keeps per cell, bit for bit the batch
function's.
"""

from __future__ import annotations

import functools
from array import array

import numpy as np

from engine.stopping.confseq import predictable_bets, shared_grid


# How much memory the hedged rules of one experiment may spend on capitals
# (their dominant state): a cell keeps the capitals of a band of grid points
# at each end of its CS run, as wide as this allows (at least
# HEDGED_MIN_BAND points, at most the whole grid), and recomputes the
# interior from its score history only when an end reaches it.  Keeping the
# whole 2,001-point grid took 32 kB a cell, ~360 MB for the 11,200 cells of
# a 1M-call design; a few hundred cells still keep it whole (the fastest).
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
    pairs = np.stack(shared_grid(breaks)[1:])
    pairs.flags.writeable = False
    return pairs


def _replay_capitals(xs: np.ndarray, bets: np.ndarray, start: int, stop: int, breaks: int) -> np.ndarray:
    """The (2, stop - start) capital pairs of grid points [start, stop) after betting
    ``bets`` (:func:`predictable_bets` of ``xs``) on every score in ``xs``.

    Bit for bit what the incremental rule holds: each factor is the same
    IEEE expression as engine.stopping.confseq._bet_on_grid's (:meth:`_Segment.bet`'s signed
    form negates exactly), and a product along axis 0 multiplies in row
    order starting from the first factor (1.0 * f is f exactly).
    """
    grid, cap_plus, cap_minus = shared_grid(breaks)
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
        cap_plus, cap_minus = shared_grid(breaks)[1:]
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


class HedgedRun:
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
        self._grid = shared_grid(breaks)[0]
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
