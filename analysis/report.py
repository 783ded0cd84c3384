"""The report of one run: a self-contained HTML page (figures embedded as
PNG), the figures as files, every table as CSV, and a Markdown summary.

Instrument checks come first. Every table row names its judge, prompt id
and version and its sample size; every sentence of the summary does too.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from analysis import checks, figures, fingerprint, hay, length, needles, positionality, prompts, stability
from analysis.load import Run, Table, load_labels, load_run
from analysis.options import GROUP_KEYS, AnalysisOptions

HTML_NAME = "report.html"
MARKDOWN_NAME = "summary.md"
FIGURES_DIR = "figures"
TABLES_DIR = "tables"
INLINE_ROW_LIMIT = 40  # longer tables are folded in the HTML (the CSV has them all)


class ReportPaths(NamedTuple):
    out_dir: Path
    html: Path
    markdown: Path
    figures_dir: Path
    tables_dir: Path
    tables: tuple[Path, ...]
    figures: tuple[Path, ...]


@dataclass
class TableSpec:
    name: str  # CSV file stem
    title: str
    note: str
    row_type: type
    rows: Sequence[NamedTuple]


@dataclass
class FigureSpec:
    name: str
    caption: str
    png: bytes


@dataclass
class Section:
    title: str
    intro: str
    tables: list[TableSpec] = field(default_factory=list)
    figures: list[FigureSpec] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # sentences for the Markdown summary


def _fmt(value: Any) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if value != 0 and abs(value) < 1e-3:
            return f"{value:.1e}"
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.2f}"
    return str(value)


def _rater(row: Any) -> str:
    return f"{row.judge} ({row.prompt_id}@{row.prompt_version})"


def _ci(est: float, low: float, high: float, confidence: float) -> str:
    return f"{est:+.2f} [{low:+.2f}, {high:+.2f}] ({confidence:.0%} CI)"


# ---------------------------------------------------------------------------
# Sections


def _checks_section(run: Run, options: AnalysisOptions, labels: Table | None) -> Section:
    rows = run.rows
    scored = run.scored()
    oracle = checks.oracle_pass_rates(rows, options)
    failures = checks.failure_rates(rows, options)
    swaps = checks.order_swap_symmetry(rows, options)
    nulls, negatives = checks.control_checks(rows, options)
    res = checks.resolution(scored, options)
    sec = Section(
        "Instrument checks",
        "Read these before any statistic. A flagged judge or condition is not fit for analysis as it stands.",
    )
    verdicts = checks.judge_verdicts(rows, failures, swaps, nulls, negatives, res)
    for v in verdicts:
        if v.fit:
            sec.findings.append(f"{_rater(v)}: passes every instrument check run here (n={v.n}).")
        else:
            sec.findings.append(f"FLAG: {_rater(v)} is not fit for analysis as it stands: {v.reasons} (n={v.n}).")
    sec.tables += [
        TableSpec("check_verdicts", "Verdict per judge", "A judge is fit when no instrument check below flags it.",
                  checks.JudgeVerdict, verdicts),  # fmt: skip
        TableSpec("check_oracle", "Item-oracle pass rate", "Per needle × hay over distinct (document, position) pairs; "
                  "judge-independent (the pairs every judge saw).", checks.OracleRow, oracle),  # fmt: skip
        TableSpec("check_failures", "Failures and output length per condition",
                  f"Conditions with failure rate > {options.thresholds.max_failure_rate:.0%} are not fit for analysis.",
                  checks.FailureRow, failures),  # fmt: skip
        TableSpec("check_order_swap", "Order-swap symmetry", "Same pair with Document 1 and 2 swapped; diff = score(21) − score(12). "
                  f"Flagged: a shift whose CI excludes 0 and exceeds {options.thresholds.order_swap_shift_tolerance:g} points, "
                  f"or a mean |diff| more than {options.thresholds.order_swap_tolerance:g} points above the retest noise "
                  "(replicates of the same items; without replicates only the shift is judged).",
                  checks.OrderSwapRow, swaps),  # fmt: skip
        TableSpec("check_null_edit", "Null-edit control", "Whitespace / line-break / formatting-only edits should score like identical text.",
                  checks.NullEditRow, nulls),  # fmt: skip
        TableSpec("check_negative", "Negative control", "Two unrelated documents of the same length must land at the bottom of the scale.",
                  checks.NegativeRow, negatives),  # fmt: skip
        TableSpec("check_resolution", "Resolution", "Share of scores on the two adjacent levels holding the most.",
                  checks.ResolutionRow, res),  # fmt: skip
    ]
    counts = checks.manifest_oracle_counts(run.manifest)
    if counts:
        sec.findings.append("Pair generation recorded oracle counts: " + ", ".join(f"{k} = {v}" for k, v in counts.items()) + ".")
    for r in oracle:
        if r.flagged:
            sec.findings.append(f"FLAG: item oracle passed for only {r.pass_rate:.1%} of {r.needle}/{r.hay} pairs (n={r.n_pairs}).")
    for r in failures:
        if not r.fit_for_analysis:
            sec.findings.append(
                f"FLAG: {_rater(r)} {r.needle}/{r.hay} control={r.control or 'none'} order={r.order}: failure rate "
                f"{r.failure_rate:.1%} (refused {r.refused_rate:.1%}, unparseable {r.unparseable_rate:.1%}, "
                f"error {r.error_rate:.1%}; n={r.n}) — not fit for analysis."
            )
    for r in swaps:
        sec.findings.append(
            f"{'FLAG: ' if r.flagged else ''}{_rater(r)} order swap: mean |diff| {r.mean_abs_diff:.2f} "
            + (f"against retest noise {r.retest_abs_diff:.2f} (n={r.n_retest_pairs}), " if r.n_retest_pairs
               else "(no replicates to tell it from noise), ")
            + f"signed {_ci(r.mean_signed_diff, r.low, r.high, r.confidence)}, n={r.n_pairs} pairs."
        )
    for r in nulls:
        sec.findings.append(
            f"{'FLAG: ' if r.flagged else ''}{_rater(r)} null edits score {r.mean:.1f} vs identical text "
            f"{r.mean_identical:.1f} (gap {r.gap:+.1f}; n={r.n}, n_identical={r.n_identical})."
        )
    for r in negatives:
        sec.findings.append(
            f"{'FLAG: ' if r.flagged else ''}{_rater(r)} negative controls: mean {r.mean:.1f}, "
            f"{r.share_at_bottom:.0%} at or below {r.ceiling:g} (n={r.n})."
        )
    for r in res:
        if r.flagged:
            sec.findings.append(
                f"FLAG: {_rater(r)} puts {r.adjacent_share:.0%} of scores on {r.level_low:g} and {r.level_high:g} (n={r.n}): too coarse."
            )
    if labels is not None:
        human = checks.human_agreement(scored, labels)
        sec.tables.append(TableSpec("check_human_agreement", "Agreement with human labels",
                                    "Cohen's κ (linear weights, explicit label set) and Krippendorff's α.", checks.HumanAgreementRow, human))  # fmt: skip
        for r in human:
            sec.findings.append(
                f"{_rater(r)} vs human labels: κ_linear {r.kappa_linear:.3f}, α_interval {r.alpha_interval:.3f}, n={r.n}."
            )
    between = checks.judge_agreement(scored)
    sec.tables.append(TableSpec("check_judge_agreement", "Agreement between judges",
                                "Krippendorff's α (interval) over the items both raters scored.", checks.JudgeAgreementRow, between))  # fmt: skip
    return sec


def _positionality_section(scored: Table, options: AnalysisOptions, make_figures: bool) -> Section:
    pos = positionality.positionality(scored, options)
    emd = positionality.mirror_cell_emd(scored, options)
    sec = Section(
        "Positionality",
        "KS test needles in the first half (i < j) vs the second half (i > j), Holm-corrected over all tests of the run. "
        "Early-positionality bias = mean(second half) − mean(first half): positive means early needles lower the score "
        "more. EMD between each cell (i, j) and its mirror (j, i) against a label-permutation null "
        f"({options.n_permutations} permutations).",
    )
    sec.tables.append(TableSpec("positionality", "First vs second half", "", positionality.PositionalityRow, pos))
    exceeding = [r for r in emd if r.exceeds]
    sec.tables.append(TableSpec("positionality_emd_exceeding", "Cells whose EMD exceeds the permutation null (95th percentile)",
                                "All cells are in positionality_emd_cells.csv.", positionality.CellEmdRow, exceeding))  # fmt: skip
    sec.tables.append(TableSpec("positionality_emd_cells", "EMD per mirror cell pair", "", positionality.CellEmdRow, emd))
    for r in pos:
        verdict = "significant after Holm" if r.significant else "not significant after Holm"
        sec.findings.append(
            f"{_rater(r)} {r.needle}/{r.hay}: early-positionality bias {_ci(r.bias, r.bias_low, r.bias_high, r.confidence)}, "
            f"KS D={r.ks_statistic:.3f}, p_Holm={_fmt(r.p_holm)} — {verdict} (n={r.n_first}+{r.n_second})."
        )
    for key, cells in _group_rows(emd, 3).items():
        hits = sum(r.exceeds for r in cells)
        n_rows = sum(r.n_ij + r.n_ji for r in cells)
        sec.findings.append(
            f"{key[0]} ({key[1]}@{key[2]}): {hits} of {len(cells)} mirror cell pairs exceed the 95th percentile of their "
            f"EMD permutation null ({sum(r.p_holm <= options.alpha for r in cells)} after Holm within each grid; n={n_rows})."
        )
    if make_figures and pos:
        sec.figures.append(FigureSpec("positionality_bias", "Early-positionality bias per condition", figures.figure_bytes(figures.bias_figure(pos))))
    if make_figures:
        by_grid: dict[tuple, list] = {}
        for r in emd:
            by_grid.setdefault(tuple(r[:5]), []).append(r)
        for grid in positionality.position_grids(scored):
            name = "position_" + "_".join(_slug(v) for v in grid.key)
            fig = figures.position_figure(grid, by_grid.get(grid.key, []), kde_points=options.kde_points)
            sec.figures.append(FigureSpec(name, "Position grid " + " · ".join(grid.key), figures.figure_bytes(fig)))
    return sec


def _length_section(scored: Table, make_figures: bool) -> Section:
    rows, summaries = length.length_profile(scored)
    sec = Section("Document length", "Mean and sd of scores by k = i + j + 1 against the 100·(k−1)/k sentence-overlap reference.")
    sec.tables.append(TableSpec("length_summary", "Share of lengths above the reference", "", length.LengthSummary, summaries))
    sec.tables.append(TableSpec("length_by_k", "Scores by length", "", length.LengthRow, rows))
    for s in summaries:
        if s.needle == length.POOLED:
            sec.findings.append(
                f"{_rater(s)} hay {s.hay}: mean score above 100·(k−1)/k at {s.share_above:.0%} of {s.n_lengths} lengths (n={s.n})."
            )
    if make_figures:
        for key, group in _group_rows(rows, 3).items():
            sec.figures.append(FigureSpec("length_" + "_".join(_slug(v) for v in key), "Length " + " · ".join(key),
                                          figures.figure_bytes(figures.length_figure(group))))  # fmt: skip
    return sec


def _needle_section(scored: Table, options: AnalysisOptions, make_figures: bool) -> Section:
    means, orderings, pairs, gaps = needles.needle_comparison(scored, options)
    sec = Section("Needle type", "Mean score per needle type, pairwise two-sample KS tests (Bonferroni within judge × prompt × hay) "
                  "and the con − neg gap.")  # fmt: skip
    sec.tables += [
        TableSpec("needle_ordering", "Ordering of mean scores", "", needles.NeedleOrdering, orderings),
        TableSpec("needle_means", "Mean score per needle", "", needles.NeedleMean, means),
        TableSpec("needle_pairs_ks", "Pairwise KS tests", "", needles.NeedlePairKs, pairs),
        TableSpec("needle_con_neg_gap", "con − neg gap", "", needles.ConNegGap, gaps),
    ]
    for o in orderings:
        sec.findings.append(f"{_rater(o)} hay {o.hay}: {o.ordering} (n={o.n}).")
    for g in gaps:
        sec.findings.append(f"{_rater(g)} hay {g.hay}: con − neg gap {_ci(g.gap, g.low, g.high, g.confidence)} (n={g.n_con}+{g.n_neg}).")
    if make_figures and means:
        sec.figures.append(FigureSpec("needle_means", "Mean score by needle type", figures.figure_bytes(figures.needle_figure(means))))
    return sec


def _hay_section(scored: Table, options: AnalysisOptions, make_figures: bool) -> Section:
    shifts, curves = hay.hay_comparison(scored, options)
    sec = Section("Hay type", "Mean difference rand − orig per needle (positive: more lenient with random hay) and the percentile shift curve.")
    sec.tables += [
        TableSpec("hay_shift", "rand − orig mean difference", "", hay.HayShift, shifts),
        TableSpec("hay_percentile_shift", "Percentile shift orig → rand", "", hay.PercentileShift, curves),
    ]
    for s in shifts:
        sec.findings.append(f"{_rater(s)} {s.needle}: rand − orig {_ci(s.shift, s.low, s.high, s.confidence)} (n={s.n_orig}+{s.n_rand}).")
    if make_figures:
        for key, group in _group_rows(curves, 3).items():
            sec.figures.append(FigureSpec("hay_shift_" + "_".join(_slug(v) for v in key), "Percentile shift " + " · ".join(key),
                                          figures.figure_bytes(figures.hay_figure(group))))  # fmt: skip
    return sec


def _prompt_section(scored: Table, options: AnalysisOptions) -> Section:
    pairs = prompts.prompt_comparison(scored, options)
    nulls = prompts.null_experiment(scored, options)
    sec = Section("Prompts and the null experiment", "Prompt families compared for the same judge (mean difference b − a, KS, "
                  "Bonferroni within judge); identical documents (needle none) should score 100.")  # fmt: skip
    sec.tables += [
        TableSpec("prompt_comparison", "Prompt families for one judge", "Empty when no judge ran under two prompts.", prompts.PromptPair, pairs),
        TableSpec("null_experiment", "Null experiment", "", prompts.NullExperiment, nulls),
    ]
    for r in nulls:
        sec.findings.append(
            f"{_rater(r)} hay {r.hay}: identical documents score {r.mean:.2f} [{r.low:.2f}, {r.high:.2f}], "
            f"{r.share_100:.0%} exactly 100 (n={r.n})."
        )
    for p in pairs:
        if p.significant:
            sec.findings.append(
                f"{p.judge} {p.needle}/{p.hay}: {p.prompt_b_id}@{p.prompt_b_version} − {p.prompt_a_id}@{p.prompt_a_version} = "
                f"{p.difference:+.2f} [{p.low:+.2f}, {p.high:+.2f}] (n={p.n_a}+{p.n_b}), significant after Bonferroni."
            )
    return sec


def _stability_section(scored: Table, options: AnalysisOptions) -> Section:
    rows = stability.score_stability(scored, options)
    sec = Section("Score stability", "At (0, 0) orig and rand hay give identical inputs for deterministic needles "
                  f"({', '.join(options.stability_needles)}): a stable judge scores them identically.")  # fmt: skip
    sec.tables.append(TableSpec("stability", "Identical inputs scored twice", "", stability.StabilityRow, rows))
    for r in rows:
        sec.findings.append(
            f"{_rater(r)} {r.needle}: exact agreement {r.exact_agreement:.0%}, mean |diff| {r.mean_abs_diff:.2f} (n={r.n_pairs} pairs)."
        )
    return sec


def _fingerprint_section(run: Run, scored: Table, make_figures: bool) -> Section:
    rows = fingerprint.scoring_fingerprint(scored, run.manifest)
    sec = Section("Scoring fingerprint", "Share of scores on the rubric's band boundaries and on round numbers; score histogram.")
    sec.tables.append(TableSpec("fingerprint", "Scoring fingerprint", "", fingerprint.FingerprintRow, rows))
    for r in rows:
        sec.findings.append(
            f"{_rater(r)}: {r.share_on_boundaries:.0%} of scores on band boundaries ({r.boundaries}), "
            f"{r.share_multiple_of_10:.0%} on multiples of 10; most frequent {r.top_levels} (n={r.n})."
        )
    if make_figures and len(scored):
        sec.figures.append(FigureSpec("fingerprint_histogram", "Score histograms", figures.figure_bytes(figures.fingerprint_figure(scored))))
    return sec


def _group_rows(rows: Sequence[Any], n_keys: int) -> dict[tuple, list]:
    grouped: dict[tuple, list] = {}
    for r in rows:
        grouped.setdefault(tuple(r[:n_keys]), []).append(r)
    return grouped


def _slug(value: object) -> str:
    return "".join(c if c.isalnum() or c in "-." else "-" for c in str(value))


# ---------------------------------------------------------------------------
# Rendering


def _write_csv(path: Path, spec: TableSpec) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(spec.row_type._fields)
        for row in spec.rows:
            writer.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in row])


def _html_table(spec: TableSpec) -> str:
    head = "".join(f"<th>{html.escape(f)}</th>" for f in spec.row_type._fields)
    body = []
    for row in spec.rows:
        cells = []
        for name, value in zip(spec.row_type._fields, row):
            cls = ' class="flag"' if (name in ("flagged", "exceeds") and value) or (name in ("fit_for_analysis", "fit") and not value) else ""
            cells.append(f"<td{cls}>{html.escape(_fmt(value))}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    table = f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'
    link = f'<a href="{TABLES_DIR}/{spec.name}.csv">{spec.name}.csv</a>'
    note = f"<p class=note>{html.escape(spec.note)} Full table: {link} ({len(spec.rows)} rows).</p>"
    if not spec.rows:
        return f"<h3>{html.escape(spec.title)}</h3><p class=note>No data in this run. {link}</p>"
    if len(spec.rows) > INLINE_ROW_LIMIT:
        return f"<h3>{html.escape(spec.title)}</h3>{note}<details><summary>show {len(spec.rows)} rows</summary>{table}</details>"
    return f"<h3>{html.escape(spec.title)}</h3>{note}{table}"


CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;color:#222;background:#fff}
h1{font-size:1.6em;margin-bottom:4px}h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:36px}h3{font-size:1.02em;margin:18px 0 4px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right;white-space:nowrap}
th{background:#f3f3f3;position:sticky;top:0}tr:nth-child(even) td{background:#fafafa}td.flag{background:#fde0e0!important;color:#a00;font-weight:600}
.scroll{overflow-x:auto;max-height:560px;overflow-y:auto}.note{color:#555;font-size:12px;margin:2px 0 6px}
ul.findings li{margin:2px 0;font-size:13px}li.flag{color:#a00;font-weight:600}
figure{margin:8px 6px;display:inline-block;vertical-align:top}figure img{max-width:100%;border:1px solid #eee}figcaption{font-size:12px;color:#555}
.meta td{text-align:left}pre{background:#f6f6f6;padding:8px;font-size:11px;overflow:auto;max-height:300px}
"""


