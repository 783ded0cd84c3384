"""Which items people label: a stratified random sample of a finished run.

Strata are (needle, hay) x whether the judges disagree on the item (their
scores span at least `DISAGREE_POINTS`); every item a judge scored
differently in the two document orders (a swap-test disagreement, at least
`SWAP_POINTS` apart) is included whole, as the judge-validation literature
advises. The rest of the sample is split evenly over the strata and drawn
uniformly inside each, so every item carries its inclusion probability, which
the prediction-powered estimates weight by (analysis/ppi.py). The first
`overlap` items of the (seeded) order are shown to every labeller: the
people-people ceiling is measured on them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from engine.seeding import item_rng

DISAGREE_POINTS = 20.0
SWAP_POINTS = 10.0
ItemKey = tuple[str, str, str, int, int, int]  # doc_id, needle, hay, i, j, replicate


class LabelItem(msgspec.Struct, frozen=True, kw_only=True):
    doc_id: str
    needle: str
    hay: str
    i: int
    j: int
    replicate: int = 0
    stratum: str  # "needle/hay/agree|disagree", or "swap" for a swap-test disagreement
    inclusion: float  # the probability the item was drawn
    overlap: bool  # shown to every labeller

    @property
    def key(self) -> ItemKey:
        return (self.doc_id, self.needle, self.hay, self.i, self.j, self.replicate)

    @property
    def item_id(self) -> str:
        return "|".join(map(str, self.key))


def _key(row: Mapping[str, Any]) -> ItemKey:
    return (str(row["doc_id"]), str(row["needle"]), str(row["hay"]), int(row["i"]), int(row["j"]), int(row.get("replicate", 0)))


def draw_sample(rows: Iterable[Mapping[str, Any]], *, size: int, overlap: int, seed: int) -> list[LabelItem]:
    """`size` items (fewer when the run has fewer) from the scored needle/hay
    items of `rows` (results.jsonl records); controls and failures are skipped."""
    if size < 1 or not 0 <= overlap <= size:
        raise ValueError(f"sample size {size} and overlap {overlap}: expected size >= 1 and 0 <= overlap <= size")
    scores: dict[ItemKey, list[float]] = defaultdict(list)
    by_order: dict[tuple[ItemKey, str, str], dict[str, float]] = defaultdict(dict)
    for row in rows:
        if row.get("control") or row.get("status") != "ok" or row.get("score") is None:
            continue
        key = _key(row)
        order = str(row.get("order", "12"))
        by_order[(key, str(row["judge"]), str(row.get("prompt_id", "")))][order] = float(row["score"])
        if order == "12":
            scores[key].append(float(row["score"]))
    swapped = {key for (key, _, _), s in by_order.items() if len(s) == 2 and abs(s["12"] - s["21"]) >= SWAP_POINTS}
    strata: dict[str, list[ItemKey]] = defaultdict(list)
    for key in sorted(scores):
        if key in swapped:
            continue
        spread = max(scores[key]) - min(scores[key])
        strata[f"{key[1]}/{key[2]}/{'disagree' if spread >= DISAGREE_POINTS else 'agree'}"].append(key)
    chosen: list[tuple[ItemKey, str, float]] = [(key, "swap", 1.0) for key in sorted(swapped & scores.keys())][:size]
    left = size - len(chosen)
    names = sorted(strata)
    # even split; what a small stratum cannot take goes to the others
    quota = dict.fromkeys(names, 0)
    open_names = [n for n in names if strata[n]]
    while left > 0 and open_names:
        for name in list(open_names):
            if left == 0:
                break
            if quota[name] < len(strata[name]):
                quota[name] += 1
                left -= 1
            else:
                open_names.remove(name)
    for name in names:
        population = strata[name]
        if quota[name] == 0:
            continue
        picks = item_rng(seed, "label-sample", name).choice(len(population), quota[name], replace=False)
        chosen += [(population[p], name, quota[name] / len(population)) for p in sorted(picks)]
    order = item_rng(seed, "label-order").permutation(len(chosen))
    return [
        LabelItem(doc_id=key[0], needle=key[1], hay=key[2], i=key[3], j=key[4], replicate=key[5],
                  stratum=stratum, inclusion=inclusion, overlap=rank < overlap)
        for rank, (key, stratum, inclusion) in enumerate(chosen[n] for n in order)
    ]
