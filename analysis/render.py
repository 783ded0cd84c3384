"""Rendering of report sections: values formatted one way, CSV tables, the
self-contained HTML page (figures embedded as PNG) and the Markdown summary.
"""

from __future__ import annotations

import base64
import csv
import html
import json
import math
from pathlib import Path
from typing import Any, Sequence

import msgspec
import numpy as np

from analysis.load import Run

FIGURES_DIR = "figures"
TABLES_DIR = "tables"
INLINE_ROW_LIMIT = 40  # longer tables are folded in the HTML (the CSV has them all)
P_FLOOR = 0.001


class TableSpec(msgspec.Struct):
    name: str  # CSV file stem
    title: str
    note: str
    row_type: type
    rows: Sequence[Any]  # msgspec Structs of row_type
    also_json: bool = False  # written as <name>.json beside the report too (e.g. the judge cards)


class FigureSpec(msgspec.Struct):
    name: str
    caption: str
    png: bytes


class Section(msgspec.Struct):
    title: str
    intro: str
    tables: list[TableSpec] = msgspec.field(default_factory=list)
    figures: list[FigureSpec] = msgspec.field(default_factory=list)
    findings: list[str] = msgspec.field(default_factory=list)  # sentences for the Markdown summary


def format_p(p: float) -> str:
    """A p-value as "< 0.001" or "= 0.012" (after "p"); "–" when not computed."""
    if p is None or math.isnan(p):
        return "–"
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"= {p:.3f}"


def is_p_column(name: str) -> bool:
    return name == "p_value" or name.startswith("p_")


def format_value(value: Any, column: str = "") -> str:
    """One format for every table cell: p-values as "< 0.001" / "0.012",
    other numbers in fixed notation (never 3.3e-319)."""
    if isinstance(value, (bool, np.bool_)):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if is_p_column(column):
            return format_p(value).removeprefix("= ")
        return f"{value:.3f}" if abs(value) < 10 else f"{value:.2f}"
    return str(value)


def fields(row_type: type) -> tuple[str, ...]:
    return row_type.__struct_fields__  # type: ignore[attr-defined]


def write_csv(path: Path, spec: TableSpec) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(fields(spec.row_type))
        for row in spec.rows:
            writer.writerow(["" if isinstance(v, float) and math.isnan(v) else v for v in msgspec.structs.astuple(row)])


def _cell(name: str, value: Any) -> str:
    classes = []
    if (name in ("flagged", "exceeds") and value) or (name in ("fit_for_analysis", "fit") and not value):
        classes.append("flag")
    if isinstance(value, str) and len(value) > 24:
        classes.append("text")  # long text wraps instead of widening the table
    cls = f' class="{" ".join(classes)}"' if classes else ""
    return f"<td{cls}>{html.escape(format_value(value, name))}</td>"


def html_table(spec: TableSpec) -> str:
    names = fields(spec.row_type)
    head = "".join(f"<th>{html.escape(f.replace('_', ' '))}</th>" for f in names)
    body = "".join(
        "<tr>" + "".join(_cell(n, v) for n, v in zip(names, msgspec.structs.astuple(row))) + "</tr>" for row in spec.rows
    )
    table = f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    link = f'<a href="{TABLES_DIR}/{spec.name}.csv">{spec.name}.csv</a>'
    note = f"<p class=note>{html.escape(spec.note)} Full table: {link} ({len(spec.rows)} rows).</p>"
    if not spec.rows:
        return f"<h3>{html.escape(spec.title)}</h3><p class=note>No data in this run. {link}</p>"
    if len(spec.rows) > INLINE_ROW_LIMIT:
        return f"<h3>{html.escape(spec.title)}</h3>{note}<details><summary>show {len(spec.rows)} rows</summary>{table}</details>"
    return f"<h3>{html.escape(spec.title)}</h3>{note}{table}"


