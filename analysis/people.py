"""What the report says of the judges against people (`report --labels`):
agreement with the labels and the people-people ceiling, the judge cards,
and the prediction-powered means beside the judge-only ones.

Pure functions from the scored rows and the labels Table (analysis.load.
load_labels) to rows of small Structs; the statistics are analysis.human and
analysis.ppi.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from typing import Any

import msgspec
import numpy as np

from analysis.checks import ITEM_KEYS
from analysis.human import alpha, binary_agreement, weighted_kappa
from analysis.load import Table
from analysis.options import GROUP_KEYS, RaterRow
from analysis.ppi import MeanEstimate, contrast, ppi_mean

PASS_THRESHOLD = 50.0  # a score at or above it "passes" (the pair reads as the same)
MIN_LABELS = 10  # fewer labels in a group give no PPI estimate


class PeopleAgreementRow(RaterRow, frozen=True):
    n: int
    kappa_quadratic: float
    kappa_low: float
    kappa_high: float
    alpha_interval: float
    alpha_low: float
    alpha_high: float
    alpha_ordinal: float
    both_fail: int
    false_pass: int  # people fail, the judge passes
    false_fail: int
    both_pass: int
    false_pass_rate: float


class CeilingRow(msgspec.Struct, frozen=True):
    labeller_a: str
    labeller_b: str
    n: int  # overlap items both labelled
    alpha_interval: float
    alpha_low: float
    alpha_high: float
    kappa_quadratic: float


class PpiRow(RaterRow, frozen=True):
    quantity: str  # "mean neg/orig", or a contrast "neg - none (orig)", "early - late (neg)"
    judge_only: float
    judge_low: float
    judge_high: float
    ppi: float
    ppi_low: float
    ppi_high: float
    n_labelled: int
    n_items: int
    conclusion_changed: bool


class JudgeCard(msgspec.Struct, frozen=True, kw_only=True):
    judge: str
    model: str
    model_version: str
    prompt_id: str
    prompt_version: str
    scale: str
    agreement_alpha_interval: float | None
    agreement_alpha_ci: tuple[float, float] | None
    agreement_kappa_quadratic: float | None
    false_pass_rate: float | None
    n_labels: int
    people_ceiling_alpha: float | None
    labels_simulated: bool
    measured_on: str  # the date of the latest label
    instrument_flags: tuple[str, ...]


def _item_keys(table: Table) -> list[tuple]:
    return list(zip(*(table[k].tolist() for k in ITEM_KEYS)))


def consensus(labels: Table) -> dict[tuple, float]:
    """Each labelled item's label, averaged over the people who gave one."""
    sums: dict[tuple, list[float]] = defaultdict(list)
    for key, value in zip(_item_keys(labels), labels["label"].tolist()):
        sums[key].append(value)
    return {key: float(np.mean(values)) for key, values in sums.items()}


def inclusion_of(labels: Table) -> dict[tuple, float]:
    column = labels["inclusion"].tolist() if "inclusion" in labels else [1.0] * len(labels)
    return dict(zip(_item_keys(labels), column))


def agreement_rows(scored: Table, labels: Table, *, seed: int = 0) -> list[PeopleAgreementRow]:
    human = consensus(labels)
    out = []
    for key, t in scored.groups(*GROUP_KEYS):
        pairs = [(s, human[k]) for k, s in zip(_item_keys(t), t["score"].tolist()) if k in human]
        if len(pairs) < 2:
            continue
        judge = np.array([p[0] for p in pairs])
        people = np.array([p[1] for p in pairs])
        kappa = weighted_kappa(judge, people, weights="quadratic", seed=seed)
        interval = alpha(judge, people, level="interval", seed=seed)
        ordinal = alpha(judge, people, level="ordinal", seed=seed)
        binary = binary_agreement(judge, people, threshold=PASS_THRESHOLD)
        (tn, fp), (fn, tp) = binary.matrix
        out.append(PeopleAgreementRow(
            *key, n=len(pairs), kappa_quadratic=kappa.value, kappa_low=kappa.low, kappa_high=kappa.high,
            alpha_interval=interval.value, alpha_low=interval.low, alpha_high=interval.high, alpha_ordinal=ordinal.value,
            both_fail=tn, false_pass=fp, false_fail=fn, both_pass=tp, false_pass_rate=binary.false_pass_rate,
        ))  # fmt: skip
    return out


def ceiling_rows(labels: Table, *, seed: int = 0) -> list[CeilingRow]:
    """People against people on the items two of them both labelled."""
    if "labeller" not in labels:
        return []
    by_person: dict[str, dict[tuple, float]] = defaultdict(dict)
    for key, who, value in zip(_item_keys(labels), labels["labeller"].tolist(), labels["label"].tolist()):
        by_person[who][key] = value
    out = []
    for a, b in combinations(sorted(by_person), 2):
        shared = sorted(set(by_person[a]) & set(by_person[b]))
        if len(shared) < 2:
            continue
        first = np.array([by_person[a][k] for k in shared])
        second = np.array([by_person[b][k] for k in shared])
        interval = alpha(first, second, seed=seed)
        kappa = weighted_kappa(first, second, weights="quadratic", levels=np.unique(np.concatenate([first, second])), seed=seed)
        out.append(CeilingRow(a, b, len(shared), interval.value, interval.low, interval.high, kappa.value))
    return out


