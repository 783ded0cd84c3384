"""analysis.people on synthetic runs with planted judges and labels."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from analysis import people
from analysis.load import Run, Table, rows_to_table
from analysis.synthetic import reference_judges, synthetic_rows


@pytest.fixture(scope="module")
def scored():
    return Run(Path("."), {}, rows_to_table(synthetic_rows(reference_judges(), size=4, docs_per_cell=20))).scored()


def labels_from(scored: Table, judge: str, *, shift: float = 0.0, every: int = 1, labeller: str = "ann") -> Table:
    t = scored.where(judge=judge)
    keep = np.arange(len(t)) % every == 0
    cols = {k: t[k][keep] for k in ("doc_id", "needle", "hay", "i", "j", "replicate")}
    cols["label"] = np.clip(t["score"][keep] + shift, 0, 100)
    cols["labeller"] = np.array([labeller] * int(keep.sum()))
    cols["inclusion"] = np.full(int(keep.sum()), 1.0 / every)
    return Table(cols)


def test_agreement_is_perfect_for_the_judge_people_copy_and_not_for_another(scored):
    # (moved from the hand-written human_agreement's test in tests/test_analysis_checks.py)
    labels = labels_from(scored, "faulty")  # faulty scores are multiples of 10 already
    by = {r.judge: r for r in people.agreement_rows(scored, labels)}
    assert by["faulty"].alpha_interval == pytest.approx(1.0) and by["faulty"].kappa_quadratic == pytest.approx(1.0)
    assert by["faulty"].false_pass == by["faulty"].false_fail == 0 and by["faulty"].n == len(labels)
    assert 0.0 < by["planted"].alpha_interval < 1.0 and by["planted"].kappa_quadratic < 1.0
    assert by["planted"].alpha_low <= by["planted"].alpha_interval <= by["planted"].alpha_high


def test_ppi_removes_a_planted_bias_the_judge_only_mean_keeps(scored):
    # people rate every 4th item of `planted` 15 points lower than it did
    labels = labels_from(scored, "planted", shift=-15.0, every=4)
    rows = [r for r in people.ppi_rows(scored, labels) if r.judge == "planted" and r.quantity.startswith("mean ")]
    assert rows
    for r in rows:
        assert r.judge_only - r.ppi == pytest.approx(15.0, abs=2.5)  # clipping at 0 makes some shifts smaller
        assert not r.judge_low <= r.ppi <= r.judge_high
    contrasts = [r for r in people.ppi_rows(scored, labels) if r.judge == "planted" and " - " in r.quantity]
    assert {r.quantity.split(" (")[0] for r in contrasts} >= {"neg - none", "early - late"}
    for r in contrasts:  # a constant shift cancels in a difference
        assert r.ppi == pytest.approx(r.judge_only, abs=3.0)


def test_the_ceiling_pairs_people_on_what_both_rated(scored):
    ann = labels_from(scored, "faulty", labeller="ann")
    bo = labels_from(scored, "faulty", shift=5.0, every=2, labeller="bo")
    both = Table({k: np.concatenate([ann[k], bo[k]]) for k in ("doc_id", "needle", "hay", "i", "j", "replicate", "label", "labeller", "inclusion")})
    (row,) = people.ceiling_rows(both)
    assert (row.labeller_a, row.labeller_b) == ("ann", "bo") and row.n == len(bo)
    assert 0.9 < row.alpha_interval < 1.0  # a constant 5-point offset: high, not perfect


def test_judge_cards_carry_agreement_ceiling_and_flags(scored):
    labels = labels_from(scored, "faulty")
    agreement = people.agreement_rows(scored, labels)
    manifest = {"prompts": {"bands": {"id": "bands", "scale": "0-100"}},
                "config": {"judges": [{"name": "faulty", "model": "m-1", "revision": "r7"}]}}
    cards = {c.judge: c for c in people.judge_cards(scored, labels, agreement, [], manifest, ["FLAG: faulty (bands@v1) is coarse"])}
    assert cards["faulty"].model == "m-1" and cards["faulty"].model_version == "r7"
    assert cards["faulty"].agreement_alpha_interval == pytest.approx(1.0) and cards["faulty"].n_labels == len(labels)
    assert cards["faulty"].people_ceiling_alpha is None and not cards["faulty"].labels_simulated
