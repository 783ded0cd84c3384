"""The con needle (engine.needles.conjunctions) on real spaCy parses (the `nlp` session fixture).

The skip cases pin the defect classes of issue 14, each with a sentence from
the bundled Wikipedia sample or the issue's own example."""

from __future__ import annotations

import pytest

from engine.needles.conjunctions import FIXED_PHRASES, swap_conjunction
from needle_helpers import edited, first_sentence


@pytest.mark.parametrize(
    ("text", "expected", "rule"),
    [
        ("The team won the league and the cup.", "The team won the league or the cup.", "con:and->or"),
        ("He may take the bus or the train to work.", "He may take the bus and the train to work.", "con:or->and"),
        ("The ships sailed OR sank.", "The ships sailed AND sank.", "con:or->and"),  # casing kept
        ("Marks & Spencer sells food and clothing in London.", "Marks & Spencer sells food or clothing in London.", "con:and->or"),
    ],
)
def test_one_conjunction_swapped_keeping_casing(nlp, text, expected, rule):
    sent = first_sentence(nlp, text)
    edit = swap_conjunction(sent)
    assert edit is not None and edit.apply(text) == expected and edit.rule == rule
    assert text[edit.start : edit.end] == edit.before


def test_exactly_one_swap_and_phrases_before_clauses(nlp):
    # bundled sample, doc 8721572: two "and"s; the phrase-level one is swapped, once
    text = "The Chincha fertilized their fields with dead birds and guano, and this knowledge was passed on to later peoples."
    assert edited(nlp, swap_conjunction, text) == (
        "The Chincha fertilized their fields with dead birds or guano, and this knowledge was passed on to later peoples."
    )


def test_the_pick_depends_on_the_sentence_only(nlp):
    text = "He studied law and literature in Dublin, Paris and Rome and later taught history or music."
    picks = {edited(nlp, swap_conjunction, text) for _ in range(3)}
    assert len(picks) == 1 and None not in picks


# every class of conjunction that must stay as it is, each pinned by real sentences
SKIPPED = {
    "correlative": ["Either the mayor or the council decides.", "It is unclear whether he left or stayed."],
    "both": ["Both the mayor and the council agreed.", "The Hay Head and Linley workings were both on a large scale."],
    "subject": ["He and his wife were born in Ohio."],  # "or" would break agreement
    "sentence-initial": ["And the crowd cheered loudly."],  # a discourse "And"
    "alias-or": [
        "The fungi, or mycobionts, are part of the lichen.",  # issue 14
        "The cap stone (or slab) was laid in the wall.",
        "The town is known as Newport, or simply Port.",
    ],
    # bundled sample, doc 27085143
    "quotation": ['Miss Hewitt said that the "lack of a piano encourages gambling and other violations of the rules."'],
    "fixed-phrase": [
        "The price of the stock rose more or less steadily over the year.",
        "The band played rock and roll in the clubs of Hamburg.",
        "The list includes towns, villages and so on.",
        "By and large the reforms worked in the villages.",
        "The band recorded twenty or so songs in 1990.",
        "He wrote novels and/or plays for the stage.",
        # bundled sample, doc 27084311: "one being at the Strand, London, or the other in Edinburgh"
        "He kept two shops, one being at the Strand, London, and the other in Edinburgh.",
    ],
    "between": ["The treaty settled the border between France and Spain."],  # issue 14: "between X or Y"
    "reciprocal": [
        "The two brothers met each other in Paris and Rome.",
        "The two clubs played one another in Leeds and York.",
        "The farmers and the traders worked together in the market.",
        "In 1901 he married Anna and Marie in turn.",
    ],
    "name": [
        "The Pyrenees conifer and mixed forests ecoregion covers the mountains.",  # issue 14
        "The project was funded by the American Recovery and Reinvestment Act.",
        "He visited Bosnia and Herzegovina in 1996.",
    ],
}


@pytest.mark.parametrize(
    "text", [pytest.param(text, id=f"{kind}-{n}") for kind, texts in SKIPPED.items() for n, text in enumerate(texts)]
)
def test_conjunctions_that_must_stay_are_not_swapped(nlp, text):
    assert edited(nlp, swap_conjunction, text) is None


def test_a_quotation_opened_in_an_earlier_sentence_is_seen(nlp):
    doc = nlp('He said: "We came here at dawn. He walked in and the temperature of the room changed." They left.')
    quoted = list(doc.sents)[1]
    assert swap_conjunction(quoted) is None
    assert swap_conjunction(quoted, opened="") is not None  # the same sentence out of its quotation is swapped


def test_fixed_phrase_list_is_documented():
    assert ("more", "or", "less") in FIXED_PHRASES and ("rock", "and", "roll") in FIXED_PHRASES
