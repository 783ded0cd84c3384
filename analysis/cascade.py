"""Cascade panels: how many calls the cheap-first rule saved, and what it
cost in agreement with the full panel (every member asked); and, for a
measured cascade, in which cells and blocks its first member was flagged
unreliable (its running CI too wide), recomputed from the rows by the rule
the run decided with (engine.panels.block_flag).

The full panel's value of an item comes from a panel of the same raters
without a cascade in the same run (its rows), else from the members' own
rows aggregated by the panel's rule; items neither covers are not compared.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from analysis.agreement import alpha_ci
from analysis.load import RESULTS_FILE
from analysis.options import AnalysisOptions, RaterRow, rng_for
from engine.contracts import ResultRow
from engine.panels import CascadeSpec, aggregate, block_flag

ITEM_FIELDS = ("needle", "hay", "i", "j", "doc_id", "replicate")


class CascadeRow(RaterRow, frozen=True):
    n: int  # the cascade's experimental rows
    n_settled: int  # rows the first member settled alone
    calls_made: int
    calls_full: int  # had every member been asked for every row
    saved_share: float
    full_from: str  # where the full panel's values come from
    n_compared: int
    alpha: float  # interval alpha, cascade vs full panel
    alpha_low: float
    alpha_high: float
    mean_abs_diff: float


def _item(row: Any) -> tuple:
    return tuple(getattr(row, f) for f in ITEM_FIELDS)


class CascadeCell(msgspec.Struct, frozen=True):
    """One cell of a measured cascade: was its first member flagged unreliable?"""

    judge: str
    needle: str
    hay: str
    i: int
    j: int
    order: str
    control: str
    n: int  # the cell's rows
    escalated: int  # rows that asked every member
    blocks: int  # decision blocks the rows span
    flagged_blocks: int  # blocks where the first member's CI was wider than max_ci_width (the first: no scores yet)
    widest: float  # the widest CI width at a decision after the first block (points)
    last_width: float  # the CI width at the last block's decision


def read_panel_rows(run_dir: Path, judges: set[str], *, experimental: bool = True) -> list[ResultRow]:
    """The rows of these judges (experimental only, by default), with their members and keys
    (results.jsonl; the analysis' columns hold neither). Only runs with a cascade panel read the file twice."""
    decoder = msgspec.json.Decoder(ResultRow)
    out = []
    with (run_dir / RESULTS_FILE).open("rb") as handle:
        for line in handle:
            if line.strip():
                row = decoder.decode(line)
                if row.judge in judges and (not experimental or (row.control == "" and row.order == "12")):
                    out.append(row)
    return out


def cascade_cells(run_dir: Path, manifest: dict[str, Any]) -> list[CascadeCell]:
    """Per cell of each measured cascade, the flags the run decided by."""
    panels = manifest.get("panels")
    if not isinstance(panels, dict):
        return []
    measured = {name: msgspec.convert(spec["cascade"], CascadeSpec) for name, spec in sorted(panels.items())
                if (spec.get("cascade") or {}).get("max_ci_width") is not None}  # fmt: skip
    if not measured:
        return []
    by_cell: dict[tuple, list[ResultRow]] = {}
    for r in read_panel_rows(run_dir, set(measured), experimental=False):
        by_cell.setdefault((r.judge, r.prompt_id, r.needle, r.hay, r.i, r.j, r.replicate, r.order, r.control), []).append(r)
    out = []
    for (judge, _, needle, hay, i, j, _, order, control), rows in sorted(by_cell.items()):
        spec, first = measured[judge], panels[judge]["raters"][0][0]
        scores = {r.doc_index: (r.member_scores[0] if r.members[:1] == (first,) else None) for r in rows}
        starts = sorted({r.doc_index - r.doc_index % spec.block for r in rows})
        flags = [block_flag(spec, scores, start) for start in starts]
        later = [w for _, w in flags[1:] if math.isfinite(w)]
        escalated = sum(len(r.members) > 1 for r in rows)
        out.append(CascadeCell(judge, needle, hay, i, j, order, control, len(rows), escalated, len(flags), sum(f for f, _ in flags),
                               max(later) if later else math.nan, flags[-1][1]))  # fmt: skip
    return out


def _full_values(name: str, panels: dict[str, Any], rows: list[ResultRow]) -> tuple[str, dict[tuple, float]]:
    spec = panels[name]
    for other, other_spec in sorted(panels.items()):
        if other != name and other_spec.get("cascade") is None and other_spec.get("raters") == spec.get("raters") \
                and other_spec.get("rule") == spec.get("rule"):  # fmt: skip
            return f"panel {other}", {_item(r): r.score for r in rows if r.judge == other and r.status == "ok" and r.score is not None}
    raters = [tuple(m) for m in spec.get("raters", [])]
    scores: dict[tuple, dict[tuple, float]] = {}
    for r in rows:
        key = (r.judge, r.prompt_id, r.prompt_version)
        if key in raters and r.status == "ok" and r.score is not None:
            scores.setdefault(_item(r), {})[key] = r.score
    rule = str(spec.get("rule", "mean"))
    values = {item: aggregate(rule, list(by.values())) for item, by in scores.items() if len(by) == len(raters) and rule != "majority"}
    return "the members' own rows", values


def cascade_table(run_dir: Path, manifest: dict[str, Any], options: AnalysisOptions) -> list[CascadeRow]:
    panels = manifest.get("panels")
    if not isinstance(panels, dict):
        return []
    cascades = [name for name, spec in sorted(panels.items()) if spec.get("cascade")]
    if not cascades:
        return []
    members = {m[0] for name in cascades for m in panels[name].get("raters", [])}
    rows = read_panel_rows(run_dir, set(panels) | members)
    out = []
    for name in cascades:
        n_members = len(panels[name].get("raters", []))
        first = panels[name]["raters"][0][0]
        mine = [r for r in rows if r.judge == name]
        if not mine:
            continue
        settled = [r for r in mine if r.status == "ok" and r.members == (first,)]
        per_member = [len(r.cache_keys) for r in settled] or [len(r.cache_keys) / n_members for r in mine]
        calls_per_member = float(np.mean(per_member))
        made = sum(len(r.cache_keys) for r in mine)
        full = int(round(calls_per_member * n_members * len(mine)))
        source, values = _full_values(name, panels, rows)
        pairs = [(r.score, values[_item(r)]) for r in mine if r.status == "ok" and r.score is not None and _item(r) in values]
        data = np.array(pairs, dtype=float).T if pairs else np.zeros((2, 0))
        ci = alpha_ci(data, "interval", rng=rng_for(options, "cascade", name), n_resamples=options.n_bootstrap, confidence=options.confidence)
        diff = float(np.abs(data[0] - data[1]).mean()) if pairs else math.nan
        prompt = (mine[0].prompt_id, mine[0].prompt_version)
        out.append(CascadeRow(name, *prompt, len(mine), len(settled), made, full, 1.0 - made / full if full else math.nan, source,
                              len(pairs), ci.alpha, ci.low, ci.high, diff))  # fmt: skip
    return out
