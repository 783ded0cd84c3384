"""Judge panels: a judge whose score aggregates 2-5 member judges' scores
of the same item (docs/panels.md). The settings, their validation and the
aggregation rules, all pure; the run wiring is engine/run/panel.py.

A member's calls are built exactly as when the member runs alone, so they
share its cache keys: a panel over judges already run costs nothing.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Annotated, Literal

import msgspec

from engine.contracts import NEEDLES, ConfigError

Rule = Literal["mean", "median", "trimmed_mean", "majority"]
RULES: tuple[str, ...] = ("mean", "median", "trimmed_mean", "majority")
PANEL_ADAPTER = "panel"  # the `adapter` of a panel judge (no registry entry: engine.run.panel wires it)
MIN_MEMBERS, MAX_MEMBERS = 2, 5
# a categorical scale for `majority`: whole-number answers, at most this many levels
MAX_CATEGORIES = 11


class CascadeSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Cheap first: ask the first member; the others only when its score
    (0-100) lies within `margin` of one of `boundaries`, or it failed, or it
    is flagged unreliable for the item's cell."""

    boundaries: tuple[float, ...]
    margin: Annotated[float, msgspec.Meta(ge=0)] = 10.0
    # Measured: the first member is flagged unreliable for a cell's block of
    # `block` documents when the `confidence` t-interval of its mean score over
    # the cell's earlier blocks is wider than `max_ci_width` points (fewer than
    # 2 scores: flagged). Earlier blocks only, all of them judged before the
    # block is issued (engine.run.cell_policy holds it back), so the flag is a
    # function of the answers, never of timing.
    max_ci_width: float | None = None
    block: int = 10
    confidence: float = 0.95
    # Declared (e.g. by an earlier run's instrument checks): these cells'
    # items always ask every member.
    escalate_needles: tuple[str, ...] = ()
    escalate_controls: tuple[str, ...] = ()  # "null_edit", "negative", "tournament"


class PanelSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    members: tuple[str, ...]  # names of other [[judges]] of the config
    rule: Rule = "mean"
    # A member whose answer is terminal for an item (refused, unparseable, a
    # terminal error): "fail" fails the item; "drop" aggregates the others
    # when at least `quorum` members answered, else the item fails.
    missing: Literal["fail", "drop"] = "fail"
    quorum: int | None = None  # "drop": members that must answer (default 2)
    cascade: CascadeSpec | None = None

    def needed(self) -> int:
        """Members that must answer for the item to count."""
        if self.missing == "fail":
            return len(self.members)
        return self.quorum if self.quorum is not None else MIN_MEMBERS


def panel_model(members: Sequence[object]) -> str:
    """The `model` of a panel judge's rows: its members' names."""
    return "panel(" + "+".join(str(m) for m in members) + ")"


def validate_panel(panel: PanelSpec, name: str, judges: Mapping[str, object], panels: set[str], at: str) -> None:
    """`judges`: every judge of the config by name; `panels`: the names that
    are panels. Raises ConfigError naming `<at>.panel.<key>`."""
    members = panel.members
    if not MIN_MEMBERS <= len(members) <= MAX_MEMBERS:
        raise ConfigError(f"{at}: `panel.members`: a panel needs {MIN_MEMBERS} to {MAX_MEMBERS} member judges, got {len(members)}")
    for m in members:
        if m == name:
            raise ConfigError(f"{at}: `panel.members`: a panel cannot be its own member ({m!r})")
        if m not in judges:
            known = ", ".join(repr(j) for j in judges if j not in panels and j != name)
            raise ConfigError(f"{at}: `panel.members`: unknown judge {m!r}; expected one of the config's judges: {known}")
        if m in panels:
            raise ConfigError(f"{at}: `panel.members`: {m!r} is a panel; members must be single judges")
        if getattr(judges[m], "mode", "sync") != "sync":
            raise ConfigError(f"{at}: `panel.members`: {m!r} has mode = \"batch\"; a panel asks its members synchronously")
    if len(set(members)) != len(members):
        raise ConfigError(f"{at}: `panel.members`: duplicate members in {list(members)}")
    if panel.rule == "trimmed_mean" and len(members) < 3:
        raise ConfigError(f"{at}: `panel.rule`: trimmed_mean needs at least 3 members (with {len(members)} it trims nothing); use mean or median")
    if panel.quorum is not None:
        if panel.missing != "drop":
            raise ConfigError(f"{at}: `panel.quorum` applies only with missing = \"drop\" (missing = \"fail\" needs every member)")
        if not 1 <= panel.quorum <= len(members):
            raise ConfigError(f"{at}: `panel.quorum`: expected 1 to {len(members)} (the members), got {panel.quorum}")
    if panel.cascade is not None and not panel.cascade.boundaries:
        raise ConfigError(f"{at}: `panel.cascade.boundaries`: expected at least one score (0-100) near which the next member is asked")
    for b in panel.cascade.boundaries if panel.cascade else ():
        if not 0 <= b <= 100:
            raise ConfigError(f"{at}: `panel.cascade.boundaries`: {b} is outside 0-100")
    if panel.cascade is not None:
        _validate_measured(panel.cascade, at)
    for key, allowed in (("escalate_needles", NEEDLES), ("escalate_controls", ("null_edit", "negative", "tournament"))):
        for value in getattr(panel.cascade, key) if panel.cascade else ():
            if value not in allowed:
                raise ConfigError(f"{at}: `panel.cascade.{key}`: {value!r}; expected any of {', '.join(map(repr, allowed))}")


