"""Pairwise tournaments (docs/panels.md): contestants compared two at a
time by a pairwise prompt ("which edit is closer to the original?"), every
comparison asked in both orders, strengths fitted by Bradley-Terry in the
report (analysis/tournament.py).

Contestants (`kind`):

- `needles`: needle types. For a document at the tournament's position, the
  edit made by needle x against the edit made by needle y of the same
  sentence (the `none` edit leaves it as it is): one original, two edits
  (the `closer` prompt). Repeated over `documents` documents.
- `positions`: needle positions (i, j). The same needle (`needle`) of one
  document in the window (i, j) against it in the window (i', j'): the two
  windows differ, so each edit is shown with its own original (the
  `closer_pairs` prompt: in which pair is the edit closer to its original?).
  Repeated over `documents` documents.
- `documents`: documents. Document x's edit against document y's, both with
  the same needle at the same position, each with its own original
  (`closer_pairs`), once per needle type of `needles` at each of `positions`
  (default: the tournament's position). The entrants are the first
  `entrants` documents of the position's document order that admit every
  one of those needles at every one of those positions (engine.run.design
  picks them).

The comparison graph is over contestant numbers 0..n-1: all pairs, or a
sparse random graph (each pair kept with probability degree / (n - 1),
seeded by the experiment seed) that must be connected: strengths of two
parts that never meet are not comparable, so a disconnected graph is a
config error. Pure, and cheap to import (config validation uses it).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import msgspec

from engine.contracts import NEEDLES, ConfigError

NonNegInt = Annotated[int, msgspec.Meta(ge=0)]


Kind = Literal["needles", "positions", "documents"]
PERTURBING = tuple(n for n in NEEDLES if n != "none")


class TournamentSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    judges: tuple[str, ...]  # judges that compare (LLM judges: a baseline cannot answer a pairwise prompt)
    kind: Kind = "needles"
    contestants: tuple[str, ...] = NEEDLES  # kind "needles": the needle types
    # kind "positions": each contestant's (i, j); kind "documents": where each comparison is asked (default `position`)
    positions: tuple[tuple[NonNegInt, NonNegInt], ...] = ()
    entrants: Annotated[int, msgspec.Meta(ge=2)] = 8  # kind "documents": how many documents compete
    needle: str = "neg"  # kind "positions": the edit every contestant carries
    needles: tuple[str, ...] = PERTURBING  # kind "documents": each comparison once per needle type (at each position)
    graph: Literal["all", "random"] = "all"
    degree: Annotated[float, msgspec.Meta(gt=0)] = 3.0  # random: expected comparisons of each contestant
    documents: Annotated[int, msgspec.Meta(ge=1)] = 6  # needles, positions: documents per comparison, each asked in both orders
    position: tuple[NonNegInt, NonNegInt] | None = None  # needles, documents: default the check position
    prompt: str = ""  # default: "closer" (needles), "closer_pairs" (positions, documents)

    @property
    def prompt_name(self) -> str:
        return self.prompt or ("closer" if self.kind == "needles" else "closer_pairs")

    @property
    def size(self) -> int:
        """How many contestants."""
        return {"needles": len(self.contestants), "positions": len(self.positions), "documents": self.entrants}[self.kind]

    def repetitions(self, position: tuple[int, int]) -> tuple[tuple[str, int, int], ...]:
        """Kind "documents": the (needle, i, j) each comparison is asked with."""
        return tuple((n, i, j) for i, j in (self.positions or (position,)) for n in self.needles)

    def labels(self, entrants: Sequence[str] = ()) -> tuple[str, ...]:
        """The contestants' names as rows carry them (`needle` = "x|y"): needle
        types, positions as "(i,j)", or the entrants' document ids."""
        if self.kind == "needles":
            return self.contestants
        if self.kind == "positions":
            return tuple(position_label(p) for p in self.positions)
        return tuple(entrants)


def position_label(position: Sequence[int]) -> str:
    return f"({position[0]},{position[1]})"


def parse_position(label: str) -> tuple[int, int]:
    i, j = label.strip("()").split(",")
    return int(i), int(j)


def comparison_graph(spec: TournamentSpec, seed: int) -> tuple[tuple[int, int], ...]:
    """The pairs of contestant numbers (0..size-1) compared, in a fixed order."""
    pairs = list(itertools.combinations(range(spec.size), 2))
    if spec.graph == "all":
        return tuple(pairs)
    keep = min(1.0, spec.degree / max(1, spec.size - 1))
    rng = random.Random(f"{seed}\x1ftournament-graph")
    return tuple(pair for pair in pairs if rng.random() < keep)


