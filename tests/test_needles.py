"""Needle rules on real spaCy parses (the `nlp` session fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.needles import (
    EntityOption,
    apply_entity,
    document_entity_texts,
    entity_options,
    entity_shape,
    find_needle_sentence,
    negate,
    scan_order,
    swap_conjunctions,
)


def first_sentence(nlp, text):
    return next(iter(nlp(text).sents))


# -- neg --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the paper's own examples
        ("The museum was popular with tourists.", "The museum was not popular with tourists."),
        ("She has worked at the library since 2001.", "She has not worked at the library since 2001."),
        ("The author published the book in 1990.", "The author did not publish the book in 1990."),
        # do-support agrees in tense and person
        ("He works at the factory near the river.", "He does not work at the factory near the river."),
        ("The brothers work at the factory near the river.", "The brothers do not work at the factory near the river."),
        ("From 1765 until 1772, he had a shop at Castlehill.", "From 1765 until 1772, he did not have a shop at Castlehill."),
        # passive: "not" after the first auxiliary
        ("The bridge was built by the army in 1850.", "The bridge was not built by the army in 1850."),
        ("The bridge will be rebuilt by the city.", "The bridge will not be rebuilt by the city."),
        # existential "be" is a copula even when tagged VERB
        ("In addition, there are several decibel scales.", "In addition, there are not several decibel scales."),
    ],
)
def test_negation_rules(nlp, text, expected):
    assert negate(first_sentence(nlp, text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The workers did not strike that year.",  # dep neg
        "He never returned to the city.",  # lemma never
        "No trains stopped at the station.",  # lemma no
        "The workers didn't strike that year.",  # n't
        "A list of rivers in Romania.",  # no verbal root
        "Sunny skies over the harbour at dawn.",  # no verbal root
    ],
)
def test_negation_skips(nlp, text):
    assert negate(first_sentence(nlp, text)) is None


def test_negation_never_edits_quoted_speech(nlp):
    text = 'He held a sign bearing the words "Jesus Gives Peace, Jesus is Alive, Jesus is Lord".'
    result = negate(first_sentence(nlp, text))
    assert result is None or '"Jesus Gives Peace, Jesus is Alive, Jesus is Lord"' in result


def test_negation_requires_a_subject(nlp):
    assert negate(first_sentence(nlp, "Go to the station and buy two tickets.")) is None


# -- con --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The team won the league and the cup.", "The team won the league or the cup."),
        ("And the crowd cheered or left the stadium.", "Or the crowd cheered and left the stadium."),
        ("AND the ships sailed OR sank.", "OR the ships sailed AND sank."),
        ("Marks & Spencer sells food and clothing in London.", "Marks & Spencer sells food or clothing in London."),
    ],
)
def test_conjunction_swap_keeps_casing_and_ampersand(nlp, text, expected):
    assert swap_conjunctions(first_sentence(nlp, text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Either the mayor or the council decides.",
        "Both the mayor and the council agreed.",
        "It is unclear whether he left or stayed.",
        "Between 1990 and 2000 the town grew.",
        "Marks & Spencer sells food in London.",  # "&" is never swapped
        "He and his wife were born in Ohio.",  # subject coordination: "or" would break agreement
        "The brothers Paolo and Domenico Condello were arrested in January 1988.",  # inside the subject
        "The Hay Head and Linley workings were both on a large scale.",  # "both"
    ],
)
def test_conjunction_skips(nlp, text):
    assert swap_conjunctions(first_sentence(nlp, text)) is None


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
    found = find_needle_sentence(sentences, middle, 5, swap_conjunctions)
    assert found is not None and found[0] == 4
    assert found[1] == "The team won the league or the cup."
    assert find_needle_sentence(sentences, middle, 0, swap_conjunctions) is None  # beyond the radius
    far = list(nlp(" ".join([plain] * 10 + ["The team won the league and the cup."])).sents)
    assert find_needle_sentence(far, 4, 5, swap_conjunctions) is None  # 6 away from the middle


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


def test_rules_still_produce_the_hand_approved_neg_and_con_sentences(nlp):
    """Regression: re-parsing each approved needle sentence on its own gives
    the same perturbation the person read and approved."""
    rows = [json.loads(line) for line in HAND_CHECK.read_text(encoding="utf-8").splitlines()]
    approved = [r for r in rows if r["needle"] in ("neg", "con") and r["fluent"] and r["correct"]]
    assert len(approved) >= 55
    rule = {"neg": negate, "con": swap_conjunctions}
    for row, doc in zip(approved, nlp.pipe(r["needle_before"] for r in approved)):
        assert rule[row["needle"]](next(iter(doc.sents))) == row["needle_after"], row["n"]
