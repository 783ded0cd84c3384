"""A simulated pairwise judge with planted Bradley-Terry strengths.

Shown contestants x (first) and y (second), it prefers x with probability

    p = 1 / (1 + exp(-(s_x − s_y + position_bias)))

and answers a tie inside a band of half-width h = tie_width · min(p, 1 − p)
around p: with u uniform, "1" when u < p − h, "2" when u > p + h, else
"tie". So the expected score of x (ties as halves) is exactly p: the
half-wins Bradley-Terry fit of analysis.tournament recovers s (up to a
constant) when position_bias = 0, and asking both orders cancels the bias
to first order otherwise. Every draw is keyed by (seed, x, y, identity):
pure, no state.
"""

from __future__ import annotations

import math
from typing import Literal

import msgspec

from engine.seeding import item_seed

Answer = Literal["1", "2", "tie"]
SCORE_OF_FIRST: dict[str, float] = {"1": 1.0, "tie": 0.5, "2": 0.0}


class SimPairwiseParams(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    seed: int = 0
    strengths: dict[str, float] = {}  # contestant -> log-strength; unknown contestants have 0
    tie_width: float = 0.3  # 0: no ties; 1: ties take the whole band up to min(p, 1 − p)
    position_bias: float = 0.0  # added to the first-shown contestant's log-strength


def first_wins_probability(params: SimPairwiseParams, first: str, second: str) -> float:
    delta = params.strengths.get(first, 0.0) - params.strengths.get(second, 0.0) + params.position_bias
    return 1.0 / (1.0 + math.exp(-delta))


def answer(params: SimPairwiseParams, first: str, second: str, identity: str = "") -> Answer:
    """The judge's answer for one comparison; `identity` keys its draw (the item)."""
    p = first_wins_probability(params, first, second)
    h = params.tie_width * min(p, 1.0 - p)
    u = (item_seed(params.seed, "sim-pairwise", first, second, identity) >> 11) / 2.0**53
    if u < p - h:
        return "1"
    if u > p + h:
        return "2"
    return "tie"
