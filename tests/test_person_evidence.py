"""Persons named after a title or office (engine.needles.person_evidence): the
title is no part of the name, and a full name written once after a title is a
person by the document's own words. Sentences of our own, real en_core_web_sm
parses (the `nlp` session fixture)."""

from __future__ import annotations

import pytest

from needle_helpers import sentence_entity_options

# one document: two people each named once, after an office; one after a gendered title
DOCUMENT = (
    "The council met on Tuesday to discuss the new bridge. Senator Helen Marsh said the plan would cost too much. "
    "The mayor, who had argued for the bridge for years, disagreed. Dr. Tomas Ruiz told the meeting that traffic "
    "had doubled. Mrs. Clara Boyd asked for a second survey. A vote is expected next month."
)


@pytest.fixture(scope="module")
def options(nlp):
    return sentence_entity_options(nlp, DOCUMENT)


def test_a_full_name_written_once_after_an_office_is_a_person_to_swap(options):
    assert options["Senator Helen Marsh said the plan would cost too much."] == {"Helen Marsh": ("Tomas Ruiz",)}
    assert options["Dr. Tomas Ruiz told the meeting that traffic had doubled."] == {"Tomas Ruiz": ("Helen Marsh",)}


def test_a_name_after_a_gendered_title_is_neither_span_nor_replacement(options):
    # "Mrs. Tomas Ruiz" must not arise, nor "Senator Clara Boyd" from a name the document genders
    assert options["Mrs. Clara Boyd asked for a second survey."] == {}
    assert all("Clara Boyd" not in r for sentence in options.values() for r in sentence.values())


def test_aliases_link_the_names_of_one_sentence_and_never_across_a_sentence_end():
    # a hand-built Doc (no trained model): sentence starts and PERSON entities set by us
    import spacy
    from spacy.tokens import Doc

    from engine.needles.person_evidence import aliases

    sentences = [
        ("Ana Lima , known as Annie Lee or Ana Lee , sang .".split(), [(0, 2), (5, 7), (8, 10)]),
        ("The hall was full for Tom Byrne .".split(), [(5, 7)]),
        ("Called Ted Byrne by friends , Paul Ward played .".split(), [(1, 3), (6, 8)]),
    ]
    words, starts, ents = [], [], []
    for sentence, people in sentences:
        labels = ["O"] * len(sentence)
        for start, end in people:
            labels[start : end] = ["B-PERSON"] + ["I-PERSON"] * (end - start - 1)
        words += sentence
        starts += [True] + [False] * (len(sentence) - 1)
        ents += labels
    doc = Doc(spacy.blank("en").vocab, words=words, sent_starts=starts, ents=ents)
    found = aliases(doc, lambda span: span, lambda text: set(text.split()))
    assert found == {
        "Ana Lima": {"Annie", "Lee", "Ana"},
        "Annie Lee": {"Ana", "Lima", "Lee"},
        "Ana Lee": {"Ana", "Lima", "Annie", "Lee"},
    }  # "Tom Byrne" ends one sentence, "Called Ted Byrne" opens the next: no link
