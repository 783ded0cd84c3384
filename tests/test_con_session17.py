"""The con rule's issue-27 session-17 classes, on real spaCy parses (the
`nlp` session fixture), sentences of our own: each refused sentence is a swap
a reader takes as saying the same (the protocol's W), each near miss one the
rule must still make."""

from __future__ import annotations

import pytest

from engine.needles.binomial_list import OF_TERMS, RELATIONAL_ADJECTIVES

from needle_helpers import any_shape_swap, con_refusal, edited

REFUSED = {
    # a WordNet term "X of Y" whose object the coordination continues
    "fixed term": [
        "The mill grew by its economies of scale and scope in the valley.",
    ],
    # two adjectives on one thing, one of them relational: kinds of one thing, not two traits
    "modifiers of one head": [
        "The valley went through a spiritual and moral crisis in those years.",
        "The economic and political turmoil of that winter emptied the harbour.",
        "Her social and cultural life revolved around the parish hall.",
        # two runs of singular nouns, each one compound: one head with two compound modifiers, or two things
        "The boats were sold to the regional law enforcement and coastguard agency last year.",
        "The town's water supply and sewage treatment plant was rebuilt last year.",
    ],
    # a counted span of time given for an infinitive offers each option, as a permission does
    "free choice": [
        "The harbour board was given two weeks to repair the pier or close it.",
    ],
    # a pair restricting a plural through a participle: the plural names the members of either
    "modifier of a plural": [
        "The inquiry read the harbour reports written in 1998 and 2004 that mention the pier.",
    ],
    # one member picked out of a pool: "or" names the same pool
    "one of a pool": [
        "It was one of those evenings and nights that the fishermen still talk about.",
    ],
    # any coordination inside a verbless example phrase opened by "for instance" / "for example" / "e.g."
    "examples": [
        "Parcels reach us in other ways - for instance, collecting them at a depot after a missed visit or from "
        "a locker, or sending them back by post.",
        "Boats waste fuel in other ways, e.g. idling at the quay after a late tide or near a busy slipway.",
    ],
}


@pytest.mark.parametrize("why,text", [(why, t) for why, texts in REFUSED.items() for t in texts])
def test_session_17_classes_are_refused_with_their_reason(nlp, why, text):
    refused, reasons = con_refusal(nlp, text)
    assert refused and why in reasons, reasons


@pytest.mark.parametrize(
    "text,expected",
    [
        # a term WordNet does not list: two things, "or" only weakens the claim
        ("The mill grew by its economies of labour and capital in the valley.",
         "The mill grew by its economies of labour or capital in the valley."),
        # adjectives of quality on one thing: two traits (the session-15 ruling, M)
        ("It was a long and bitter quarrel over the harbour.", "It was a long or bitter quarrel over the harbour."),
        # two things: the first run a single noun with its own article, the second ending in a plural
        ("The town built a new school and a sports hall.", "The town built a new school or a sports hall."),
        ("Ministers plan to cut port duty and ferry fares.", "Ministers plan to cut port duty or ferry fares."),
        # a span of time without a count, and a singular restricted through a participle
        ("The crew spent the day mending nets or painting hulls.", "The crew spent the day mending nets and painting hulls."),
        # "one of" before a single plural: nothing coordinated in the pool
        ("One of the boats sank, and the crew swam ashore.", "One of the boats sank, or the crew swam ashore."),
        # a clause after the marker states a claim of its own
        ("The storm cost the village dearly - for example, the pier collapsed and two boats were lost.",
         "The storm cost the village dearly - for example, the pier collapsed or two boats were lost."),
    ],
)  # fmt: skip
def test_coordinations_near_the_session_17_classes_are_still_swapped(nlp, text, expected):
    assert edited(nlp, any_shape_swap, text) == expected


def test_the_wordnet_tables_hold_the_terms_and_adjectives_the_rules_read():
    assert ("economy", "scale") in OF_TERMS and ("freedom", "speech") in OF_TERMS
    # a pertainym ("political" -> "politics") and a relational suffix on a noun stem ("spiritual" -> "spirit")
    assert {"political", "economic", "spiritual"} <= RELATIONAL_ADJECTIVES
    # qualities, also one with a noun stem but no relational suffix ("bloody" -> "blood")
    assert not {"long", "bitter", "bloody", "brutal"} & RELATIONAL_ADJECTIVES
