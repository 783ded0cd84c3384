"""Scoring fingerprint: where on the scale a judge puts its scores.

LLM judges cluster on round numbers and on the band boundaries a rubric
names; a judge whose scores sit on two adjacent levels cannot resolve the
differences the experiment measures.
"""

from __future__ import annotations

from typing import Any

import msgspec
import numpy as np

from analysis.load import Table
from analysis.options import GROUP_KEYS, RaterRow

QUARTILE_BOUNDARIES = (0.0, 25.0, 50.0, 75.0, 100.0)
STS_BOUNDARIES = (0.0, 20.0, 40.0, 60.0, 80.0, 100.0)  # the six 0–5 STS levels on 0–100


def band_boundaries(prompt_id: str, manifest: dict[str, Any]) -> tuple[float, ...]:
    """A prompt's rubric band boundaries on 0–100: from the manifest's prompt
    entry (`band_boundaries` or `boundaries`) when it declares them, else
    the STS levels for an `sts` prompt and the quartiles otherwise.
    """
    prompts = manifest.get("prompts")
    entries = prompts.values() if isinstance(prompts, dict) else prompts if isinstance(prompts, list) else []
    for entry in entries:
        if isinstance(entry, dict) and entry.get("id") == prompt_id:
            for name in ("band_boundaries", "boundaries"):
                if isinstance(entry.get(name), list) and entry[name]:
                    return tuple(float(v) for v in entry[name])
    return STS_BOUNDARIES if prompt_id.startswith("sts") else QUARTILE_BOUNDARIES


class AdjacentLevels(msgspec.Struct, frozen=True):
    share: float  # share of scores on the two adjacent levels holding the most
    low: float
    high: float


def adjacent_levels_share(scores: np.ndarray) -> AdjacentLevels:
    """The largest share of scores on two adjacent distinct levels (one
    level only → share 1 on that level)."""
    levels, counts = np.unique(np.asarray(scores, dtype=float), return_counts=True)
    if levels.size == 0:
        return AdjacentLevels(float("nan"), float("nan"), float("nan"))
    if levels.size == 1:
        return AdjacentLevels(1.0, float(levels[0]), float(levels[0]))
    pair = counts[:-1] + counts[1:]
    best = int(np.argmax(pair))
    return AdjacentLevels(float(pair[best] / counts.sum()), float(levels[best]), float(levels[best + 1]))


class FingerprintRow(RaterRow, frozen=True):
    n: int
    distinct_levels: int
    boundaries: str
    share_on_boundaries: float
    share_multiple_of_10: float
    share_multiple_of_5: float
    top_levels: str  # the three most frequent scores (5-point bins for continuous scores) with their shares
    adjacent_share: float  # resolution: share on the two adjacent levels holding the most
    adjacent_low: float
    adjacent_high: float


def scoring_fingerprint(scored: Table, manifest: dict[str, Any]) -> list[FingerprintRow]:
    rows = []
    for key, t in scored.groups(*GROUP_KEYS):
        s = t["score"]
        bounds = band_boundaries(key[1], manifest)
        levels = np.unique(s)
        adj = adjacent_levels_share(s)
        rows.append(
            FingerprintRow(
                *key, n=int(s.size), distinct_levels=int(levels.size),
                boundaries=" ".join(f"{b:g}" for b in bounds),
                share_on_boundaries=float(np.isin(s, bounds).mean()),
                share_multiple_of_10=float(np.mean(s % 10 == 0)),
                share_multiple_of_5=float(np.mean(s % 5 == 0)),
                top_levels=most_frequent(s),
                adjacent_share=adj.share, adjacent_low=adj.low, adjacent_high=adj.high,
            )  # fmt: skip
        )
    return rows


CONTINUOUS_BIN = 5.0  # points per bin when scores are not on integer levels


def _share(part: int, whole: int) -> str:
    share = part / whole
    return f"{share:.0%}" if share >= 0.01 else f"{share:.1%}"


def most_frequent(scores: np.ndarray, top: int = 3) -> str:
    """The most frequent score levels with their shares. Scores off the
    integer levels are continuous: their most frequent 5-point bins are
    named instead; integer scores of which none repeats say so."""
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        return "–"
    if np.all(s == np.round(s)):
        levels, counts = np.unique(s, return_counts=True)
        if counts.max() == 1:
            return "no repeated value"
        best = [x for x in np.argsort(-counts, kind="stable")[:top] if counts[x] > 1]
        return ", ".join(f"{levels[x]:g} ({_share(int(counts[x]), s.size)})" for x in best)
    edges = np.arange(0.0, 100.0 + CONTINUOUS_BIN, CONTINUOUS_BIN)
    counts, _ = np.histogram(s, bins=edges)
    best = [x for x in np.argsort(-counts, kind="stable")[:top] if counts[x] > 0]
    return "5-point bins " + ", ".join(f"{edges[x]:g}–{edges[x + 1]:g} ({_share(int(counts[x]), s.size)})" for x in best)


def score_histogram(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts per integer score level 0..100 (bin edges 0, 1, …, 101)."""
    return np.histogram(np.asarray(scores, dtype=float), bins=np.arange(0, 102))
