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