def _findings_html(findings: list[str]) -> str:
    if not findings:
        return ""
    items = "".join(
        f'<li class="flag">{html.escape(f)}</li>' if f.startswith("FLAG") else f"<li>{html.escape(f)}</li>" for f in findings
    )
    return f'<ul class="findings">{items}</ul>'


def _raters_table(run: Run) -> list[tuple[str, str, str, int, int]]:
    out = []
    for (judge, pid, pver), t in run.rows.groups(*GROUP_KEYS):
        exp = t.select((t["control"] == "") & (t["order"] == "12"))
        ok = int(np.count_nonzero((exp["status"] == "ok") & ~np.isnan(exp["score"])))
        out.append((judge, pid, pver, len(t), ok))
    return out


def _manifest_digest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest for display: long per-cell lists summarised by their length."""
    return {k: (f"<{len(v)} entries: see manifest.json>" if isinstance(v, list) and len(v) > 20 else v) for k, v in manifest.items()}


def _render_html(run: Run, sections: list[Section], generated: str) -> str:
    run_ids = ", ".join(run.rows.unique("run_id")) or run.manifest.get("run_id", "?")
    raters = "".join(
        f"<tr><td>{html.escape(j)}</td><td>{html.escape(p)}@{html.escape(v)}</td><td>{n_all}</td><td>{n_ok}</td></tr>"
        for j, p, v, n_all, n_ok in _raters_table(run)
    )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in run.notes)
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        f"<title>needlejudge report — {html.escape(str(run_ids))}</title><style>{CSS}</style></head><body>",
        f"<h1>needlejudge report</h1><p class=note>run {html.escape(str(run_ids))} · folder {html.escape(str(run.run_dir))} · generated {generated}</p>",
        "<h2>Judges</h2><table class=meta><thead><tr><th>judge</th><th>prompt id@version</th><th>rows (all)</th>"
        f"<th>scored experimental rows (n)</th></tr></thead><tbody>{raters}</tbody></table>",
        f"<ul>{notes}</ul>" if notes else "",
        "<details><summary>manifest.json</summary><pre>" + html.escape(json.dumps(_manifest_digest(run.manifest), indent=2, default=str))
        + "</pre></details>",
        '<p class=note>Main statistics use regular items (control "") in order 1-2 with status ok; order swaps and controls '
        "feed the instrument checks only.</p>",
    ]
    for sec in sections:
        parts.append(f"<h2>{html.escape(sec.title)}</h2><p>{html.escape(sec.intro)}</p>{_findings_html(sec.findings)}")
        for fig in sec.figures:
            data = base64.b64encode(fig.png).decode("ascii")
            parts.append(f'<figure><img alt="{html.escape(fig.caption)}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{html.escape(fig.caption)} ({FIGURES_DIR}/{fig.name}.png)</figcaption></figure>")  # fmt: skip
        parts.extend(_html_table(t) for t in sec.tables)
    parts.append("</body></html>")
    return "\n".join(parts)


def _render_markdown(run: Run, sections: list[Section], generated: str, paths: dict[str, str]) -> str:
    lines = [f"# needlejudge report — run {', '.join(run.rows.unique('run_id')) or '?'}", "", f"Generated {generated} from `{run.run_dir}`.", ""]
    lines += ["| judge | prompt id@version | rows | scored experimental rows (n) |", "|---|---|---:|---:|"]
    lines += [f"| {j} | {p}@{v} | {a} | {o} |" for j, p, v, a, o in _raters_table(run)]
    lines += [""] + [f"- {n}" for n in run.notes]
    for sec in sections:
        lines += ["", f"## {sec.title}", "", sec.intro, ""]
        lines += [f"- {f}" for f in sec.findings] or ["- (no data in this run)"]
        tables = ", ".join(f"`{TABLES_DIR}/{t.name}.csv`" for t in sec.tables)
        if tables:
            lines += ["", f"Tables: {tables}"]
    lines += ["", f"Full report: `{paths['html']}`; figures in `{paths['figures']}`.", ""]
    return "\n".join(lines)


def analyse(
    run: Run,
    options: AnalysisOptions,
    labels: Table | None = None,
    *,
    make_figures: bool = True,
    progress: Callable[[str], None] | None = None,
) -> list[Section]:
    """Every analysis of the report, instrument checks first. `progress`
    is called with each section's title before it is computed."""
    scored = run.scored()
    steps: list[tuple[str, Callable[[], Section]]] = [
        ("Instrument checks", lambda: _checks_section(run, options, labels)),
        ("Positionality", lambda: _positionality_section(scored, options, make_figures)),
        ("Document length", lambda: _length_section(scored, make_figures)),
        ("Needle type", lambda: _needle_section(scored, options, make_figures)),
        ("Hay type", lambda: _hay_section(scored, options, make_figures)),
        ("Prompts and the null experiment", lambda: _prompt_section(scored, options)),
        ("Score stability", lambda: _stability_section(scored, options)),
        ("Scoring fingerprint", lambda: _fingerprint_section(run, scored, make_figures)),
    ]
    sections = []
    for title, step in steps:
        if progress is not None:
            progress(title)
        sections.append(step())
    return sections


