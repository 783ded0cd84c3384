"""The con rule's whole, range and option classes (engine.needles.coordination_parts),
on real spaCy parses (the `nlp` session fixture), sentences of our own.

Each refused sentence is a swap a reader takes as saying the same or as no
claim at all; each near miss is a coordination just outside the class that
the rule must still swap."""

from __future__ import annotations

import pytest


from needle_helpers import any_shape_swap, con_refusal, edited

# each class with sentences of our own
REFUSED = {
    # counted parts of a counted whole: "or" breaks the sum
    "partition": [
        "The clinic saw 3,000 patients, of whom 1,200 were treated at home and 1,800 in the wards.",
        "The fund raised 90 million, of which 50 million went to schools and 40 million to roads.",
    ],
    # a plural spelt out after a dash or a colon, at any length
    "members of a plural": [
        "The company will deliver the parcels - Galway, Sligo and Tralee - by Friday.",
        "The ferry called at the southern ports: Cork, Cobh and Kinsale.",
        # no count, and the parser reads no apposition: a hyphen for the dash (its compound), a spaced dash (a
        # second object), or the plural taken as the list's first member
        "The regent ordered the garrison to give up the forts-Dunmore and the old castle at Kinsale-without delay.",
        "The regent ordered the garrison to give up the forts - Dunmore and the old castle at Kinsale - without delay.",
        "The envoy was told to hand back the islands-Rathlin and Tory.",
        # each member with phrases of its own, the parser joining the second to the clause (session 19: sotu-1818)
        "The captain was told to hand over the ships-the Aurora at once to the harbour master who had come to claim "
        "it, and the Swift, which was still under repair, when the carpenters had finished.",
        "The bishop ordered the steward to sell the farms-Glenmore without delay to the first buyer who offered a "
        "fair price, and Ardnacrusha, which lies beside the river, at the spring fair.",
        # the members' own "and" hung inside the last member ("trainees and skippers" under "crewed by"):
        # the appositions have no conjunction of their own (issue 27, session 22, read 5921)
        "The ferry crews list the problems of working on the islands: a strict harbour master, a fleet largely "
        "crewed by trainees and skippers all competing for the best routes.",
    ],
    # the members one after another
    "sequence": [
        "The prize was offered successively to the baker, the weaver and the miller.",
        "The title passed in succession to his son and his grandson.",
    ],
    # the two ends of one span
    "span ends": [
        "The fair lasted six years, beginning in May 1901 and ending in June 1907.",
        # the parser coordinates "finished" with the gerund under "started by"
        "At the dinner the mayor started by thanking the crew and finished by praising the new harbour master.",
        # the start hung on the first member, the end a clause of its own
        "The strike lasted for three weeks beginning on May 2, when the dockers walked out; "
        "and it ending on May 23, when the port reopened.",
    ],
    # one end of a from-to range
    "range": [
        "The market sold everything from apples and pears to woollen blankets.",
        "The boats ranged in size from dinghies to trawlers and ferries.",
        "Visitors will find their favourites, from jigs and reels to ballads and laments.",
    ],
    # the examples of a sentence that opens "For example,"
    "examples": [
        "For example, the council repaired the pier and the slipway.",
        "For instance, farmers in the valley grow barley, oats or rye.",
        # whole clauses given as examples: either one serves
        "For example, the council bought the old mill, and a firm from Cork took over the quay.",
        # two clauses with subjects of their own: two examples
        "For example, Westport has a deep harbour, and Clifden is close to the fishing grounds.",
    ],
    # the infinitive of a noun of ability or permission, at any length
    "free choice": [
        "Citizens have the right to speak or write freely about the council.",
        "The harbour master has the authority to inspect, detain or release any vessel.",
        # nouns of the means to act state a capacity, as the nouns of ability do (issue 27, session 22)
        "The council has the tools to repair the pier or to build a new one.",
        "The island has the resources to train pilots and to buy new ferries.",
    ],
}


