"""The report of one run: a self-contained HTML page (figures embedded as
PNG), the figures as files, every table as CSV, and a Markdown summary.

A report is rebuilt only when its inputs change: the exported results
(content hash), the manifest fields the analyses read, the labels file, the
report code and the options. Their key is written beside the report
(report-inputs.json) once every file is in place.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any, Callable

import msgspec

from analysis import render
from analysis.load import MANIFEST_FILE, RESULTS_FILE, Run, Table, load_labels, load_run, read_manifest
from analysis.options import AnalysisOptions
from analysis.render import FIGURES_DIR, TABLES_DIR, Section

HTML_NAME = "report.html"
MARKDOWN_NAME = "summary.md"
INPUTS_NAME = "report-inputs.json"
# The manifest fields the analyses read. Others change on every invocation
# without changing the results (timestamps, call counts, the quickstart fake
# server's port in the config), so they do not make a report stale.
_ANALYSED_MANIFEST = ("run_id", "prompts", "corpus", "spacy_model", "cells", "panels")


class ReportPaths(msgspec.Struct, frozen=True, kw_only=True):
    out_dir: Path
    html: Path
    markdown: Path
    figures_dir: Path
    tables_dir: Path
    tables: tuple[Path, ...]
    figures: tuple[Path, ...]
    reused: bool = False  # inputs unchanged since the report in out_dir was built: nothing rewritten


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
    from analysis import agreement, panel_sections, sections, tournament_sections  # scipy and matplotlib: only when a report is built
    scored = run.scored()
    pairs: list[agreement.PairAgreementRow] = []  # alpha between every two judges: read by two sections, computed in the first

    def checks() -> Section:
        pairs.extend(agreement.pair_agreement(scored, run.manifest, options))
        return sections.checks_section(run, options, pairs)

    steps: list[tuple[str, Callable[[], Section]]] = [
        ("Instrument checks", checks),
        ("Positionality", lambda: sections.positionality_section(scored, options, make_figures)),
        ("Document length", lambda: sections.length_section(scored, make_figures)),
        ("Needle type", lambda: sections.needle_section(scored, options, make_figures)),
        ("Hay type", lambda: sections.hay_section(scored, options, make_figures)),
        ("Prompts and the null experiment", lambda: sections.prompt_section(scored, options)),
        ("Score stability", lambda: sections.stability_section(scored, options)),
        ("Scoring fingerprint", lambda: sections.fingerprint_section(run, scored, make_figures)),
        ("Judge panels and agreement", lambda: panel_sections.agreement_section(run, options, pairs)),
    ]
    if labels is not None:
        steps.append(("People", lambda: sections.people_section(run, scored, labels, options, flags=[
            f for f in built[0].findings if f.startswith("FLAG")])))
    built: list[Section] = []
    for title, step in steps:
        if progress is not None:
            progress(title)
        built.append(step())
    if len(run.rows.where(control="tournament")):
        if progress is not None:
            progress("Tournament")
        built.append(tournament_sections.tournament_section(run, options, make_figures))
    return built


def _file_digest(path: Path) -> str | None:
    if not path.is_file():
        return None
    digest = hashlib.blake2b(digest_size=16)
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def code_version() -> str:
    """A hash of the analysis package's source: any change to the report code rebuilds reports."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def report_inputs(run_dir: Path, labels: Path | None, options: AnalysisOptions) -> dict[str, Any]:
    """Everything a report depends on, as a JSON-able key."""
    from analysis.checks import manifest_oracle_counts

    manifest = read_manifest(run_dir / MANIFEST_FILE)
    stable = {k: manifest.get(k) for k in _ANALYSED_MANIFEST}
    stable["oracle_counts"] = manifest_oracle_counts(manifest)
    return {
        "results": _file_digest(run_dir / RESULTS_FILE),
        "manifest": hashlib.blake2b(json.dumps(stable, sort_keys=True, default=str).encode(), digest_size=16).hexdigest(),
        "labels": _file_digest(labels) if labels is not None else None,
        "code": code_version(),
        "options": json.loads(msgspec.json.encode(options)),  # JSON types, as read back from INPUTS_NAME
    }


def _reusable(out_dir: Path, inputs: dict[str, Any]) -> ReportPaths | None:
    try:
        previous = json.loads((out_dir / INPUTS_NAME).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if not isinstance(previous, dict) or previous.get("inputs") != inputs:
        return None
    paths = _paths(out_dir, [out_dir / p for p in previous.get("tables", [])], [out_dir / p for p in previous.get("figures", [])])
    if not all(p.is_file() for p in (paths.html, paths.markdown, *paths.tables, *paths.figures)):
        return None
    return msgspec.structs.replace(paths, reused=True)


def _paths(out_dir: Path, tables: list[Path], figs: list[Path]) -> ReportPaths:
    return ReportPaths(out_dir=out_dir, html=out_dir / HTML_NAME, markdown=out_dir / MARKDOWN_NAME, figures_dir=out_dir / FIGURES_DIR,
                       tables_dir=out_dir / TABLES_DIR, tables=tuple(tables), figures=tuple(figs))  # fmt: skip


def build_report(
    run_dir: Path,
    out_dir: Path,
    *,
    labels: Path | None = None,
    options: AnalysisOptions | None = None,
    progress: Callable[[str], None] | None = None,
    force: bool = False,
) -> ReportPaths:
    """Analyse the run folder and write report.html, summary.md,
    figures/*.png and tables/*.csv into out_dir, unless the report there
    was built from the same inputs (then nothing is rewritten and the paths
    come back with reused=True; force rebuilds anyway). `progress(step)`
    names each step as it starts (for a progress display)."""
    options = options or AnalysisOptions()
    run_dir, out_dir = Path(run_dir), Path(out_dir)
    inputs = report_inputs(run_dir, labels, options) if run_dir.is_dir() else None
    if inputs is not None and not force:
        reused = _reusable(out_dir, inputs)
        if reused is not None:
            return reused
    if progress is not None:
        progress("Loading results")
    run = load_run(run_dir)
    label_table = load_labels(labels) if labels is not None else None
    built = analyse(run, options, label_table, progress=progress)
    if progress is not None:
        progress("Writing report")
    fig_dir, tab_dir = out_dir / FIGURES_DIR, out_dir / TABLES_DIR
    fig_dir.mkdir(parents=True, exist_ok=True)
    tab_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / INPUTS_NAME).unlink(missing_ok=True)  # a half-written report is never "up to date"
    tables, figs = [], []
    for sec in built:
        for t in sec.tables:
            path = tab_dir / f"{t.name}.csv"
            render.write_csv(path, t)
            tables.append(path)
            if t.also_json:
                (out_dir / f"{t.name}.json").write_bytes(msgspec.json.format(msgspec.json.encode(list(t.rows)), indent=1))
        for f in sec.figures:
            path = fig_dir / f"{f.name}.png"
            path.write_bytes(f.png)
            figs.append(path)
    generated = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    paths = _paths(out_dir, tables, figs)
    paths.html.write_text(render.render_html(run, built, generated), encoding="utf-8")
    paths.markdown.write_text(
        render.render_markdown(run, built, generated, {"html": HTML_NAME, "figures": FIGURES_DIR + "/"}), encoding="utf-8"
    )
    record = {"inputs": inputs, "tables": [str(p.relative_to(out_dir)) for p in tables], "figures": [str(p.relative_to(out_dir)) for p in figs]}
    (out_dir / INPUTS_NAME).write_text(json.dumps(record, indent=1), encoding="utf-8")
    return paths
