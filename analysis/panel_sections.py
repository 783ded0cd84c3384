"""The report's section on judge panels and agreement among judges
(docs/panels.md). Kept apart from analysis/sections.py: a panel's own rows
already appear in every other section beside its members; this one adds
what only several judges together have."""

from __future__ import annotations

import math
from typing import Any, Sequence

import msgspec

from analysis import agreement, cascade
from analysis.load import Run
from analysis.options import AnalysisOptions
from analysis.render import Section, TableSpec


class PanelRow(msgspec.Struct, frozen=True):
    judge: str  # the panel
    prompt_id: str
    prompt_version: str
    rule: str
    missing: str  # fail | drop (with the quorum)
    members: str
    n: int  # the panel's experimental rows
    n_ok: int


def panel_table(run: Run) -> list[PanelRow]:
    panels = run.manifest.get("panels")
    if not isinstance(panels, dict):
        return []
    experimental = run.experimental()
    out = []
    for name, spec in sorted(panels.items()):
        missing = spec.get("missing", "fail")
        if missing == "drop":
            missing += f" (quorum {spec.get('quorum') or 2})"
        members = ", ".join(f"{m[0]} ({m[1]})" for m in spec.get("raters", []))
        for (prompt_id, version), mine in experimental.where(judge=name).groups("prompt_id", "prompt_version"):
            out.append(PanelRow(name, prompt_id, version, str(spec.get("rule", "")), missing, members, len(mine), int(mine.mask(status="ok").sum())))
    return out


def _alpha_text(alpha: float, low: float, high: float) -> str:
    if math.isnan(alpha):
        return "α undefined"
    return f"α = {alpha:.3f} [{low:.3f}, {high:.3f}]"


def agreement_section(run: Run, options: AnalysisOptions, pairs: Sequence[agreement.PairAgreementRow] | None = None) -> Section:
    """`pairs`: agreement.pair_agreement of the run, when the caller has it already (computed here otherwise)."""
    scored = run.scored()
    manifest: dict[str, Any] = run.manifest
    if pairs is None:
        pairs = agreement.pair_agreement(scored, manifest, options)
    within = agreement.panel_agreement(scored, manifest, options)
    judged = set(run.rows.unique("judge"))
    without_rows = {name: spec for name, spec in (manifest.get("panels") or {}).items()
                    if not all(m[0] in judged for m in spec.get("raters", []))}  # fmt: skip
    if without_rows:  # members with alone = false: their scores are only in the panel's rows
        rows = cascade.read_panel_rows(run.run_dir, set(without_rows))
        within += agreement.panel_agreement_from_rows(rows, without_rows, options)
    panels = panel_table(run)
    sec = Section(
        title="Judge panels and agreement",
        intro="Krippendorff's alpha between every two judges over the items both scored (interval on 0-100; ordinal "
        "where both use a short integer scale), and among each panel's members, with percentile bootstrap CIs over items. "
        "A panel's own rows appear in every other section beside its members.",
    )
    for p in panels:
        sec.findings.append(f"Panel {p.judge}: {p.rule} of {p.members}; member failures: {p.missing}; {p.n_ok} of {p.n} experimental rows scored.")
    for w in within:
        sec.findings.append(f"Panel {w.judge}, agreement among its members ({w.level}, n={w.n} items): "
                            f"{_alpha_text(w.alpha, w.alpha_low, w.alpha_high)}; {agreement.alpha_sentence(w.alpha).replace('the two', 'its members')}")  # fmt: skip
    if pairs:
        worst = min(pairs, key=lambda r: (math.isnan(r.alpha), r.alpha))
        sec.findings.append(f"Least agreeing pair: {worst.judge_a} and {worst.judge_b} (n={worst.n}): "
                            f"{_alpha_text(worst.alpha, worst.alpha_low, worst.alpha_high)}; {agreement.alpha_sentence(worst.alpha)}")  # fmt: skip
    cascades = cascade.cascade_table(run.run_dir, manifest, options)
    for c in cascades:
        sec.findings.append(f"Cascade {c.judge}: the first member settled {c.n_settled} of {c.n} items alone; {c.calls_made:,} calls made "
                            f"of {c.calls_full:,} for the full panel ({c.saved_share:.0%} saved). Against the full panel ({c.full_from}, "
                            f"n={c.n_compared} items): {_alpha_text(c.alpha, c.alpha_low, c.alpha_high)}, mean |diff| {c.mean_abs_diff:.2f} points.")  # fmt: skip
    flags = cascade.cascade_cells(run.run_dir, manifest)
    for name in sorted({c.judge for c in flags}):
        mine = [c for c in flags if c.judge == name]
        noisy = [f"{c.needle}/{c.hay}/({c.i},{c.j})" + (f" {c.control or 'order ' + c.order}" if c.control or c.order != "12" else "")
                 for c in mine if c.flagged_blocks > 1]  # fmt: skip
        sec.findings.append(f"Cascade {name}: its first member's running CI was too wide (every member asked) after the first block in "
                            f"{len(noisy)} of {len(mine)} cells" + (f": {', '.join(noisy[:8])}" + (" ..." if len(noisy) > 8 else "") if noisy else "")
                            + "; the first block of every cell asks every member (no scores yet).")  # fmt: skip
    if cascades:
        sec.tables.append(TableSpec("panel_cascades", "Cascades: calls saved and agreement with the full panel",
                                    "calls_full: every member asked for every item.", cascade.CascadeRow, cascades))  # fmt: skip
    if flags:
        sec.tables.append(TableSpec("panel_cascade_flags", "Cascades: where the first member was flagged unreliable",
                                    "Per cell, blocks whose items asked every member because the first member's CI (over the cell's earlier "
                                    "blocks) was wider than max_ci_width; widths in points.", cascade.CascadeCell, flags))  # fmt: skip
    if panels:
        sec.tables.append(TableSpec("panels", "Panels", "Each panel's rule, members (with the prompt each answered) and rows.", PanelRow, panels))
    if within:
        sec.tables.append(TableSpec("panel_agreement", "Agreement within each panel",
                                    "Among the members' own scores of the items the panel judged.", agreement.PanelAgreementRow, within))  # fmt: skip
    sec.tables.append(TableSpec("judge_agreement_ci", "Agreement between every two judges",
                                "Krippendorff's α over the items both scored: 1 is perfect agreement, 0 is what unrelated scores "
                                "would give, below 0 systematic disagreement; mean |diff| on 0-100.", agreement.PairAgreementRow, pairs))  # fmt: skip
    return sec
