"""`needlejudge report` end to end on a synthetic run folder (real CLI)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from analysis.synthetic import PlantedEffects, SyntheticJudge, reference_judges, synthetic_rows, write_run
from engine.cli import main

pytestmark = pytest.mark.slow  # one full report build (~10 s alone, ~30 s on a loaded 2-core machine)

MANIFEST = {
    "run_id": "synthetic-report",
    "prompts": {"bands": {"id": "bands", "version": "v1-synth", "scale": "0-100"}},
    "counts": {"rows": 0, "oracle_failures": 2},
    "cells": [{"cell": n} for n in range(50)],
}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("run")
    # as in the quickstart: sound and faulty judges, and one that notices no needle (a random judge)
    random = SyntheticJudge(name="random", effects=PlantedEffects(needle_means={n: 50.0 for n in ("none", "con", "ner", "neg")}, noise_sd=25.0))
    rows = synthetic_rows(reference_judges() + [random], size=4, docs_per_cell=20, run_id="synthetic-report")
    write_run(run_dir, rows, MANIFEST)
    labels = run_dir / "labels.csv"
    with labels.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["doc_id", "needle", "hay", "i", "j", "label"])
        for r in rows[:200]:
            if r.control == "" and r.order == "12" and r.score is not None:
                writer.writerow([r.doc_id, r.needle, r.hay, r.i, r.j, 25 * round(r.score / 25)])
    out = run_dir / "out"
    code = main(["report", str(run_dir), "--out", str(out), "--labels", str(labels), "--bootstrap", "200", "--permutations", "200"])
    return code, out


def test_report_files_exist(report):
    code, out = report
    assert code == 0
    assert (out / "report.html").stat().st_size > 50_000
    assert (out / "summary.md").exists()
    pngs = sorted((out / "figures").glob("*.png"))
    assert len(pngs) >= 10 and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)
    names = {p.stem for p in (out / "tables").glob("*.csv")}
    assert {"check_failures", "check_order_swap", "people_agreement", "people_ceiling", "people_ppi", "judge_cards",
            "positionality", "length_by_k", "needle_ordering", "hay_shift", "null_experiment", "stability", "fingerprint"} <= names  # fmt: skip
    cards = json.loads((out / "judge_cards.json").read_text())
    assert {c["judge"] for c in cards} == {"faulty", "planted", "random"} and all(c["n_labels"] > 0 for c in cards)


def test_every_table_names_judge_prompt_and_sample_size(report):
    _, out = report
    for path in (out / "tables").glob("*.csv"):
        with path.open() as handle:
            header = next(csv.reader(handle))
        if path.stem == "check_oracle":  # pairs, before any judge: per needle × hay
            assert "n_pairs" in header
            continue
        if path.stem == "people_ceiling":  # people against people: no judge in it
            assert header[:3] == ["labeller_a", "labeller_b", "n"]
            continue
        judge_cols = [c for c in header if c.startswith("judge")]
        assert judge_cols, path.name
        assert any("prompt" in c and c.endswith("id") for c in header) and any(c.endswith("version") for c in header), path.name
        assert any(c == "n" or c.startswith("n_") for c in header), (path.name, header)


def test_html_is_self_contained_and_checks_come_first(report):
    _, out = report
    text = (out / "report.html").read_text()
    assert text.count("data:image/png;base64,") >= 10
    assert text.index("Instrument checks") < text.index("<h2>Positionality")
    for needle in ("planted", "faulty", "bands@v1-synth", "n=", "Agreement of each judge with people", "&lt;50 entries: see manifest.json&gt;", "Judge cards", "Prediction-powered estimates"):
        assert needle in text, needle
    assert "<script" not in text and 'src="http' not in text


def test_markdown_summary_names_judge_prompt_and_n(report):
    _, out = report
    md = (out / "summary.md").read_text()
    assert "FLAG: faulty (bands@v1-synth) order swap" in md
    planted_neg = [line for line in md.splitlines() if line.startswith("- planted (bands@v1-synth) neg/orig: early-positionality")]
    assert len(planted_neg) == 1 and "significant after Holm" in planted_neg[0] and "(n=" in planted_neg[0]
    assert "not significant" not in planted_neg[0]
    assert "oracle_failures = 2" in md


def test_report_of_a_missing_run_folder_is_a_clear_error(tmp_path, capsys):
    assert main(["report", str(tmp_path / "nothing")]) == 2
    assert "not a run folder" in capsys.readouterr().err
    assert main(["report", str(tmp_path), "--bootstrap", "5"]) == 2
    assert "--bootstrap 5" in capsys.readouterr().err


def test_analyse_reports_progress_in_order():
    from analysis.load import Run, rows_to_table
    from analysis.options import AnalysisOptions
    from analysis.report import analyse

    run = Run(Path("."), {}, rows_to_table(synthetic_rows(reference_judges(), size=2, docs_per_cell=5)))
    steps: list[str] = []
    sections = analyse(run, AnalysisOptions(n_bootstrap=100, n_permutations=100), make_figures=False, progress=steps.append)
    assert steps == [s.title for s in sections] and steps[0] == "Instrument checks"
    assert all(not s.figures for s in sections)


def test_report_of_a_run_where_nothing_scored(tmp_path):
    from analysis.options import AnalysisOptions
    from analysis.report import build_report
    from engine.contracts import ResultRow

    rows = [ResultRow(run_id="r", judge="mute", adapter="a", model="m", prompt_id="bands", prompt_version="v9", needle="neg",
                      hay="orig", i=i, j=0, doc_id=f"d{i}", doc_index=i, status="refused", raw_text="no") for i in range(5)]  # fmt: skip
    write_run(tmp_path / "run", rows)  # no manifest either
    paths = build_report(tmp_path / "run", tmp_path / "out", options=AnalysisOptions(n_bootstrap=100, n_permutations=100))
    md = paths.markdown.read_text()
    assert "FLAG: mute (bands@v9) is not fit for analysis as it stands: 1 condition(s) above the failure-rate threshold (n=5 items in them)" in md
    assert "manifest.json missing" in md
    assert paths.figures == ()


def test_a_report_is_rebuilt_only_when_its_inputs_change(tmp_path, capsys):
    from analysis.options import AnalysisOptions
    from analysis.report import INPUTS_NAME, build_report

    rows = synthetic_rows(reference_judges(), size=2, docs_per_cell=5)
    run_dir = write_run(tmp_path / "run", rows, {"run_id": "r", "started_at": "then"})
    options = AnalysisOptions(n_bootstrap=100, n_permutations=100)
    first = build_report(run_dir, tmp_path / "out", options=options)
    assert not first.reused and (tmp_path / "out" / INPUTS_NAME).exists()
    stamp = first.html.stat().st_mtime_ns
    # a re-run rewrites the manifest's timestamps and config (the quickstart's server port): not inputs of the report
    (run_dir / "manifest.json").write_text('{"run_id": "r", "started_at": "now", "config": {"base_url": "http://127.0.0.1:2"}}')
    again = build_report(run_dir, tmp_path / "out", options=options)
    assert again.reused and again.html.stat().st_mtime_ns == stamp and set(again.figures) == set(first.figures)
    assert build_report(run_dir, tmp_path / "out", options=AnalysisOptions(n_bootstrap=101, n_permutations=100)).reused is False
    (run_dir / "manifest.json").write_text('{"run_id": "r", "prompts": {"p": {"id": "bands", "band_boundaries": [0, 50, 100]}}}')
    assert build_report(run_dir, tmp_path / "out", options=options).reused is False  # rubric bands the fingerprint reads
    write_run(run_dir, rows[:-1])  # new results
    assert build_report(run_dir, tmp_path / "out", options=options).reused is False
    next(iter((tmp_path / "out" / "figures").glob("*.png"))).unlink()  # a missing output file
    assert build_report(run_dir, tmp_path / "out", options=options).reused is False
    assert main(["report", str(run_dir), "--out", str(tmp_path / "out"), "--bootstrap", "100", "--permutations", "100"]) == 0
    assert "report up to date, reused" in capsys.readouterr().out


def _table(out: Path, name: str) -> list[dict[str, str]]:
    with (out / "tables" / f"{name}.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def _findings(out: Path) -> list[str]:
    return [line[2:] for line in (out / "summary.md").read_text().splitlines() if line.startswith("- ")]


def _yes(value: str) -> bool:
    assert value in ("yes", "no", "True", "False", "true", "false"), value
    return value in ("yes", "True", "true")


def test_each_needle_ordering_claims_only_what_its_corrected_tests_show(report):
    """'>' only between neighbours whose Bonferroni-corrected KS test is
    significant, '≈' otherwise; the printed finding is the table's ordering."""
    _, out = report
    significant = {(r["judge"], r["prompt_version"], r["hay"], frozenset((r["needle_a"], r["needle_b"]))): _yes(r["significant"])
                   for r in _table(out, "needle_pairs_ks")}  # fmt: skip
    means = {(r["judge"], r["prompt_version"], r["hay"], r["needle"]): float(r["mean"]) for r in _table(out, "needle_means")}
    findings = _findings(out)
    orderings = _table(out, "needle_ordering")
    symbols = set()
    for o in orderings:
        key = (o["judge"], o["prompt_version"], o["hay"])
        tokens = o["ordering"].split()
        ranked, ops = tokens[::2], tokens[1::2]
        assert [means[(*key, n)] for n in ranked] == sorted((means[(*key, n)] for n in ranked), reverse=True)
        for a, op, b in zip(ranked, ops, ranked[1:]):
            assert op == (">" if significant[(*key, frozenset((a, b)))] else "≈"), (key, o["ordering"])
            symbols.add(op)
        assert f"{o['judge']} ({o['prompt_id']}@{o['prompt_version']}) hay {o['hay']}: {o['ordering']} (n={o['n']})." in findings
    assert symbols == {">", "≈"}  # both occur: the sound judges' orders hold, the random judge's do not
    assert all(" > " not in o["ordering"] for o in orderings if o["judge"] == "random")


