"""Pairwise tournaments (docs/panels.md): contestants compared two at a
time by a pairwise prompt ("which edit is closer to the original?"), every
comparison asked in both orders, strengths fitted by Bradley-Terry in the
report (analysis/tournament.py).

Contestants are needle types: for a document at the tournament's position,
the edit made by needle x against the edit made by needle y (the `none`
edit leaves the sentence as it is). The comparison graph is all pairs, or a
sparse random graph (each pair kept with probability degree / (n - 1),
seeded by the experiment seed) that must be connected: strengths of two
parts that never meet are not comparable, so a disconnected graph is a
config error. Pure, and cheap to import (config validation uses it).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from typing import Annotated, Literal

import msgspec

from engine.contracts import NEEDLES, ConfigError

NonNegInt = Annotated[int, msgspec.Meta(ge=0)]


class TournamentSpec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    judges: tuple[str, ...]  # judges that compare (LLM judges: a baseline cannot answer a pairwise prompt)
    contestants: tuple[str, ...] = NEEDLES  # needle types
    graph: Literal["all", "random"] = "all"
    degree: Annotated[float, msgspec.Meta(gt=0)] = 3.0  # random: expected comparisons of each contestant
    documents: Annotated[int, msgspec.Meta(ge=1)] = 6  # per comparison of two contestants, each asked in both orders
    position: tuple[NonNegInt, NonNegInt] | None = None  # default: the check position
    prompt: str = "closer"


def comparison_graph(spec: TournamentSpec, seed: int) -> tuple[tuple[str, str], ...]:
    """The pairs of contestants compared, in a fixed order."""
    pairs = list(itertools.combinations(spec.contestants, 2))
    if spec.graph == "all":
        return tuple(pairs)
    keep = min(1.0, spec.degree / max(1, len(spec.contestants) - 1))
    rng = random.Random(f"{seed}\x1ftournament-graph")
    return tuple(pair for pair in pairs if rng.random() < keep)


def components(nodes: Sequence[str], edges: Sequence[tuple[str, str]]) -> list[set[str]]:
    """The connected parts of the graph (a few contestants: a plain search)."""
    neighbours: dict[str, set[str]] = {n: set() for n in nodes}
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
    if len(spec.contestants) < 2 or len(set(spec.contestants)) != len(spec.contestants):
        raise ConfigError(f"{at}.contestants`: expected at least 2 different needle types, got {list(spec.contestants)}")
    for c in spec.contestants:
        if c not in needles:
            raise ConfigError(f"{at}.contestants`: {c!r} is not one of the experiment's needles {list(needles)}")
    if not spec.judges:
        raise ConfigError(f"{at}.judges`: expected at least one judge to compare")
    for name in spec.judges:
        adapter = judges.get(name)
        if adapter is None:
            raise ConfigError(f"{at}.judges`: unknown judge {name!r}; expected one of {', '.join(map(repr, judges))}")
        if adapter in ("baseline", "panel"):
            raise ConfigError(f"{at}.judges`: {name!r} is a {adapter} judge; only a model judge can answer a pairwise prompt")
    edges = comparison_graph(spec, seed)
    parts = components(spec.contestants, edges)
    if len(parts) > 1:
        listed = " | ".join(", ".join(sorted(p)) for p in parts)
        raise ConfigError(
            f"{at}.graph`: the random comparison graph (degree {spec.degree:g}, seed {seed}) is not connected: {listed}; "
            "contestants that never meet cannot be ranked together: raise `tournament.degree` or use graph = \"all\""
        )
