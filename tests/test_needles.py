"""Needle rules on real spaCy parses (the `nlp` session fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.conjunctions import swap_conjunction
from engine.needles import (
    EntityOption,
    apply_entity,
    document_entity_texts,
    entity_options,
    entity_shape,
    find_needle_sentence,
    scan_order,
)


def first_sentence(nlp, text):
    return next(iter(nlp(text).sents))


# -- ner --------------------------------------------------------------------

NER_TEXT = (
    "John Smith met Mary Jones in Paris (France) on 3 May 1990. "
    "Later, Mary Jones moved to London, England, on 5 June 1991. "
    "She spoke French and English. The Microsoft office hired John Smith."
)


def test_entity_options_labels_and_multi_token_spans(nlp):
    doc = nlp(NER_TEXT)
    texts = document_entity_texts(doc)
    assert "ORG" not in texts  # only PERSON, GPE, LOC, LANGUAGE, DATE
    options = entity_options(next(iter(doc.sents)), texts)
    by_text = {o.text: o for o in options}
    assert by_text["John Smith"].replacements == ("Mary Jones",)  # multi-token, one unit
    assert by_text["Paris"].replacements == ("England", "France", "London")
    assert by_text["3 May 1990"].replacements == ("5 June 1991",)  # same label and shape
    sentence = next(iter(doc.sents)).text.strip()
    for option in options:
        assert sentence[option.start : option.end] == option.text
        assert option.text not in option.replacements


def test_apply_entity_keeps_whitespace_and_punctuation(nlp):
    doc = nlp(NER_TEXT)
    sentence = next(iter(doc.sents))
    options = {o.text: o for o in entity_options(sentence, document_entity_texts(doc))}
    text = sentence.text.strip()
    assert apply_entity(text, options["France"], "England") == (
        "John Smith met Mary Jones in Paris (England) on 3 May 1990."
    )
    assert apply_entity(text, options["John Smith"], "Mary Jones").startswith("Mary Jones met Mary Jones in")
    with pytest.raises(ValueError, match="not at"):
        apply_entity("Something else entirely.", options["France"], "England")


def test_entity_without_a_same_label_alternative_is_no_option(nlp):
    doc = nlp("Alice Walker lives in Berlin. She likes the city.")
    options = entity_options(next(iter(doc.sents)), document_entity_texts(doc))
    assert options == ()


def test_quoted_entities_and_person_after_an_article_are_no_options(nlp):
    doc = nlp('In "United States v. Smith", the court in Texas ruled for Mexico. The Chincha met John Smith and Mary Jones in Peru.')
    texts = document_entity_texts(doc)
    first, second = (entity_options(s, texts) for s in doc.sents)
    assert [o.text for o in first] == ["Texas", "Mexico"]  # not the quoted "United States"
    assert [o.text for o in second] == ["John Smith", "Mary Jones", "Peru"]  # not "the Chincha"


def test_date_shapes():
    assert entity_shape("1947", "DATE") == entity_shape("1923", "DATE")
    assert entity_shape("15 May 1873", "DATE") == entity_shape("2 June 1990", "DATE")
    assert entity_shape("four years", "DATE") != entity_shape("March", "DATE")
    assert entity_shape("September 1988", "DATE") != entity_shape("October 13, 1985", "DATE")
    assert entity_shape("the Netherlands", "GPE") != entity_shape("Belgium", "GPE")


def test_possessive_and_ambiguous_entities_are_not_replacements(nlp):
    doc = nlp("Paul Simon met Art Garfunkel. Paul Simon's band played in Ohio. Art Garfunkel sang.")
    texts = document_entity_texts(doc)
    assert all(not t.endswith("'s") for values in texts.values() for t in values)


# -- the needle sentence ------------------------------------------------------


def test_scan_order_alternates_and_stays_inside():
    assert scan_order(5, 20, 2) == [5, 4, 6, 3, 7]
    assert scan_order(1, 3, 5) == [1, 0, 2]
    assert scan_order(4, 10, 0) == [4]


def test_fallback_scans_to_the_nearest_admitting_sentence(nlp):
    plain = "The museum opened in 1990."
    text = " ".join([plain] * 4 + ["The team won the league and the cup."] + [plain] * 6)
    sentences = list(nlp(text).sents)
    assert len(sentences) == 11
    middle = 5
    found = find_needle_sentence(sentences, middle, 5, swap_conjunction)
    assert found is not None and found[0] == 4
    assert found[1].apply(sentences[4].text.strip()) == "The team won the league or the cup."
    assert find_needle_sentence(sentences, middle, 0, swap_conjunction) is None  # beyond the radius
    far = list(nlp(" ".join([plain] * 10 + ["The team won the league and the cup."])).sents)
    assert find_needle_sentence(far, 4, 5, swap_conjunction) is None  # 6 away from the middle


def test_entity_option_is_compact_struct():
    option = EntityOption(0, 5, "GPE", "Paris", ("Rome",))
    assert apply_entity("Paris is big.", option, "Rome") == "Rome is big."


# -- the hand-checked sample (tests/data/hand_check_sample.jsonl) ------------

HAND_CHECK = Path(__file__).parent / "data" / "hand_check_sample.jsonl"


def test_hand_check_sample_is_complete():
    rows = [json.loads(line) for line in HAND_CHECK.read_text(encoding="utf-8").splitlines()]
    assert [sum(r["needle"] == n for r in rows) for n in ("neg", "con", "ner")] == [30, 30, 30]
    assert all(isinstance(r["fluent"], bool) and isinstance(r["correct"], bool) for r in rows)
    assert all(r["note"] for r in rows if not (r["fluent"] and r["correct"]))  # every failure explained
