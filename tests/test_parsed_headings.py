"""Headings fused onto a stored sentence, read from its parse
(engine.corpus.parsed_headings), on sentences written for these tests and
parsed by the real model as a document is: each form is refused for rand hay
(engine.corpus.hay_check) and as a needle (engine.corpus.sentence_gate) with
its name, and prose of the same shape is refused by neither."""

from __future__ import annotations

import pytest

from engine.corpus.hay_check import hay_refusals
from engine.corpus.segmentation import document_sentences
from engine.corpus.sentence_gate import needle_refusals

BEFORE = "The ferry left Cork at noon."


def refusals(nlp, text: str) -> tuple[str, str]:
    """(hay refusal, needle refusal) of `text`, stored after BEFORE as one sentence."""
    doc = nlp(f"{BEFORE} {text}")
    sentences = document_sentences(doc)
    assert sentences.texts == (BEFORE, text), sentences.texts  # kept whole: the case is parsed_headings'
    return hay_refusals(doc, sentences.spans)[1], needle_refusals(doc, sentences.spans)[1]


@pytest.mark.parametrize(
    "text, why",
    [
        # a subheading ending in a word the tagger takes for a verb, before "The <name> <noun>" as subject
        ("Dredging of the channel - Progress and scope The Walsh administration has yet to decide on the pier.", "capital_determiner"),
        # a related article's title ending in a name, before "The <name> <noun>"
        ("The Sheriff of Cobh - Cork makes debut in the Harbour War The Byrne administration invested in the pier.", "capital_determiner"),
        # a related article's title whose object the tagger takes for a verb, before "The <name> <noun>" as subject
        ("Ann Byrne's death penalty campaign clears hurdle The Human Rights Watch report draws on interviews with skippers.", "capital_determiner"),
        # a subheading ending in a particle the tagger takes for a preposition, before "The <noun>"
        ("Quay crew called in The harbour was closed as the storm reached the bay.", "capital_determiner"),
        # an indefinite subheading the parser hangs on the name as a compound
        ("A harbour legend Walsh sailed the bay for forty years.", "indefinite_heading"),
        ("A musical pioneer Byrne wrote and recorded two songs every band in Cork had to learn.", "indefinite_heading"),
        # a standfirst describing the person, run into the first sentence
        ("Sailing star in a new port for her latest big-screen offering Ann Walsh is taking the helm of a trawler.", "descriptive_heading"),
        # a plural topic heading ending in a place, before the name that opens the clause
        ("Questions about China Obama did little to calm the row over the harbour levy.", "plural_heading"),
        # a digest title with a headline's participle, hung by the parser as a second subject of the clause's verb
        ("Charter aimed at safer quays Cork's harbour board has banned night fishing from the pier.", "participle_heading"),
        # a headline ending in a place, then a person's name opening the clause
        ("Skipper found dead in London Ann Walsh, a trawler owner from Kinsale, was found dead on Monday.", "place_heading"),
        ("Diplomat found dead in Paris John Smith, a senior diplomat at the embassy, was found dead on Monday.", "place_heading"),
        # a subheading ending in an abstract noun before the name that is the subject
        ("Quiet heroism Walsh, a native of Cobh, came to the harbour forty years ago as a deckhand.", "abstract_heading"),
    ],
)
def test_a_heading_read_from_the_parse_is_refused_for_hay_and_needles(nlp, text, why):
    assert refusals(nlp, text) == (why, why)


@pytest.mark.parametrize(
    "text",
    [
        # a paper's name with its article, after a verb: an object, or a preposition's
        "Harbour chief Ann Walsh edited The Examiner magazine while on the board.",
        "The board disputed the account in The Irish Times story about the pier.",
        # "A" marking a class, not an article
        "Class A shares in the ferry firm rose by 4 percent on Monday.",
        # God's possessive, capitalised in a speech after a preposition
        "We give thanks for the mercies of His providence and for the harvest of the year.",
        # a role before a name, without an indefinite article; an indefinite role with its name after "named"
        "Former harbour master Ann Walsh said the pier would reopen in May.",
        "A singer named Walsh went on to record the song in Cork.",
        "A Labour spokesman said the pier would reopen in May.",
        # a title with a preposition and a definite article before a name
        "President of the Harbour Court Ann Walsh said the pier was safe.",
        "Minister for Foreign Affairs Tom Byrne said the pier would reopen.",
        # a plural noun with its place as the subject; a place and a title before a name
        "Residents of Cork said the levy was unfair.",
        "Residents of Cork and Cobh said the levy was unfair.",
        "Talks with Ireland Prime Minister Ann Walsh said were going well.",
        # sentences that open with a name
        "Walsh said the pier would reopen in May.",
        "The European Union agreed to fund the pier in May.",
        # a participle hung on a subject that opens with an article, a relative clause after the second name
        "A ferry called Star of Cobh from operator Harbour Lines, which runs the route, is the largest in the bay.",
        # a place and a name side by side after a fronted participle (its comma left out), or inside a name
        "Speaking in Cork Ann Walsh said the pier would reopen in May.",
        "Born in Cork Ann Walsh moved to Cobh as a child.",
        "The case was heard in the US District Court for the District of Columbia last week.",
        # a role before a name, with no article: a person's noun, not an abstract one
        "Harbour master Ann Walsh, a native of Cobh, said the pier would reopen.",
        "Celebrity chef Ann Walsh opened a restaurant on the quay.",
        # a name with an apostrophe said twice, not side by side; a comparative before a people's name
        "The ferry sailed from O'Brien's Quay with Ann O'Brien on board.",
        "More ferries for less Islanders also say that the new timetable suits them.",
    ],
)
def test_prose_of_the_same_shape_is_refused_by_neither(nlp, text):
    assert refusals(nlp, text) == ("", "")


@pytest.mark.parametrize(
    "text, why",
    [
        # a headline ending in a place written with an apostrophe, then the sentence opening with it again
        ("Harbour revival comes to Ma'an Ma'an, a town in the south, has rebuilt its quay and two piers.", ("name_repeated", "name_repeated")),
        # a verbless subheading ending in a comparative, before a capitalised plural common noun (hay only)
        ("More ferries for less Commuters also say that the new timetable suits them.", ("capital_mid_sentence", "")),
    ],
)
def test_headings_read_by_hay_check_words(nlp, text, why):
    """Two of engine.corpus.hay_check's word forms, widened here: a name with
    an apostrophe said twice in a row, and a capitalised plural common noun
    after a comparative."""
    assert refusals(nlp, text) == why