# Everything fits the content column: wide tables scroll inside their own
# box, long text cells wrap, figures scale down to the column.
CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#222;background:#fff}
main{min-width:0}
h1{font-size:1.6em;margin-bottom:4px}h2{border-bottom:2px solid #ddd;padding-bottom:4px;margin-top:36px}h3{font-size:1.02em;margin:18px 0 4px}
p,li{overflow-wrap:anywhere}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right;white-space:nowrap}
th{background:#f3f3f3;position:sticky;top:0;white-space:normal;min-width:4em}td.text{white-space:normal;min-width:14em;text-align:left}
tr:nth-child(even) td{background:#fafafa}td.flag{background:#fde0e0!important;color:#a00;font-weight:600}
.scroll{overflow:auto;max-width:100%;max-height:560px}.note{color:#555;font-size:12px;margin:2px 0 6px}
ul.findings li{margin:2px 0;font-size:13px}li.flag{color:#a00;font-weight:600}
figure{margin:8px 0;max-width:100%}figure img{display:block;max-width:100%;height:auto;border:1px solid #eee}figcaption{font-size:12px;color:#555}
.meta td{text-align:left}details{max-width:100%}pre{background:#f6f6f6;padding:8px;font-size:11px;overflow:auto;max-height:300px;max-width:100%}
"""


def _findings_html(findings: list[str]) -> str:
    if not findings:
        return ""
    items = "".join(
        f'<li class="flag">{html.escape(f)}</li>' if f.startswith("FLAG") else f"<li>{html.escape(f)}</li>" for f in findings
    )
    return f'<ul class="findings">{items}</ul>'


def raters_table(run: Run) -> list[tuple[str, str, str, int, int]]:
    out = []
    for (judge, pid, pver), t in run.rows.groups("judge", "prompt_id", "prompt_version"):
        ok = int(np.count_nonzero(t.mask(control="", order="12", status="ok") & ~np.isnan(t["score"])))
        out.append((judge, pid, pver, len(t), ok))
    return out


def _manifest_digest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest for display: long per-cell lists summarised by their length."""
    return {k: (f"<{len(v)} entries: see manifest.json>" if isinstance(v, list) and len(v) > 20 else v) for k, v in manifest.items()}


def render_html(run: Run, sections: list[Section], generated: str) -> str:
    run_ids = ", ".join(run.rows.unique("run_id")) or run.manifest.get("run_id", "?")
    raters = "".join(
        f"<tr><td>{html.escape(j)}</td><td>{html.escape(p)}@{html.escape(v)}</td><td>{n_all}</td><td>{n_ok}</td></tr>"
        for j, p, v, n_all, n_ok in raters_table(run)
    )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in run.notes)
    parts = [
        '<!DOCTYPE html><html lang=en><head><meta charset=utf-8><meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>needlejudge report — {html.escape(str(run_ids))}</title><style>{CSS}</style></head><body><main>",
        f"<h1>needlejudge report</h1><p class=note>run {html.escape(str(run_ids))} · folder {html.escape(str(run.run_dir))} · generated {generated}</p>",
        "<h2>Judges</h2><div class=scroll><table class=meta><thead><tr><th>judge</th><th>prompt id@version</th><th>rows (all)</th>"
        f"<th>scored experimental rows (n)</th></tr></thead><tbody>{raters}</tbody></table></div>",
        f"<ul>{notes}</ul>" if notes else "",
        "<details><summary>manifest.json</summary><pre>" + html.escape(json.dumps(_manifest_digest(run.manifest), indent=2, default=str))
        + "</pre></details>",
        '<p class=note>Main statistics use regular items (control "") in order 1-2 with status ok; order swaps and controls '
        "feed the instrument checks only. p-values below 0.001 are shown as &lt; 0.001.</p>",
    ]
    for sec in sections:
        parts.append(f"<h2>{html.escape(sec.title)}</h2><p>{html.escape(sec.intro)}</p>{_findings_html(sec.findings)}")
        for fig in sec.figures:
            data = base64.b64encode(fig.png).decode("ascii")
            parts.append(f'<figure><img alt="{html.escape(fig.caption)}" src="data:image/png;base64,{data}">'
                         f"<figcaption>{html.escape(fig.caption)} ({FIGURES_DIR}/{fig.name}.png)</figcaption></figure>")  # fmt: skip
        parts.extend(html_table(t) for t in sec.tables)
    parts.append("</main></body></html>")
    return "\n".join(parts)


def render_markdown(run: Run, sections: list[Section], generated: str, paths: dict[str, str]) -> str:
    lines = [f"# needlejudge report — run {', '.join(run.rows.unique('run_id')) or '?'}", "", f"Generated {generated} from `{run.run_dir}`.", ""]
    lines += ["| judge | prompt id@version | rows | scored experimental rows (n) |", "|---|---|---:|---:|"]
    lines += [f"| {j} | {p}@{v} | {a} | {o} |" for j, p, v, a, o in raters_table(run)]
    lines += [""] + [f"- {n}" for n in run.notes]
    for sec in sections:
        lines += ["", f"## {sec.title}", "", sec.intro, ""]
        lines += [f"- {f}" for f in sec.findings] or ["- (no data in this run)"]
        tables = ", ".join(f"`{TABLES_DIR}/{t.name}.csv`" for t in sec.tables)
        if tables:
            lines += ["", f"Tables: {tables}"]
    lines += ["", f"Full report: `{paths['html']}`; figures in `{paths['figures']}`.", ""]
    return "\n".join(lines)
