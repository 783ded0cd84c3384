"""Per-cell stopping rules (README "3. Write an experiment config", `[stopping]`).

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
engine.stopping.spec (one Struct per rule, tagged by ``kind``).

The pure functions of engine.stopping.confseq (``hedged_capital_cs``, ``pprl_eb_cs``)
compute a whole CS path for a batch of streams at once; the rule objects
compute the same thing one score at a time. A resumed run replays a cell's stored scores
into a fresh rule (engine.run.resume), which continues exactly.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Callable, Literal, Protocol, runtime_checkable


from engine.stopping.confseq import BET_TRUNCATION, grid_breaks
from engine.stopping.hedged_run import HedgedRun, hedged_band
from engine.stopping.spec import CiSpec, FixedSpec, PaperSpec, StoppingSpec

# Why a rule stopped ("" while it runs).
StopReason = Literal["", "converged", "n_reached", "max_docs"]

# Ties in the paper rule are decided as written, not by float rounding.
_PAPER_SLACK = 1e-9


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


class _RuleBase:
    """Shared bookkeeping: count, mean, score checks, min/max documents."""

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
            self._run = HedgedRun(self.breaks, alpha, self.breaks + 1 if band is None else band)
            self._half_width = 50.0
        else:
            self._bet_sum = 0.0
            self._weighted_sum = 0.0
            self._penalty_sum = 0.0

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