def test_length_findings_count_lengths_from_the_length_table(report):
    _, out = report
    by_k = _table(out, "length_by_k")
    findings = _findings(out)
    checked = 0
    for s in _table(out, "length_summary"):
        if s["needle"] != "all":
            continue
        rows = [r for r in by_k if (r["judge"], r["prompt_version"], r["hay"], r["needle"]) == (s["judge"], s["prompt_version"], s["hay"], "all")]
        above = sum(_yes(r["above_reference"]) for r in rows)
        assert int(s["n_above"]) == above and int(s["n_lengths"]) == len(rows)
        line = f"{s['judge']} ({s['prompt_id']}@{s['prompt_version']}) hay {s['hay']}: mean score above 100·(L−1)/L at {above} of {len(rows)} lengths (n={s['n']})."
        assert line in findings
        checked += 1
    assert checked == 6
    assert not any("% of" in f for f in findings if "lengths" in f)


def test_emd_findings_count_corrected_and_uncorrected_cells_from_the_table(report):
    _, out = report
    cells = _table(out, "positionality_emd_cells")
    for f in (f for f in _findings(out) if "mirror cell pairs exceed" in f):
        judge = f.split(" ", 1)[0]
        mine = [r for r in cells if r["judge"] == judge]
        hits = sum(_yes(r["exceeds"]) for r in mine)
        corrected = sum(float(r["p_holm"].lstrip("< ")) <= 0.05 for r in mine)
        assert f.startswith(f"{judge} (") and f"{hits} of {len(mine)} mirror cell pairs" in f and f"({corrected} after Holm" in f


def test_agreement_between_judges_is_one_table_with_intervals_read_by_the_checks(report):
    _, out = report
    names = {p.stem for p in (out / "tables").glob("*.csv")}
    assert "judge_agreement_ci" in names and "check_judge_agreement" not in names
    with (out / "tables" / "judge_agreement_ci.csv").open() as handle:
        pairs = {(r["judge_a"], r["judge_b"]): r for r in csv.DictReader(handle)}
    assert set(pairs) == {("faulty", "planted"), ("faulty", "random"), ("planted", "random")}
    summary = (out / "summary.md").read_text()
    checks = summary[summary.index("Instrument checks"):summary.index("Positionality")]
    for (a, b), r in pairs.items():
        low, alpha, high = (float(r[k]) for k in ("alpha_low", "alpha", "alpha_high"))
        assert low <= alpha <= high
        # the checks section's finding quotes the same alpha and interval as the table
        assert f"vs {b} (bands@v1-synth): Krippendorff's α (interval) {alpha:.3f} [{low:.3f}, {high:.3f}] (95% CI)" in checks, (a, b)
