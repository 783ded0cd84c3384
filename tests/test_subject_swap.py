"""A coordinated subject swapped only where the agreement and the claim survive (engine.needles.subject_swap).

Sentences of our own (issue 27, session 18: news retention)."""

from __future__ import annotations

import pytest


from needle_helpers import any_shape_swap, con_refusal, edited


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a past verb shows no number: "or" keeps it grammatical and weakens the claim
        (
            "The harbour masters and the ferry crews blamed the storm for the delay.",
            "The harbour masters or the ferry crews blamed the storm for the delay.",
        ),
        # a modal shows no number
        ("The old mill and the bakery would have welcomed the new road.", "The old mill or the bakery would have welcomed the new road."),
        # "have" agrees with the nearest member under "or": a plural last member keeps it
        (
            "The town clerk and several councillors have criticised the harbour plan.",
            "The town clerk or several councillors have criticised the harbour plan.",
        ),
    ],
)
def test_a_subject_whose_verb_keeps_its_agreement_is_swapped(nlp, text, expected):
    assert edited(nlp, any_shape_swap, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "The ferry crews and the harbour master have criticised the plan.",  # "... or the harbour master have"
        "The ferry crews and the harbour masters are angry about the plan.",  # a present "are": number, and generic readings
        "The mayor and his deputy were old friends from school.",  # a copula with a plural predicate noun
        "The mayor and the council signed a deal with the ferry line.",  # a joint act
        "The mayor and the council met the ferry owners on Monday.",  # a symmetric verb
        "The mayor and the council held their first meeting in May.",  # "their": the pair as a whole
        "The two ferries and the tug collided in the fog.",  # no complement: the reciprocal readings
        "Fishermen and sailors can moor at the new pier.",  # free choice: "or" offers each member
        "The pier and the slipway were chosen as the sites of the new market.",  # a plural said of the subject
        "She and her brother painted the boat in June.",  # a pronoun member
        # singular nouns under one determiner: one person named by two roles, "or" only renames (session 18)
        "The Galway harbour master and former ferry skipper had been expected to run for the council.",
    ],
)
def test_a_subject_that_needs_both_members_or_agrees_with_them_is_refused(nlp, text):
    assert con_refusal(nlp, text) == (True, {"subject"})


def test_a_tally_of_counted_members_is_refused(nlp):
    # each count holds together with the others: "12 sloops or 30 rowing boats" is no tally
    assert con_refusal(nlp, "In 1850, 12 sloops and 30 rowing boats were moored in the harbour.")[1] == {"subject"}
