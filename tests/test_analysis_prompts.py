from __future__ import annotations

from pathlib import Path

import pytest

from analysis.load import Run, rows_to_table
from analysis.options import AnalysisOptions
from analysis.prompts import null_experiment, prompt_comparison
from analysis.synthetic import PlantedEffects, SyntheticJudge, synthetic_rows
from engine.contracts import ResultRow

OPTIONS = AnalysisOptions(n_bootstrap=800)


def test_prompt_families_compared_for_one_judge():
    judges = [
        SyntheticJudge(name="j", prompt_id="bands", prompt_version="b1", effects=PlantedEffects(needle_means={"con": 80.0, "neg": 60.0})),
        SyntheticJudge(name="j", prompt_id="sts", prompt_version="s1", effects=PlantedEffects(needle_means={"con": 70.0, "neg": 60.0})),
        SyntheticJudge(name="solo", prompt_id="bands", prompt_version="b1"),
    ]
    scored = Run(Path("."), {}, rows_to_table(synthetic_rows(judges, size=4, docs_per_cell=20))).scored()
    rows = {(r.needle, r.hay): r for r in prompt_comparison(scored, OPTIONS)}
    assert set(rows) == {(n, h) for n in ("con", "neg") for h in ("orig", "rand")}  # judge "solo" has one prompt only
    con = rows[("con", "orig")]
    assert (con.prompt_a_id, con.prompt_b_id) == ("bands", "sts")
    assert con.low <= -10.0 <= con.high and con.significant
    assert not rows[("neg", "orig")].significant and rows[("neg", "orig")].low <= 0 <= rows[("neg", "orig")].high
    assert con.p_bonferroni == pytest.approx(min(1.0, 4 * con.p_value))


def test_null_experiment_by_hand():
    scores = [100.0, 100.0, 90.0, 100.0]
    rows = [
        ResultRow(run_id="r", judge="j", adapter="a", model="m", prompt_id="p", prompt_version="v", needle="none", hay="orig",
                  i=n, j=0, doc_id=f"d{n}", doc_index=n, score=s)  # fmt: skip
        for n, s in enumerate(scores)
    ]
    rows.append(ResultRow(run_id="r", judge="j", adapter="a", model="m", prompt_id="p", prompt_version="v", needle="neg",
                          hay="orig", i=0, j=0, doc_id="d9", doc_index=9, score=10.0))  # fmt: skip
    (res,) = null_experiment(Run(Path("."), {}, rows_to_table(rows)).scored(), OPTIONS)
    assert (res.n, res.mean, res.share_100) == (4, 97.5, 0.75)
    assert 90.0 <= res.low <= 97.5 <= res.high <= 100.0
