"""The neg needle's second form: "not" in the clause a writer reports (engine.needles.negation_reported).

Sentences of our own (issue 27, session 18: news retention)."""

from __future__ import annotations

import pytest

from engine.needles.negation import negate
from engine.needles.negation_reported import reported_negation
from needle_helpers import edited, first_sentence


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The harbour master said the new pier would open in May.", "The harbour master said the new pier would not open in May."),
        ("The inspectors found that the crane was safe.", "The inspectors found that the crane was not safe."),
        ("The mayor told reporters the ferry company owed the town money.", "The mayor told reporters the ferry company did not owe the town money."),
    ],
)
def test_the_reported_clause_is_negated_and_the_reporting_verb_never(nlp, text, expected):
    assert edited(nlp, negate, text) is None  # the first form refuses a reporting verb
    assert edited(nlp, lambda sent: reported_negation(sent)[0], text) == expected


@pytest.mark.parametrize(
    ("text", "why"),
    [
        # a clause before the verb: often a quotation whose marks the dataset lost
        ("The pier will open in May, the harbour master said.", "no one clause after the verb"),
        ("The harbour master said we must open the pier in May.", "first or second person: a quotation without its marks"),
        ('The harbour master said the pier "would open in May".', "quotation mark in the sentence"),
        ("The council denied that the pier had been sold.", "denying verb"),  # "denied that it had not been": a double negative
        ("The harbour master asked whether the pier would open in May.", "indirect question or subordinate clause"),
        ("The harbour master said he believed the pier would open in May.", "the clause reports another"),
        ("The harbour master said the pier would never open.", "already negative"),
        ("The pier opened in May.", "no reported clause"),
    ],
)
def test_a_clause_that_may_be_a_quotation_or_that_not_would_garble_is_refused(nlp, text, why):
    assert reported_negation(first_sentence(nlp, text)) == (None, why)
