from __future__ import annotations

from pathlib import Path

import pytest

from analysis.load import Run, rows_to_table
from analysis.options import AnalysisOptions
from analysis.stability import comparison_sentence, score_stability
from analysis.synthetic import reference_judges, synthetic_rows
from engine.contracts import ResultRow


def _row(hay, doc, score, needle="neg", i=0, j=0):
    return ResultRow(run_id="r", judge="j", adapter="a", model="m", prompt_id="p", prompt_version="v", needle=needle,
                     hay=hay, i=i, j=j, doc_id=doc, doc_index=0, score=score)  # fmt: skip


def test_stability_by_hand():
    rows = [_row("orig", "a", 50.0), _row("orig", "b", 60.0), _row("orig", "c", 70.0),
            _row("rand", "a", 50.0), _row("rand", "b", 65.0), _row("rand", "c", 60.0),
            _row("rand", "z", 10.0),  # no orig partner
            _row("orig", "a", 0.0, i=1), _row("rand", "a", 100.0, i=1),  # not at (0, 0)
            _row("orig", "a", 0.0, needle="ner"), _row("rand", "a", 100.0, needle="ner")]  # fmt: skip
    (res,) = score_stability(Run(Path("."), {}, rows_to_table(rows)).scored(), AnalysisOptions())
    assert (res.needle, res.n_pairs) == ("neg", 3)
    assert res.exact_agreement == pytest.approx(1 / 3)
    assert res.mean_abs_diff == pytest.approx(5.0) and res.max_abs_diff == 10.0


def test_a_deterministic_judge_is_perfectly_stable():
    scored = Run(Path("."), {}, rows_to_table(synthetic_rows(reference_judges(), size=2, docs_per_cell=15))).scored()
    rows = score_stability(scored, AnalysisOptions())
    planted = [r for r in rows if r.judge == "planted"]
    assert {r.needle for r in planted} == {"none", "neg", "con"}
    assert all(r.exact_agreement == 1.0 and r.mean_abs_diff == 0.0 and r.n_pairs == 15 for r in planted)


def test_stability_counts_byte_identical_requests_from_cache_keys():
    import msgspec

    same, other = "11" * 32, "22" * 32
    rows = [msgspec.structs.replace(r, cache_keys=(key,)) for r, key in (
        (_row("orig", "a", 50.0), same), (_row("rand", "a", 50.0), same),    # identical requests
        (_row("orig", "b", 60.0), same), (_row("rand", "b", 70.0), other),   # differ (e.g. item metadata)
    )] + [_row("orig", "c", 1.0), _row("rand", "c", 1.0)]  # fmt: skip
    (res,) = score_stability(Run(Path("."), {}, rows_to_table(rows)).scored(), AnalysisOptions())
    assert (res.n_pairs, res.n_known_requests, res.n_identical_requests) == (3, 2, 1)
    assert "1 of 2 request pairs were byte-identical" in comparison_sentence(res)
    all_same = msgspec.structs.replace(res, n_identical_requests=2)
    assert "judge's own nondeterminism" in comparison_sentence(all_same)
    assert "not byte-identical" not in comparison_sentence(all_same)
    assert "none of the 2" in comparison_sentence(msgspec.structs.replace(res, n_identical_requests=0))
