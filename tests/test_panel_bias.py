"""The planted-bias test of panels (issue 29): three simulated judges with
known, different position and length biases (simulation/judge.py), one
mean panel and one median panel of them, measured by the report's own
analysis (analysis.positionality) and a least-squares length slope."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis.load import load_run
from analysis.options import AnalysisOptions
from analysis.positionality import positionality
from engine.run.runner import run_experiment
from experiments import fake_judge, write_experiment
from simulation.fake_config import FakeConfig
from simulation.judge import SimJudgeParams

# early penalty (position bias, points) and length slope (points per sentence)
PLANTED = {"local-a": (2.0, 0.5), "local-b": (6.0, 1.0), "local-c": (14.0, 2.5)}
DESIGN = """
seed = 11
needles = ["neg"]
hays = ["orig"]
k = 4
[stopping]
kind = "fixed"
n = 8
"""
PANELS = """
[[judges]]
name = "mean-panel"
panel = { members = ["local-a", "local-b", "local-c"] }
[[judges]]
name = "median-panel"
panel = { members = ["local-a", "local-b", "local-c"], rule = "median" }
"""


def _params(early: float, slope: float) -> SimJudgeParams:
    # no band snapping or document effect: scores are the planted mean plus small noise
    return SimJudgeParams(seed=int(early), early_penalty=early, length_slope=slope, noise_sd=2.0, doc_sd=0.0, band_snap_prob=0.0,
                          needle_means={"none": 97.0, "neg": 50.0})  # fmt: skip


@pytest.fixture(scope="module")
def measured(tmp_path_factory, prepared_store, corpus_slice_path, corpus_settings):  # type: ignore[no-untyped-def]
    from simulation.fake_server import serve_in_thread

    folder = tmp_path_factory.mktemp("panel-bias")
    judges = {model: _params(*planted) for model, planted in PLANTED.items()}
    with serve_in_thread(FakeConfig(judges=judges, keyless_models=("*",))) as server:
        body = DESIGN + "".join(fake_judge(name, name, server.url, concurrency=8) for name in PLANTED) + PANELS
        summary = run_experiment(write_experiment(folder, prepared_store, corpus_slice_path, corpus_settings, body))
    run = load_run(folder / "out")
    scored = run.scored()
    bias = {r.judge: r.bias for r in positionality(scored, AnalysisOptions(n_bootstrap=100))}
    slope = {}
    for (judge,), t in scored.groups("judge"):
        slope[judge] = float(np.polyfit(t["k"].astype(float), t["score"], 1)[0])
    return summary, bias, slope


def test_the_members_show_their_planted_biases(measured) -> None:  # type: ignore[no-untyped-def]
    _, bias, slope = measured
    for model, (early, length) in PLANTED.items():
        assert bias[model] == pytest.approx(early, abs=1.0), model
        assert slope[model] == pytest.approx(length, abs=0.3), model


def test_the_panels_bias_is_the_aggregation_of_its_members(measured) -> None:  # type: ignore[no-untyped-def]
    _, bias, slope = measured
    members = list(PLANTED)
    assert bias["mean-panel"] == pytest.approx(np.mean([bias[m] for m in members]), abs=0.25)
    assert slope["mean-panel"] == pytest.approx(np.mean([slope[m] for m in members]), abs=0.05)
    # the median of three shifted scores is the middle one's: b's planted bias
    assert bias["median-panel"] == pytest.approx(bias["local-b"], abs=1.0)
    assert slope["median-panel"] == pytest.approx(slope["local-b"], abs=0.3)
    worst = max(bias[m] for m in members)
    assert bias["mean-panel"] < worst - 3 and bias["median-panel"] < worst - 3
    assert slope["mean-panel"] < max(slope[m] for m in members)


def test_a_panel_has_its_row_beside_its_members_in_the_checks_and_the_analyses(measured, tmp_path_factory) -> None:  # type: ignore[no-untyped-def]
    from analysis.report import analyse

    summary, _, _ = measured
    run = load_run(Path(summary.results_jsonl).parent)
    sections = analyse(run, AnalysisOptions(n_bootstrap=50, n_permutations=50), make_figures=False)
    by_name = {t.name: t for s in sections for t in s.tables}
    for name in ("check_verdicts", "check_failures", "positionality", "length_by_k", "fingerprint", "panels", "panel_agreement"):
        judges = {getattr(r, "judge") for r in by_name[name].rows}
        assert {"mean-panel", "median-panel"} <= judges, name
        if not name.startswith("panel"):
            assert set(PLANTED) <= judges, name
    within = {r.judge: r for r in by_name["panel_agreement"].rows}
    assert within["mean-panel"].n == within["median-panel"].n > 0
