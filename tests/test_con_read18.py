"""The con rule's defect classes from the session-18 independent read, on
real spaCy parses (the `nlp` session fixture), sentences of our own: each
refused sentence is a swap a reader takes as saying the same (the
protocol's W) or one the protocol leaves unsettled (the rule abstains), each
near miss one the rule must still make."""

from __future__ import annotations

import pytest

from needle_helpers import con_refusal

REFUSED = {
    # a classifier shared by two bare nouns (session-15 ruling): "or" names the same set
    "members of a plural": [
        "The new pier was built with foreign-made steel and machinery.",
        "The port authority runs state-level clinics and training centres for sailors.",
        "The hospital buys imported drugs and equipment.",
        # a common noun as the classifier, the second with no compound of its own, a quality adjective before
        # (session 19, news-67)
        "The survey found that farmers have different household duties and habits in the dry season.",
        # two bare nouns as the "of" phrase of a bare plural: the generic plural names the same set (session 19, sotu-1810)
        "By widening the streets, sources of smoke and noise would be removed from the town.",
        "Engineers traced sources of smoke and noise near the quay.",
        # with a determiner or an adjective on the plural too (session-20 ruling, "the evil spirits of A and B",
        # "other charges of war crimes and insurrection"; it replaces session 19's near miss "the prices of A and B")
        "The prices of fish and bread were high in the spring.",
        "The auditors listed the old claims of theft and arson.",
        "The court heard other charges of war crimes and mutiny.",
        # another preposition that sorts the plural (session 22, read 5921: "restrictions on voting or registration")
        "The harbour board set new limits on salmon and trout.",
        "Islanders face new restrictions on parking or camping near the pier.",
    ],
    # relational adjectives coordinated on one head, at any length: kinds of one set or of one thing
    "modifiers of one head": [
        "The harbour towns were torn by religious, ethnic, and regional rivalries.",
        "The island faces a political, economic and social crisis.",
    ],
    # a phrase after the pair counts its members: "or" leaves one member and no count
    "collective": [
        "With a storm warning and a broken winch just two of their worries, the crew stayed ashore.",
        "The ferry called at Kilrush and Tarbert, the two ports of the estuary, before noon.",
        "The mayor toured Kilrush and Tarbert, two towns she knew well.",
    ],
    # prepositions that exclude their object as a set, as "without" does
    "downward operator": [
        "The damage went beyond broken windows and loose tiles to the church roof.",
        "Besides herring and mackerel, the trawlers landed a few crabs.",
        "Nobody except the harbour master and his deputy held a key.",
        "Aside from the ferry and the bus, there is no way onto the island.",
    ],
    # the infinitive of a word of sufficiency names what it makes possible (ability: free choice);
    # readiness ("prepared to") is not settled by the protocol: abstain
    "free choice": [
        "The council has enough money to repair the pier and the slipway.",
        "The harbour is deep enough to take ferries and trawlers.",
        "The cooperative has sufficient boats to fish in the bay and in the open sea.",
        "The council is prepared to repair the pier and the slipway.",
        "The crews were ready to sail to Kilrush and Tarbert.",
    ],
}

SWAPPED = [
    "They built new roads and bridges.",  # a quality adjective asserts a trait
    "The council cut oil prices and interest rates.",  # a common noun compounds with the first only
    "Engineers traced sources of black smoke and noise near the quay.",  # an adjective of the first's own
    "The study of rivers and lakes took him ten years.",  # a singular head: the protocol's M, not a set
    "The tax on wine and tobacco rose in May.",  # a singular head with "on": one tax on both
    "He spent five years of study and travel abroad.",  # a counted head measures both
    "The insurers studied the claims of the buyer and the seller.",  # members with determiners: two holders
    "The court heard charges of piracy, war crimes and desertion.",  # a classifying noun on one plural of a list
    "The court tried them for war crimes and desertion.",  # a mass noun after the plural: the noun is the first's alone
    "The island suffered long, bitter and costly disputes.",  # three qualities: a list
    "The mayor visited Kilrush and Tarbert, and two boats followed her.",  # a new clause, no count of the pair
    "The council will expand the port in 2030 and beyond.",  # "beyond" as an adverb is a member
    "The council had enough money, and it repaired the pier and the slipway.",  # outside the infinitive
    "The town hired enough staff and opened the pier.",
    # a count opening the main clause after a phrase is its subject, not a count of the pair
    "Driven by the spring tide and the wind, the two trawlers drifted onto the bar.",
]


CASES = [(text, reason) for reason, texts in REFUSED.items() for text in texts] + [(text, None) for text in SWAPPED]


@pytest.mark.parametrize(("text", "reason"), CASES)
def test_each_class_is_refused_with_its_reason_and_each_near_miss_swapped(nlp, text, reason):
    refused, reasons = con_refusal(nlp, text)
    assert refused == (reason is not None)
    assert reason is None or reason in reasons
