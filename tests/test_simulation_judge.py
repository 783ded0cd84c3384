"""The simulated judge (simulation/judge.py): determinism, exact
expectations against simulation, and recovery of every planted effect."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simulation import judge as sim

PLAIN = sim.SimJudgeParams(noise_sd=6.0, doc_sd=0.0, band_snap_prob=0.0)


def item(**fields) -> sim.ItemInfo:
    return sim.ItemInfo(**{"needle": "neg", "hay": "orig", "i": 2, "j": 2, "doc_id": "", **fields})


def draws(params, info, n=4000) -> np.ndarray:
    return np.array([sim.score(params, info, f"id-{k}") for k in range(n)], dtype=float)


def test_scores_are_deterministic_in_the_identity_and_vary_across_identities():
    info = item()
    assert sim.score(PLAIN, info, "a") == sim.score(PLAIN, info, "a")
    assert len({sim.score(PLAIN, info, f"x{k}") for k in range(50)}) > 5
    other_seed = sim.SimJudgeParams(seed=1, noise_sd=6.0, doc_sd=0.0, band_snap_prob=0.0)
    assert [sim.score(PLAIN, info, f"x{k}") for k in range(20)] != [sim.score(other_seed, info, f"x{k}") for k in range(20)]


def test_mean_score_formula():
    p = sim.SimJudgeParams(doc_sd=0.0, order_bias=-2.0)
    assert sim.mean_score(p, item(i=2, j=2)) == pytest.approx(62.0 + 4.0)
    assert sim.mean_score(p, item(i=1, j=3)) == pytest.approx(62.0 + 4.0 - 5.0)  # first half: penalised
    assert sim.mean_score(p, item(i=3, j=1)) == pytest.approx(62.0 + 4.0)  # second half
    assert sim.mean_score(p, item(i=3, j=1, hay="rand")) == pytest.approx(62.0 + 4.0 + 4.0)
    assert sim.mean_score(p, item(i=3, j=1, order="21")) == pytest.approx(62.0 + 4.0 - 2.0)
    assert sim.mean_score(p, item(needle="none", i=1, j=3)) == pytest.approx(97.0)  # no perturbation: no effects
    assert sim.mean_score(p, item(control="null_edit")) == 99.0 and sim.mean_score(p, item(control="negative")) == 8.0


def test_expected_score_matches_simulation_with_clipping_and_snapping():
    params = sim.SimJudgeParams(noise_sd=8.0, doc_sd=0.0, band_snap_prob=0.3)
    for info in (item(), item(needle="none"), item(control="negative")):
        values = draws(params, info)
        se = values.std() / np.sqrt(len(values))
        assert abs(values.mean() - sim.expected_score(params, info)) < 4 * se + 0.05
    assert sim.score_distribution(params, item()).sum() == pytest.approx(1.0)


def test_planted_early_positionality_bias_is_recovered():
    """mean(second half, i > j) − mean(first half, i < j) = early_penalty for penalised needles, 0 otherwise."""
    params = sim.SimJudgeParams(early_penalty=6.0, early_penalty_needles=("neg",), noise_sd=5.0, doc_sd=0.0, band_snap_prob=0.0)
    positions = [(i, j) for i in range(10) for j in range(10)]
    for needle, planted in (("neg", 6.0), ("con", 0.0)):
        first = [sim.score(params, item(needle=needle, i=i, j=j), f"{i},{j},{r}") for i, j in positions if i < j for r in range(40)]
        second = [sim.score(params, item(needle=needle, i=i, j=j), f"{i},{j},{r}") for i, j in positions if i > j for r in range(40)]
        bias = np.mean(second) - np.mean(first)
        se = np.sqrt(np.var(first) / len(first) + np.var(second) / len(second))
        assert abs(bias - planted) < 4 * se, (needle, bias)
    assert sim.planted_truth(params)["early_positionality_bias"] == {"neg": 6.0, "con": 0.0, "ner": 0.0}


def test_length_and_hay_effects_and_needle_means_are_recovered():
    params = sim.SimJudgeParams(noise_sd=4.0, doc_sd=0.0, band_snap_prob=0.0, early_penalty=0.0)
    short = draws(params, item(i=0, j=0), 2000).mean()
    long = draws(params, item(i=5, j=5), 2000).mean()
    assert long - short == pytest.approx(10 * params.length_slope, abs=0.6)
    rand = draws(params, item(i=5, j=5, hay="rand"), 2000).mean()
    assert rand - long == pytest.approx(params.rand_hay_leniency, abs=0.6)
    means = {n: draws(params, item(needle=n, i=0, j=0), 2000).mean() for n in ("neg", "con", "ner")}
    assert sorted(means, key=means.get) == ["neg", "ner", "con"]


def test_band_snapping_clusters_scores_on_band_edges():
    params = sim.SimJudgeParams(noise_sd=10.0, doc_sd=0.0, band_snap_prob=0.5)
    values = draws(params, item(), 3000)
    on_edges = np.isin(values, params.band_edges).mean()
    plain = np.isin(draws(PLAIN, item(), 3000), params.band_edges).mean()
    assert on_edges > 0.45 and plain < 0.1
    assert sim.snap(params, 62) == 50 and sim.snap(params, 63) == 75 and sim.snap(params, 100) == 100


def test_document_effect_is_shared_by_all_items_of_a_document():
    params = sim.SimJudgeParams(doc_sd=5.0)
    a = sim.mean_score(params, item(doc_id="doc-a", i=1, j=1)) - sim.mean_score(params, item(doc_id="", i=1, j=1))
    b = sim.mean_score(params, item(doc_id="doc-a", i=4, j=0)) - sim.mean_score(params, item(doc_id="", i=4, j=0))
    assert a == pytest.approx(b) and a != 0.0
    effects = [sim.doc_effect(params, f"d{k}") for k in range(2000)]
    assert np.std(effects) == pytest.approx(5.0, rel=0.1)


def test_controls_score_near_100_and_low():
    params = sim.SimJudgeParams()
    assert draws(params, item(control="null_edit"), 500).mean() > 95
    assert draws(params, item(control="negative"), 500).mean() < 15
    assert draws(params, item(needle="none"), 500).mean() > 90


def test_items_are_guessed_from_the_texts_without_a_corpus():
    base = "One sat. Two ran far. Three and four met. Five slept."
    assert sim.infer_item(base, base).needle == "none"
    assert sim.infer_item(base, base.replace(" ", "  ")).control == "null_edit"
    neg = sim.infer_item(base, base.replace("Two ran far.", "Two did not run far."))
    assert (neg.needle, neg.i, neg.j) == ("neg", 1, 2)
    con = sim.infer_item(base, base.replace("Three and four", "Three or four"))
    assert (con.needle, con.i, con.j) == ("con", 2, 1)
    assert sim.infer_item(base, base.replace("One", "Paris")).needle == "ner"
    assert sim.infer_item(base, "Completely different text. Nothing shared here.").control == "negative"
    text, value = sim.judge_answer(PLAIN, sim.infer_item(base, base), base, base)
    assert text == f"Score: {value}" and value > 80


def test_triples_are_deterministic_and_sensitive_to_the_needle():
    doc = "Marie Curie won two prizes. She was born in Warsaw. Hi."
    assert sim.triples(doc) == sim.triples(doc)
    assert sim.triples(doc)[0] == {"subject": "Marie", "relation": "Curie", "object": "won two prizes"}
    assert len(sim.triples(doc)) == 2  # "Hi." has fewer than three words
    assert sim.triples(doc.replace("was born", "was not born")) != sim.triples(doc)


@given(st.text(alphabet="ab .!?\n\t", max_size=60))
def test_sentences_split_after_end_punctuation_like_the_look_behind_pattern(text):
    assert sim.sentences(text) == [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]


def test_sentences_keep_their_punctuation():
    assert sim.sentences("  Wow?! Yes.  No...\nmaybe! x.y ") == ["Wow?!", "Yes.", "No...", "maybe!", "x.y"]
