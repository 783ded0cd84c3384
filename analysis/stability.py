"""Score stability: at position (0, 0) the document is the needle sentence
alone, so orig and rand hay put the same pair of sentences before the judge.

Whether the two requests are byte-identical depends on the rest of the
prompt: per-item metadata (a judge option) makes them differ. The check
says which it compared, from the requests' cache keys: identical requests
scored differently mean a nondeterministic judge; differing requests that
score differently may be reacting to what differs.
"""

from __future__ import annotations

import math

import numpy as np

from analysis.load import Table
from analysis.options import GROUP_KEYS, AnalysisOptions, RaterRow


class StabilityRow(RaterRow, frozen=True):
    needle: str
    n_pairs: int  # documents scored at (0, 0) under both orig and rand
    n_identical_requests: int  # pairs whose two requests had the same cache key (byte-identical)
    n_known_requests: int  # pairs whose two requests both carry a cache key
    exact_agreement: float
    mean_abs_diff: float
    max_abs_diff: float


def score_stability(scored: Table, options: AnalysisOptions) -> list[StabilityRow]:
    """Exact-agreement rate and mean absolute difference between the orig
    and rand scores of the same (document, replicate) at (0, 0), for the
    deterministic needles in options.stability_needles, with how many of
    the compared request pairs were byte-identical.
    """
    rows = []
    origin = scored.select((scored["i"] == 0) & (scored["j"] == 0) & scored.mask(needle=options.stability_needles))
    for key, t in origin.groups(*GROUP_KEYS, "needle"):
        by_hay: dict[str, dict[tuple[str, int], tuple[float, int]]] = {"orig": {}, "rand": {}}
        columns = (t["hay"].tolist(), t["doc_id"].tolist(), t["replicate"].tolist(), t["score"].tolist(), t["request"].tolist())
        for hay, doc, rep, s, request in zip(*columns):
            if hay in by_hay:
                by_hay[hay][(doc, rep)] = (s, request)
        common = sorted(by_hay["orig"].keys() & by_hay["rand"].keys())
        if not common:
            continue
        pairs = [(by_hay["orig"][c], by_hay["rand"][c]) for c in common]
        diff = np.abs(np.array([a[0] - b[0] for a, b in pairs]))
        known = [(a[1], b[1]) for a, b in pairs if a[1] and b[1]]
        rows.append(
            StabilityRow(
                *key, n_pairs=len(common), n_identical_requests=sum(a == b for a, b in known), n_known_requests=len(known),
                exact_agreement=float(np.mean(diff == 0)), mean_abs_diff=float(diff.mean()),
                max_abs_diff=float(diff.max()) if diff.size else math.nan,
            )  # fmt: skip
        )
    return rows


def comparison_sentence(row: StabilityRow) -> str:
    """What the agreement of one row rests on, in one sentence."""
    if row.n_known_requests == 0:
        return "the requests carry no cache keys, so whether the inputs were byte-identical is unknown"
    if row.n_identical_requests == row.n_known_requests:
        return f"all {row.n_known_requests} request pairs were byte-identical, so any disagreement is the judge's own nondeterminism"
    if row.n_identical_requests == 0:
        return (
            f"none of the {row.n_known_requests} request pairs were byte-identical (same sentences, different prompt "
            "text, e.g. per-item metadata), so disagreement mixes nondeterminism with reactions to what differs"
        )
    return (
        f"{row.n_identical_requests} of {row.n_known_requests} request pairs were byte-identical; "
        "the others differ in prompt text beyond the sentences"
    )
