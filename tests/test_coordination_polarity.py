"""The con rule's downward-entailing and non-veridical operators
(engine.needles.coordination_polarity), on real spaCy parses (the `nlp`
session fixture), sentences of our own.

Each refused sentence holds its coordination under an operator that licenses
"any"/"ever", where a reader takes "A or B" and "A and B" as saying the
same; each near miss is a coordination just outside the operator's reach that
the rule must still swap."""

from __future__ import annotations

import pytest


from engine.needles.coordination_polarity import polarity_refusal
from needle_helpers import any_shape_swap, con_refusal, edited, first_sentence

REFUSED = {
    "downward operator": [
        # prepositions of concession or indifference: the claim holds whichever member is meant
        "The harbour stayed open despite rumours of a strike or fears about the weather.",
        "The ferry kept sailing in spite of the wind and the fog.",
        "The tax applies regardless of income and age.",
        # negative and aversive verbs over their complement
        "The council doubts that the mayor will sell the pier or the market.",
        "The mayor refrained from closing the pier and the market.",
        "The board hesitated to sell the pier or the market.",
        # "stop" over a clause
        "The council stopped funding the pier and the market in May.",
        # adjectives of unwillingness, unlikelihood, absence, above or as the predicate of "be"
        "The board is reluctant to sell the pier or the market.",
        "It is unlikely that the council will sell the pier or the market.",
        "The old quay is free of ice and debris all winter.",
        # "too ... to"
        "The storm was too strong to repair the pier and the quay.",
        # a frequency adverb of negative quantity
        "The fishermen rarely sold crab or lobster in the town.",
    ],
    "antecedent": [
        "The pier closes if the council sells the boats or the nets.",
        "If the wind rises or the tide turns, the pier closes.",
        "The ferry left before the mayor signed the papers or the letters.",
    ],
    "universal restrictor": ["The fine applies to anyone who parks on the pier or the quay."],
}


@pytest.mark.parametrize(("why", "text"), [(why, text) for why, texts in REFUSED.items() for text in texts])
def test_swaps_under_a_downward_operator_are_refused_with_their_reason(nlp, why, text):
    refused, reasons = con_refusal(nlp, text)
    assert refused and why in reasons


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the operator in another clause of the sentence
        (
            "The club played despite the rain, and the fans sang and danced on the terrace.",
            "The club played despite the rain, and the fans sang or danced on the terrace.",
        ),
        ("The mayor doubts it, and the council sold the pier and the market.",
         "The mayor doubts it, and the council sold the pier or the market."),
        ("The council voted on the pier and the market after the mayor arrived.",
         "The council voted on the pier or the market after the mayor arrived."),
        # "as if" is a manner, not a condition
        ("He spoke as if he owned the pier and the quay.", "He spoke as if he owned the pier or the quay."),
        # "stop" over a thing, "eager to", "likely that", "often", "the drivers who": no licensor ("enough to"
        # licenses none either, but its infinitive is an ability: free choice, tests/test_con_read18.py)
        ("The police stopped a car and a van on the pier.", "The police stopped a car or a van on the pier."),
        ("The board is eager to sell the pier and the market.", "The board is eager to sell the pier or the market."),
        ("It is likely that the council will sell the pier and the market.",
         "It is likely that the council will sell the pier or the market."),
        ("The fishermen often sold crab and lobster in the town.", "The fishermen often sold crab or lobster in the town."),
        ("The drivers who park on the pier and the quay pay a fine.",
         "The drivers who park on the pier or the quay pay a fine."),
    ],
)
def test_coordinations_outside_the_operators_reach_are_still_swapped(nlp, text, expected):
    assert edited(nlp, any_shape_swap, text) == expected


def test_the_check_reads_the_conjunction_it_is_given(nlp):
    sent = first_sentence(nlp, "The board is reluctant to sell the pier or the market, and the mayor left.")
    reasons = {t.lower_ + str(t.i): polarity_refusal(t) for t in sent if t.lower_ in ("and", "or")}
    assert sorted(reasons.values()) == ["", "downward operator"]


@pytest.mark.parametrize(
    ("why", "text"),
    [
        # issue 27, session 14: the standard of an equative comparison licenses "any" ("as fast as anyone")
        ("downward operator", "The new ferry is as fast as the old ferry and the hovercraft."),
        # a verb of hindering over "from" + an act: "kept them from straying or drowning" = from either
        ("downward operator", "The fence keeps the sheep from straying and drowning."),
        ("downward operator", "The new rule stops anglers from fishing or camping on the bank."),
        # the first half of a comparative correlative is a condition on the second
        ("antecedent", "The longer the talks and the delays, the angrier the fishermen become."),
        ("antecedent", "The more the crew mends nets and sails, the sooner the boat leaves."),
        # issue 27, session 14: other comparatives in the first half ("the further"/"the fewer", tagged as
        # plain adjectives), and the frame inside a reported clause, not at the sentence start
        ("antecedent", "The further north and the colder it got, the less the crew spoke."),
        ("antecedent", "A survey found that the further away a village lies from a port and the poorer its road, then the more it pays for fuel."),
        ("antecedent", "Economists said the higher the taxes and the lower the wages, the weaker the recovery would be."),
        ("antecedent", "Officials said the further the talks go and the fewer concessions are made, the more anxious the markets become."),
        # a noun modified by a negative adjective licenses "any" in its complement
        ("downward operator", "The clerk said a rumour is an insufficient reason to close or sell the pier."),
    ],
)
def test_equatives_hindering_verbs_and_comparative_correlatives_are_refused(nlp, why, text):
    refused, reasons = con_refusal(nlp, text)
    assert refused and why in reasons


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the equative in the first conjunct only
        ("The new ferry is as fast as the old one and carries more cars.",
         "The new ferry is as fast as the old one or carries more cars."),
        # "from" naming a source, not an act
        ("She kept the nets from the old boat and the new one.", "She kept the nets from the old boat or the new one."),
        # "free" before a noun means without charge, no operator
        ("The council offers a free ferry to Arran and a bus to the pier.",
         "The council offers a free ferry to Arran or a bus to the pier."),
        # the second half of a comparative correlative is its consequent
        ("The more it rains, the later the crew mends the nets and the sails.",
         "The more it rains, the later the crew mends the nets or the sails."),
        # "the further" + a noun with no second comparative after a comma: no correlative
        ("She said the further shore was wild and the nearer one was calm, and the ferry left.",
         "She said the further shore was wild or the nearer one was calm, and the ferry left."),
    ],
)
def test_coordinations_beside_equatives_hindering_verbs_and_correlatives_are_still_swapped(nlp, text, expected):
    assert edited(nlp, any_shape_swap, text) == expected


def test_a_spaced_hyphen_ends_the_standard_of_a_comparison_as_a_dash_does(nlp):
    # issue 27, session 18: one dash rule (coordination_lists.is_dash) for the example frame and the comparison
    # standard: " - " closes the standard like " -- "; a hyphen inside a word ("well-kept") does not
    dashed = "The new ferry is bigger than the old one - it carries cars and bikes to the island."
    assert edited(nlp, any_shape_swap, dashed) == dashed.replace("cars and", "cars or")
    assert con_refusal(nlp, "The new ferry is bigger than the old well-kept boats and barges.") == (True, {"downward operator"})
