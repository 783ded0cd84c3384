"""Triple parsing, canonicalisation (real spaCy lemmatiser) and the Jaccard score."""

from __future__ import annotations

import json

import pytest

from engine.contracts import CallResult
from engine.prompts import load_prompt
from engine.prompts.triples import (
    UnparseableTriples,
    canonical_text,
    canonical_triples,
    jaccard,
    lemmatise_relations,
    parse_triples,
)


def extraction(*triples: tuple[str, str, str]) -> str:
    return json.dumps({"triples": [{"subject": s, "relation": r, "object": o} for s, r, o in triples]})


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("The Eiffel Tower", "eiffel tower"),
        ("Émile Zola", "emile zola"),
        ("an  Old   Town", "old town"),
        ("A cat", "cat"),
        ("Anna Karenina", "anna karenina"),  # "an"/"a" only as whole leading words
        ("the", "the"),  # an article alone is the whole field, not a leading article
        ("U.S.", "us"),
        ("Newton's laws", "newtons laws"),
        ("well-known, (very) popular!", "well known very popular"),
        ("Café «Crème»", "cafe creme"),
        ("1 500 metres", "1 500 metres"),
    ],
)
def test_canonical_text(raw, canonical):
    assert canonical_text(raw) == canonical


def test_relations_are_lemmatised_with_spacy():
    lemmas = lemmatise_relations(("was born in", "is born in", "wrote", "writes", "did not win"))
    assert lemmas["was born in"] == lemmas["is born in"]
    assert lemmas["wrote"] == lemmas["writes"] == "write"
    assert lemmas["did not win"].split()[-1] == "win" and "not" in lemmas["did not win"]


def test_surface_variants_of_one_fact_become_one_triple():
    variants = (
        ("The Beatles", "were formed in", "Liverpool"),
        ("beatles", "was formed in", "Liverpool."),
        ("The  Beatles", "Were Formed In", "liverpool"),
    )
    assert len(canonical_triples(variants)) == 1
    # subject and object are not lemmatised: only the relation is
    assert len(canonical_triples((("The Beatle", "was formed in", "Liverpool"), variants[0]))) == 2


def test_jaccard_on_hand_computed_sets():
    a = frozenset({("x", "be", "y"), ("y", "have", "z"), ("z", "be in", "w")})
    b = frozenset({("x", "be", "y"), ("y", "have", "z"), ("w", "own", "v")})
    assert jaccard(a, b) == pytest.approx(100 * 2 / 4)
    assert jaccard(a, a) == 100.0
    assert jaccard(a, frozenset()) == 0.0
    assert jaccard(frozenset(), frozenset()) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (extraction(("Ada", "wrote", "notes")), (("Ada", "wrote", "notes"),)),
        ('[["Ada", "wrote", "notes"]]', (("Ada", "wrote", "notes"),)),
        ('```json\n{"triples": [{"subject": "Ada", "predicate": "wrote", "object": "notes"}]}\n```', (("Ada", "wrote", "notes"),)),
        ('Here are the triples:\n{"triples": []}\nDone.', ()),
        ('<think>list facts</think>{"triples": [["a", "b", "c"]]}', (("a", "b", "c"),)),
    ],
)
def test_parse_triples_accepts_common_shapes(text, expected):
    assert parse_triples(text) == expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ('{"triples": [{"subject": "Ada", "relation": "wrote", "obj', "no valid JSON"),
        ('{"facts": []}', "triples"),
        ('{"triples": [["Ada", "wrote"]]}', "triple 0"),
        ('{"triples": [{"subject": "Ada", "relation": 3, "object": "x"}]}', "triple 0"),
        ("The document says Ada wrote notes.", "no valid JSON"),
    ],
)
def test_parse_triples_rejects_what_is_not_a_triple_list(text, reason):
    with pytest.raises(UnparseableTriples, match=reason):
        parse_triples(text)


def ok(text: str, finish_reason: str = "stop") -> CallResult:
    return CallResult(status="ok", text=text, finish_reason=finish_reason)


def test_triples_prompt_scores_the_overlap_of_the_two_extractions():
    prompt = load_prompt("triples")
    first = extraction(("The bridge", "opened in", "1932"), ("The bridge", "carries", "two lanes"), ("bridge", "spans", "the river"))
    second = extraction(("bridge", "opens in", "1932"), ("The bridge", "carries", "two lanes"), ("The bridge", "did not span", "river"))
    verdict = prompt.verdict((ok(first), ok(second)))
    # shared: (bridge, open in, 1932) and (bridge, carry, two lanes); union 4
    assert (verdict.status, verdict.scale) == ("ok", "0-100")
    assert verdict.score == pytest.approx(50.0) and verdict.raw_score == verdict.score


def test_empty_union_is_unparseable_never_a_default():
    verdict = load_prompt("triples").verdict((ok('{"triples": []}'), ok("[]")))
    assert verdict.status == "unparseable" and verdict.score is None and "either document" in verdict.detail


def test_one_side_empty_scores_zero():
    verdict = load_prompt("triples").verdict((ok(extraction(("a", "b", "c"))), ok('{"triples": []}')))
    assert (verdict.status, verdict.score) == ("ok", 0.0)


def test_extraction_failures_name_the_document():
    prompt = load_prompt("triples")
    cut = prompt.verdict((ok(extraction(("a", "b", "c"))), ok('{"triples": [["a", "b"', finish_reason="length")))
    assert cut.status == "unparseable" and "document 2" in cut.detail and "max_tokens=4096" in cut.detail
    refused = prompt.verdict((CallResult(status="refused", text="blocked", error_kind="content_filter"), ok("[]")))
    assert refused.status == "refused" and "document 1" in refused.detail