def components(nodes: Sequence[Any], edges: Sequence[tuple[Any, Any]]) -> list[set[Any]]:
    """The connected parts of the graph (a few contestants: a plain search)."""
    neighbours: dict[Any, set[Any]] = {n: set() for n in nodes}
    for a, b in edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    seen: set[str] = set()
    parts = []
    for start in nodes:
        if start in seen:
            continue
        part, stack = set(), [start]
        while stack:
            node = stack.pop()
            if node not in part:
                part.add(node)
                stack.extend(neighbours[node] - part)
        seen |= part
        parts.append(part)
    return parts


def validate_tournament(spec: TournamentSpec, *, seed: int, needles: Sequence[str], judges: dict[str, str], where: str) -> None:
    """`judges`: name -> adapter of every judge of the config. Errors name `tournament.<key>`."""
    at = f"{where}: `tournament"
    _validate_contestants(spec, needles, at)
    if not spec.judges:
        raise ConfigError(f"{at}.judges`: expected at least one judge to compare")
    for name in spec.judges:
        adapter = judges.get(name)
        if adapter is None:
            raise ConfigError(f"{at}.judges`: unknown judge {name!r}; expected one of {', '.join(map(repr, judges))}")
        if adapter in ("baseline", "panel"):
            raise ConfigError(f"{at}.judges`: {name!r} is a {adapter} judge; only a model judge can answer a pairwise prompt")
    if spec.kind == "positions" and spec.position is not None:
        raise ConfigError(f"{at}.position`: a tournament of positions has its contestants' own positions (`tournament.positions`); remove `position`")
    parts = components(range(spec.size), comparison_graph(spec, seed))
    if len(parts) > 1:
        names = spec.labels([f"entrant {n + 1}" for n in range(spec.size)])
        listed = " | ".join(", ".join(names[n] for n in sorted(part)) for part in parts)
        raise ConfigError(
            f"{at}.graph`: the random comparison graph (degree {spec.degree:g}, seed {seed}) is not connected: {listed}; "
            "contestants that never meet cannot be ranked together: raise `tournament.degree` or use graph = \"all\""
        )


# the keys that apply to some kinds only (a key set for another kind would be silently ignored)
KIND_KEYS = {"contestants": ("needles",), "positions": ("positions", "documents"), "entrants": ("documents",),
             "needle": ("positions",), "needles": ("documents",), "documents": ("needles", "positions")}  # fmt: skip


def _validate_contestants(spec: TournamentSpec, needles: Sequence[str], at: str) -> None:
    default = TournamentSpec(judges=spec.judges)
    for key, kinds in KIND_KEYS.items():
        if spec.kind not in kinds and getattr(spec, key) != getattr(default, key):
            raise ConfigError(f"{at}.{key}`: applies only to kind = {' or '.join(map(repr, kinds))}; this tournament's kind is {spec.kind!r}")
    if spec.kind == "needles":
        if len(spec.contestants) < 2 or len(set(spec.contestants)) != len(spec.contestants):
            raise ConfigError(f"{at}.contestants`: expected at least 2 different needle types, got {list(spec.contestants)}")
        for c in spec.contestants:
            if c not in needles:
                raise ConfigError(f"{at}.contestants`: {c!r} is not one of the experiment's needles {list(needles)}")
    elif spec.kind == "positions":
        listed = [list(p) for p in spec.positions]
        if len(spec.positions) < 2 or len(set(spec.positions)) != len(spec.positions):
            raise ConfigError(f"{at}.positions`: expected at least 2 different [i, j] positions, got {listed}")
        if spec.needle not in PERTURBING:
            raise ConfigError(f"{at}.needle`: {spec.needle!r}; expected one of {', '.join(map(repr, PERTURBING))} (the edit every position carries)")
    else:
        if len(set(spec.positions)) != len(spec.positions):
            raise ConfigError(f"{at}.positions`: duplicate positions in {[list(p) for p in spec.positions]}")
        if not spec.needles or len(set(spec.needles)) != len(spec.needles):
            raise ConfigError(f"{at}.needles`: expected one or more different needle types, got {list(spec.needles)}")
        for n in spec.needles:
            if n not in NEEDLES:
                raise ConfigError(f"{at}.needles`: {n!r} is not a needle type; expected any of {', '.join(map(repr, NEEDLES))}")
