"""The con rule's defects from the session-17 independent read, on real
spaCy parses (the `nlp` session fixture), sentences of our own: each refused
sentence is a swap a reader takes as saying the same (the protocol's W),
each near miss one the rule must still make."""

from __future__ import annotations

import pytest

from needle_helpers import con_refusal

REFUSED = {
    # a noun of lack negates its "of" object: "want of A and B" = "want of A or B"
    "negative operator": [
        "The villagers lived in real want of fuel and medicine that winter.",
        "The mill hands suffered a long shortage of bread and coal.",
    ],
    # a coordination in the standard of "as ... as", which the parser hangs outside the "as" phrase
    "downward operator": [
        "Her fear is as groundless as the notion to buy from the traders what the fleet may want would be rash and wasteful.",
        "The plan is as doomed as the effort to carry from the mill what the river may sink would be slow and costly.",
    ],
    # two compound classifiers of one singular head, parsed as nmod: "[think tank and lobby] circuit"
    "modifiers of one head": [
        "The council meant to fund the Nordic think tank and lobby circuit.",
    ],
}

SWAPPED = [
    "He ran as fast as he could and won the race.",  # the first conjunct before the comparison
    "The ferry sold tickets as well as maps and guides.",  # "as well as" adds, compares nothing
    "The pier was older than the harbour, and the town grew and prospered.",  # past the comparison's stretch
    "He spent a year painting and sailing boats.",
]


@pytest.mark.parametrize(("reason", "text"), [(r, t) for r, texts in REFUSED.items() for t in texts])
def test_refused(nlp, reason, text):
    refused, reasons = con_refusal(nlp, text)
    assert refused and reason in reasons


@pytest.mark.parametrize("text", SWAPPED)
def test_still_swapped(nlp, text):
    refused, _reasons = con_refusal(nlp, text)
    assert not refused
