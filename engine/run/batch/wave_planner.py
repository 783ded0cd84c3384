"""The wave planner: how many next documents each live cell submits in the
next wave of a batch judge (a judge with `mode = "batch"`).

A batch takes minutes to hours, so a sequential design runs in waves: submit
some documents of every live cell, wait for the batch, feed the answers to
the stopping rules in document order, plan the next wave. This module is
the policy that sizes a cell's next wave from its stopping rule's state:
pure functions, no I/O (engine.run.batch.judge runs the waves).

- First wave: the rule's sure minimum (`min_docs`), which every run judges.
- `fixed`: the remainder (n minus what is consumed or outstanding).
- `paper`: its next decision point: the fewest further scores after which
  the rule *could* fire. The rule fires at the first N >= floor (=
  max(min_docs, window + 1)) whose running means m_{N-window}..m_N lie
  within `tolerance`. The known means m_{N-window}..m_n are fixed; the
  future ones can at best all equal m_n (a score equal to the running mean
  leaves it unchanged), so the earliest N is the first whose known part of
  the window spans at most `tolerance`. No wave of this size submits a
  document the rule could not need.
- `ci`: the documents the current spread says are still needed to reach
  the target half-width. A confidence sequence's half-width h shrinks about
  as c·SD/sqrt(n) (c: the CS's multiplier at the cell's alpha, slowly
  growing with log n). Calibrating c on the rule's current state,
  c = h·sqrt(n)/SD, the SD cancels: N = n·(h/epsilon)². The multiplier's
  log growth would make that an underestimate, hence the margin
  (+CI_MARGIN); at small n the width is still dominated by the CS's start
  (a half-width near 50 points whatever the scores), which overstates N,
  hence the cap of CI_GROWTH times the scores so far per wave. Measured on
  one design (benchmarks/RESULTS.md, "Batch mode"), the estimate
  overshot: margin 0 would have over-submitted 7.6 % instead of 13.6 %,
  with the same waves.
- Every wave is capped by the cell's cap (`max_docs`, `fixed` n, check n).

Trade-off: a bigger wave means fewer waves (each costs the provider's
turnaround, minutes to hours) but more over-submission: documents past the
stopping point are paid for and dropped (their answers stay cached for a
later run). A smaller margin / growth gives the reverse. The paper rule's
waves are exact (no over-submission) but, after its minimum, often one
document each; `min_wave` trades a few documents for fewer waves.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.stopping.rules import StoppingRule

CI_MARGIN = 0.15  # added to the ci rule's estimate of documents still needed
CI_GROWTH = 4.0  # a ci cell at most grows its scored documents this many times per wave
_SLACK = 1e-9  # the paper rule's own tie slack


def fixed_remaining(n_target: int, scored: int, outstanding: int) -> int:
    """The `fixed` rule: the documents still to submit for `n_target` scores."""
    return max(0, n_target - scored - outstanding)


def paper_next_decision(recent_means: Sequence[float], scored: int, *, window: int, tolerance: float, floor: int) -> int:
    """Further scores until the paper rule's earliest possible stop.

    `recent_means` are m_{scored-window}..m_scored (fewer at the start),
    oldest first; `floor` = the rule's resolved min_docs (>= window + 1)."""
    if scored == 0:
        return floor
    first_known = scored - len(recent_means) + 1  # document count of recent_means[0]
    k = max(1, floor - scored)
    while True:
        start = scored + k - window  # the window's oldest document count at N = scored + k
        known = recent_means[max(0, start - first_known):]
        if not known or max(known) - min(known) <= tolerance + _SLACK:
            return k
        k += 1


def ci_target(scored: int, half_width: float, epsilon: float, *, min_docs: int, margin: float = CI_MARGIN, growth: float = CI_GROWTH) -> int:
    """The `ci` rule: the scored documents the cell is expected to need in all
    (N = n·(h/epsilon)²·(1 + margin), at most growth·n, at least n + 1)."""
    if scored == 0:
        return min_docs
    needed = math.ceil(scored * (half_width / epsilon) ** 2 * (1.0 + margin))
    needed = min(needed, math.ceil(growth * scored))
    return max(needed, scored + 1, min_docs)


def wave_size(
    rule: StoppingRule,
    *,
    outstanding: int,
    cap: int,
    min_docs: int,
    margin: float = CI_MARGIN,
    growth: float = CI_GROWTH,
    min_wave: int = 1,
) -> int:
    """How many new documents a cell submits in the next wave (0: none).

    `outstanding`: documents issued and not yet consumed (items waiting to
    be resubmitted count toward the wave); `cap`: most documents the cell
    consumes; `min_wave`: the smallest wave worth submitting for a live cell."""
    if rule.done:
        return 0
    scored = rule.n
    spec = rule.spec  # type: ignore[attr-defined]
    if rule.kind == "fixed":
        wanted = fixed_remaining(spec.n, scored, outstanding)
    elif rule.kind == "paper":
        k = paper_next_decision(rule.recent_means, scored, window=spec.window, tolerance=spec.tolerance, floor=spec.resolved_min_docs)  # type: ignore[attr-defined]
        wanted = max(0, k - outstanding)
    elif rule.kind == "ci":
        target = ci_target(scored, rule.half_width, spec.epsilon, min_docs=min_docs, margin=margin, growth=growth)  # type: ignore[attr-defined]
        wanted = max(0, target - scored - outstanding)
    else:
        raise ValueError(f"no wave plan for stopping rule kind {rule.kind!r}")
    if wanted and scored > 0 and rule.kind != "fixed":
        wanted = max(wanted, min_wave)
    return max(0, min(wanted, cap - scored - outstanding))


def estimate_waves(kind: str, *, min_docs: int, cap: int, window: int = 10, growth: float = CI_GROWTH) -> int:
    """A rough count of waves for the dry run, before any score is known:
    `fixed` 1; `paper` 1 + `window` (its minimum, then one decision point
    at a time while the last window's means settle: the usual case when
    the mean is settled soon after min_docs); `ci` 1 + the growth steps
    from min_docs to the cap (the widest case; a cell that converges
    earlier needs fewer)."""
    if kind == "fixed":
        return 1
    if kind == "paper":
        return 1 + min(window, max(0, cap - min_docs))
    n, waves = max(1, min_docs), 1
    while n < cap:
        n = math.ceil(n * growth)
        waves += 1
    return waves
