"""The con rule's fixed-phrase and joint classes (engine.needles.coordination_joint),
on real spaCy parses (the `nlp` session fixture), sentences of our own.

Each refused sentence is a swap that breaks a fixed phrase or says the same;
each near miss is a coordination just outside the class that the rule must
still swap."""

from __future__ import annotations

import pytest

from engine.needles.conjunctions import swap_conjunction
from engine.needles.coordination_joint import FIXED_PAIRS, fixed_pairs
from needle_helpers import con_refusal, edited, first_sentence

REFUSED = {
    # the same word on both sides: one phrase of degree or repetition
    "reduplication": [
        "The queue at the ferry grew longer and longer through the afternoon.",
        "The ships drifted closer and closer to the rocks.",
        "The old mill wheel turned round and round in the flood.",
    ],
    # two bare particles of place or direction: one movement
    "particle pair": [
        "Lorries drove in and out of the depot all night.",
        "The ferry sails to and fro across the narrow strait.",
    ],
    # dangers kept off together
    "protection": [
        "The new sea wall gives the village protection from floods and storms.",
        "The council felt powerless against the landlords and the banks.",
    ],
    # a list of three as the subject, parsed as an apposition and its conjunct: "A, B or C are"
    "subject": ["The grey heron, the little egret and the spoonbill are common on the marsh."],
    # fixed phrases: "X and again Y", "or thereabouts", "the ebb and flow"
    "fixed phrase": [
        "The river flooded the lower town in 1998 and again in 2007.",
        "The crossing to the island takes an hour or thereabouts.",
        "The harbour trade has followed the ebb and flow of the herring shoals.",
    ],
    # the size of a union of places
    "count of a union": ["The survey counted the population of the town and the valley."],
}


@pytest.mark.parametrize(("why", "text"), [(why, text) for why, texts in REFUSED.items() for text in texts])
def test_fixed_and_joint_coordinations_are_refused_with_their_reason(nlp, why, text):
    refused, reasons = con_refusal(nlp, text)
    assert refused and why in reasons


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # two different words, no particles: a plain coordination
        ("The queue at the ferry grew longer and slower through the afternoon.",
         "The queue at the ferry grew longer or slower through the afternoon."),
        # "in" with an object of its own is a place, not half of "in and out"
        ("The lorries parked in the yard and out on the road.", "The lorries parked in the yard or out on the road."),
        # "from" under a verb of movement, not of protection
        ("The fishermen came from Eastfield and Westfield to the fair.",
         "The fishermen came from Eastfield or Westfield to the fair."),
    ],
)
def test_coordinations_just_outside_those_classes_are_still_swapped(nlp, text, expected):
    assert edited(nlp, swap_conjunction, text) == expected


def test_fixed_pairs_are_the_pairs_a_corpus_writes_in_one_order_only():
    texts = [
        "They spent more on training and equipment. Cats and dogs were fed.",
        "Funds for training and equipment rose. Dogs and cats slept.",
        "Costs of training and equipment fell. Cats and dogs barked.",
        "The Training And equipment line is capitalised.",
    ]
    pairs = fixed_pairs(texts)
    assert "training and equipment" in pairs  # three documents, never reversed
    assert "cats and dogs" not in pairs  # reversed once
    assert fixed_pairs(texts[:2]) == frozenset()  # two documents are not enough


def test_a_pair_the_corpus_fixes_is_refused_only_where_the_count_says_so(nlp):
    text = "The firm cut its spending on training and equipment last year."
    sent = first_sentence(nlp, text)
    assert swap_conjunction(sent) is not None  # no count: swapped
    sent.doc.user_data[FIXED_PAIRS] = frozenset({"training and equipment"})
    assert swap_conjunction(sent) is None
    refused, reasons = con_refusal(nlp, text)
    assert not refused  # a fresh parse, without the count