def _validate_measured(cascade: CascadeSpec, at: str) -> None:
    width = cascade.max_ci_width
    default = CascadeSpec(boundaries=cascade.boundaries)
    for key in ("block", "confidence"):
        if width is None and getattr(cascade, key) != getattr(default, key):
            raise ConfigError(f"{at}: `panel.cascade.{key}` applies only with `max_ci_width` (the flag measured from the first member's CI)")
    if width is not None and not 0 < width <= 100:
        raise ConfigError(f"{at}: `panel.cascade.max_ci_width`: expected a width in points, > 0 and <= 100, got {width}")
    if cascade.block < 2:
        raise ConfigError(f"{at}: `panel.cascade.block`: expected at least 2 documents per block (a CI needs 2 scores), got {cascade.block}")
    if not 0 < cascade.confidence < 1:
        raise ConfigError(f"{at}: `panel.cascade.confidence`: expected a level between 0 and 1 (e.g. 0.95), got {cascade.confidence}")


def check_rule_fits(panel: PanelSpec, scales: Sequence[tuple[str, str, bool, float]], at: str) -> None:
    """`scales`: per member (member, scale name, integer?, levels). `majority`
    needs one categorical scale shared by every member."""
    if panel.rule != "majority":
        return
    names = {s[1] for s in scales}
    if len(names) > 1:
        listed = ", ".join(f"{m}: {s}" for m, s, _, _ in scales)
        raise ConfigError(f"{at}: `panel.rule`: majority needs every member on one categorical scale, got {listed}; use mean or median")
    member, scale, integer, levels = scales[0]
    if not integer or levels > MAX_CATEGORIES:
        raise ConfigError(
            f"{at}: `panel.rule`: majority needs a categorical scale (whole numbers, at most {MAX_CATEGORIES} levels); "
            f"the members answer on {scale!r}; use mean, median or trimmed_mean"
        )


def aggregate(rule: str, values: Sequence[float]) -> float:
    """The panel's value from its members' values (0-100 scores; raw answers
    for majority). trimmed_mean drops the lowest and the highest value when
    there are at least 3 (of 2-5 members: the median of 3 or 4, the mean of
    the middle three of 5)."""
    if not values:
        raise ValueError("no member values to aggregate")
    if rule == "mean":
        return math.fsum(values) / len(values)
    if rule == "median":
        return float(statistics.median(values))
    if rule == "trimmed_mean":
        kept = sorted(values)[1:-1] if len(values) >= 3 else list(values)
        return math.fsum(kept) / len(kept)
    if rule == "majority":
        counts = Counter(values)
        top = max(counts.values())
        return float(min(v for v, c in counts.items() if c == top))  # a tie goes to the lowest of the modes
    raise ValueError(f"unknown panel rule {rule!r}")


def escalates(cascade: CascadeSpec, needle: str, control: str) -> bool:
    """The cell's items ask every member (the first member is declared unreliable there)."""
    return needle in cascade.escalate_needles or (control != "" and control in cascade.escalate_controls)


def ci_width(scores: Sequence[float], confidence: float) -> float:
    """Width in points of the t-interval for the mean of `scores` (inf below 2 scores)."""
    n = len(scores)
    if n < 2:
        return math.inf
    sd = statistics.stdev(scores)
    if sd == 0:
        return 0.0
    from scipy import stats  # only runs with a measured cascade load scipy

    low, high = stats.t.interval(confidence, n - 1, loc=statistics.fmean(scores), scale=sd / math.sqrt(n))
    return float(high - low)


def block_flag(cascade: CascadeSpec, first_scores: Mapping[int, float | None], doc_index: int) -> tuple[bool, float]:
    """Whether the first member is flagged unreliable for the block of the
    cell holding `doc_index`, and its CI width then: from its scores
    (document index -> score; None: it gave none) on the cell's documents
    before that block. The run (engine.run.panel) and the report
    (analysis.cascade) both decide by it."""
    assert cascade.max_ci_width is not None
    start = doc_index - doc_index % cascade.block
    width = ci_width([s for d, s in sorted(first_scores.items()) if d < start and s is not None], cascade.confidence)
    return width > cascade.max_ci_width, width


def near_boundary(cascade: CascadeSpec, score: float) -> bool:
    return any(abs(score - b) <= cascade.margin for b in cascade.boundaries)