def build_report(
    run_dir: Path,
    out_dir: Path,
    *,
    labels: Path | None = None,
    options: AnalysisOptions | None = None,
    progress: Callable[[str], None] | None = None,
) -> ReportPaths:
    """Analyse the run folder and write report.html, summary.md,
    figures/*.png and tables/*.csv into out_dir. `progress(step)` names
    each step as it starts (for a progress display)."""
    options = options or AnalysisOptions()
    if progress is not None:
        progress("Loading results")
    run = load_run(run_dir)
    label_table = load_labels(labels) if labels is not None else None
    sections = analyse(run, options, label_table, progress=progress)
    if progress is not None:
        progress("Writing report")
    out_dir = Path(out_dir)
    fig_dir, tab_dir = out_dir / FIGURES_DIR, out_dir / TABLES_DIR
    fig_dir.mkdir(parents=True, exist_ok=True)
    tab_dir.mkdir(parents=True, exist_ok=True)
    tables, figs = [], []
    for sec in sections:
        for t in sec.tables:
            path = tab_dir / f"{t.name}.csv"
            _write_csv(path, t)
            tables.append(path)
        for f in sec.figures:
            path = fig_dir / f"{f.name}.png"
            path.write_bytes(f.png)
            figs.append(path)
    generated = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    html_path, md_path = out_dir / HTML_NAME, out_dir / MARKDOWN_NAME
    html_path.write_text(_render_html(run, sections, generated), encoding="utf-8")
    md_path.write_text(
        _render_markdown(run, sections, generated, {"html": HTML_NAME, "figures": FIGURES_DIR + "/"}), encoding="utf-8"
    )
    return ReportPaths(out_dir, html_path, md_path, fig_dir, tab_dir, tuple(tables), tuple(figs))