def _row(key: tuple, quantity: str, est: Any, n_labelled: int, n_items: int, changed: bool) -> PpiRow:
    return PpiRow(*key, quantity=quantity, judge_only=est.judge_only, judge_low=est.judge_low, judge_high=est.judge_high,
                  ppi=est.ppi, ppi_low=est.ppi_low, ppi_high=est.ppi_high, n_labelled=n_labelled, n_items=n_items,
                  conclusion_changed=changed)  # fmt: skip


def ppi_rows(scored: Table, labels: Table) -> list[PpiRow]:
    """Per judge x prompt: the mean of every needle x hay group, and the
    contrasts the paper reads (each needle against none, per hay; a needle
    early in the document against late), judge-only and prediction-powered."""
    human, inclusion = consensus(labels), inclusion_of(labels)
    out: list[PpiRow] = []
    for key, t in scored.groups(*GROUP_KEYS):
        means: dict[tuple[str, str], MeanEstimate] = {}
        halves: dict[tuple[str, str], MeanEstimate] = {}
        keys, scores = _item_keys(t), t["score"]
        needle, hay, i, j = (t[name] for name in ("needle", "hay", "i", "j"))
        groups: dict[tuple[str, str], np.ndarray] = {}
        for n in np.unique(needle):
            for h in np.unique(hay):
                groups[("mean", f"{n}/{h}")] = (needle == n) & (hay == h)
            groups[("early", n)] = (needle == n) & (i < j)
            groups[("late", n)] = (needle == n) & (i > j)
        for (kind, name), mask in groups.items():
            rows = np.flatnonzero(mask)
            labelled = [r for r in rows if keys[r] in human]
            if len(labelled) < MIN_LABELS or rows.size < 2:
                continue
            est = ppi_mean(np.array([human[keys[r]] for r in labelled]), scores[labelled], scores[rows],
                           inclusion=np.array([inclusion[keys[r]] for r in labelled]))
            (means if kind == "mean" else halves)[(kind, name)] = est
            if kind == "mean":
                out.append(_row(key, f"mean {name}", est, len(labelled), int(rows.size), False))
        for (_, name), est in sorted(means.items()):
            n, h = name.split("/")
            base = means.get(("mean", f"none/{h}"))
            if n != "none" and base is not None:
                diff = contrast(est, base)
                out.append(_row(key, f"{n} - none ({h})", diff, est.n_labelled + base.n_labelled, est.n_items + base.n_items, diff.conclusion_changed()))
        for n in sorted({name for _, name in halves}):
            early, late = halves.get(("early", n)), halves.get(("late", n))
            if early is not None and late is not None:
                diff = contrast(early, late)
                out.append(_row(key, f"early - late ({n})", diff, early.n_labelled + late.n_labelled, early.n_items + late.n_items, diff.conclusion_changed()))
    return out


def judge_cards(scored: Table, labels: Table | None, agreement: list[PeopleAgreementRow],
                ceiling: list[CeilingRow], manifest: dict[str, Any], flags: list[str]) -> list[JudgeCard]:
    scales = {p.get("id"): p.get("scale", "") for p in (manifest.get("prompts") or {}).values()}
    declared = {j.get("name"): j for j in (manifest.get("config") or {}).get("judges", [])}
    by_rater = {(r.judge, r.prompt_id, r.prompt_version): r for r in agreement}
    best_ceiling = max((c.alpha_interval for c in ceiling if not math.isnan(c.alpha_interval)), default=None)
    simulated = bool(labels is not None and "simulated" in labels and labels["simulated"].any())
    measured = ""
    times = labels["at"][~np.isnan(labels["at"])] if labels is not None and "at" in labels else np.array([])
    if times.size:
        import datetime as dt

        measured = dt.datetime.fromtimestamp(float(times.max()), dt.timezone.utc).date().isoformat()
    cards = []
    for key, t in scored.groups(*GROUP_KEYS):
        judge, prompt_id, prompt_version = key
        model = str(declared.get(judge, {}).get("model", ""))
        version = str(declared.get(judge, {}).get("revision", "")) or "(none pinned)"
        a = by_rater.get(key)
        tag = f"{judge} ({prompt_id}@{prompt_version})"
        cards.append(JudgeCard(
            judge=judge, model=model, model_version=version, prompt_id=prompt_id, prompt_version=prompt_version,
            scale=str(scales.get(prompt_id, "0-100") or "0-100"),
            agreement_alpha_interval=None if a is None else a.alpha_interval,
            agreement_alpha_ci=None if a is None else (a.alpha_low, a.alpha_high),
            agreement_kappa_quadratic=None if a is None else a.kappa_quadratic,
            false_pass_rate=None if a is None else a.false_pass_rate, n_labels=0 if a is None else a.n,
            people_ceiling_alpha=best_ceiling, labels_simulated=simulated, measured_on=measured,
            instrument_flags=tuple(f for f in flags if tag in f),
        ))  # fmt: skip
    return cards
