from __future__ import annotations

from pathlib import Path

import pytest

from analysis.load import Run, rows_to_table
from analysis.needles import needle_comparison
from analysis.options import AnalysisOptions
from analysis.synthetic import EARLY_PENALTY_NEG, PlantedEffects, SyntheticJudge, reference_judges, synthetic_rows

OPTIONS = AnalysisOptions(n_bootstrap=1000)


def _scored(judges, **kw):
    return Run(Path("."), {}, rows_to_table(synthetic_rows(judges, **kw))).scored()


@pytest.fixture(scope="module")
def comparison():
    return needle_comparison(_scored(reference_judges(), size=5, docs_per_cell=40), OPTIONS)


def test_ordering_of_planted_needle_means(comparison):
    _, orderings, _, _ = comparison
    assert {(o.judge, o.hay): o.ordering for o in orderings} == {
        (j, h): "none > con > ner > neg" for j in ("planted", "faulty") for h in ("orig", "rand")
    }
    assert all(o.n > 3000 for o in orderings)


def test_con_neg_gap_recovers_the_planted_difference(comparison):
    _, _, _, gaps = comparison
    # con 80; neg 62 minus the early penalty on 10 of 25 cells: 62 − 5·10/25 = 60 → gap 20 in both hays
    truth = 80.0 - (62.0 - EARLY_PENALTY_NEG * 10 / 25)
    for g in gaps:
        if g.judge == "planted":
            assert g.low <= truth <= g.high, g


def test_pairwise_ks_with_bonferroni_separates_only_different_needles():
    judge = SyntheticJudge(name="two-alike", effects=PlantedEffects(needle_means={"con": 70.0, "ner": 70.0, "neg": 50.0}))
    _, _, pairs, _ = needle_comparison(_scored([judge], size=4, docs_per_cell=20), OPTIONS)
    verdict = {(p.hay, p.needle_a, p.needle_b): p.significant for p in pairs}
    assert verdict == {(h, a, b): a == "neg" or b == "neg" for h in ("orig", "rand") for a, b in (("con", "neg"), ("con", "ner"), ("neg", "ner"))}
    assert all(p.p_bonferroni == pytest.approx(min(1.0, 3 * p.p_value)) for p in pairs)


def test_ordering_text_writes_approx_where_the_corrected_test_is_not_significant():
    from analysis.needles import ordering_text

    significant = {frozenset(("none", "con")): True, frozenset(("con", "ner")): False, frozenset(("ner", "neg")): True}
    assert ordering_text(["none", "con", "ner", "neg"], significant) == "none > con ≈ ner > neg"
    assert ordering_text(["a", "b"], {}) == "a ≈ b"  # no test run: no order claimed
    assert ordering_text(["only"], {}) == "only" and ordering_text([], {}) == ""