@pytest.mark.parametrize(("why", "text"), [(why, text) for why, texts in REFUSED.items() for text in texts])
def test_swaps_of_parts_ranges_and_options_are_refused_with_their_reason(nlp, why, text):
    refused, reasons = con_refusal(nlp, text)
    assert refused and why in reasons


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a plural with its members after a comma only: the parser's list ("mothers, heroes and martyrs")
        ("The town honoured its sailors, fishermen and pilots in May.",
         "The town honoured its sailors, fishermen or pilots in May."),
        # a clause of its own after the dash: its subject restates nothing
        ("The mill cut its prices - bakers and brewers bought more flour that year.",
         "The mill cut its prices - bakers or brewers bought more flour that year."),
        # a coordination inside the dashed member's own phrase, or after a dash that closes the members
        ("The bishop sold the farms-Glenmore to Kelly and Burke in May.",
         "The bishop sold the farms-Glenmore to Kelly or Burke in May."),
        ("The bishop sold the farms - Glenmore and Kilbeg - to the Kellys, and the mill to Burke.",
         "The bishop sold the farms - Glenmore and Kilbeg - to the Kellys, or the mill to Burke."),
        # numbers on each side, but no partitive whole
        ("The clinic treated 1,200 patients at home and 1,800 in the wards.",
         "The clinic treated 1,200 patients at home or 1,800 in the wards."),
        # no adverb of sequence
        ("The prize was offered to the baker and the miller.", "The prize was offered to the baker or the miller."),
        # two starts, no end
        ("The fair began in May and opened again in June.", "The fair began in May or opened again in June."),
        # "from" without "to": no range
        ("The boats came from Cork and Cobh in May.", "The boats came from Cork or Cobh in May."),
        # an example sentence's opener elsewhere: no example
        ("The council repaired the pier and the slipway, for example.",
         "The council repaired the pier or the slipway, for example."),
        # one subject's two acts in an example sentence: one example, left to the swap
        ("For example, the council repaired the pier and painted the slipway.",
         "For example, the council repaired the pier or painted the slipway."),
        # the end of something with no start on the first member
        ("The strike lasted for three weeks, and it ended the season for the ferries.",
         "The strike lasted for three weeks, or it ended the season for the ferries."),
        # manner adverbs on one verb: not a scale
        ("The crew worked quickly and quietly on the deck.", "The crew worked quickly or quietly on the deck."),
        # a finite verb is a clause of its own, not one of the infinitive's options
        ("The treaty gives each state the right to leave freely and sets out the steps for doing so.",
         "The treaty gives each state the right to leave freely or sets out the steps for doing so."),
        # "from A and B" before an infinitive of purpose: no range
        ("They borrowed money from friends and neighbours to buy the boat.",
         "They borrowed money from friends or neighbours to buy the boat."),
        # the destinations of a journey, not the end of a range
        ("The ferry sailed from Cork to Cobh, Kinsale and Youghal.", "The ferry sailed from Cork to Cobh, Kinsale or Youghal."),
        # a noun that is no ability or permission
        ("They had a plan to repair the pier and the slipway.", "They had a plan to repair the pier or the slipway."),
    ],
)
def test_coordinations_just_outside_those_classes_are_still_swapped(nlp, text, expected):
    assert edited(nlp, any_shape_swap, text) == expected


def test_an_example_sentence_opens_with_any_spelling_of_the_one_marker_list(nlp):
    # issue 27, session 18: the example sentence reads coordination_lists.EXAMPLE_FRAME_MARKERS, which hold
    # "e.g" and "eg" as well: a sentence opening "Eg," lists examples as one opening "For example," does
    assert con_refusal(nlp, "Eg, the ferry carries cars and bikes to the island.") == (True, {"examples"})
    assert con_refusal(nlp, "E.g, the ferry carries cars and bikes to the island.") == (True, {"examples"})
