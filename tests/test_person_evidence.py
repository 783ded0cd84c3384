"""Persons named after a title or office (engine.needles.person_evidence): the
title is no part of the name, and a full name written once after a title is a
person by the document's own words. Sentences of our own, real en_core_web_sm
parses (the `nlp` session fixture)."""

from __future__ import annotations

import pytest

from engine.needles.person_evidence import quoted_alone
from needle_helpers import offered_replacements, sentence_entity_options

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


def test_aliases_link_the_names_of_one_sentence_and_never_across_a_sentence_end():
    # a hand-built Doc (no trained model): sentence starts and PERSON entities set by us
    import spacy
    from spacy.tokens import Doc

    from engine.needles.person_evidence import aliases

    sentences = [
        ("Ana Lima , known as Annie Lee or Ana Lee , sang .".split(), [(0, 2), (5, 7), (8, 10)]),
        ("The hall was full for Tom Byrne .".split(), [(5, 7)]),
        ("Called Ted Byrne by friends , Paul Ward played .".split(), [(1, 3), (6, 8)]),
    ]
    words, starts, ents = [], [], []
    for sentence, people in sentences:
        labels = ["O"] * len(sentence)
        for start, end in people:
            labels[start : end] = ["B-PERSON"] + ["I-PERSON"] * (end - start - 1)
        words += sentence
        starts += [True] + [False] * (len(sentence) - 1)
        ents += labels
    doc = Doc(spacy.blank("en").vocab, words=words, sent_starts=starts, ents=ents)
    found = aliases(doc, lambda span: span, lambda text: set(text.split()))
    assert found == {
        "Ana Lima": {"Annie", "Lee", "Ana"},
        "Annie Lee": {"Ana", "Lima", "Lee"},
        "Ana Lee": {"Ana", "Lima", "Annie", "Lee"},
    }  # "Tom Byrne" ends one sentence, "Called Ted Byrne" opens the next: no link


# a singer's biography: a song named after a person, printed alone between quotation marks (tagged PERSON)
SONGS = (
    "Senator Helen Marsh opened the festival in the harbour town on Friday. "
    'Marsh wrote and recorded "Johnny Lee Walker" and "Sweet Harbour Rose" in the spring of 1958. '
    "Dr. Tomas Ruiz gave the prizes to the young singers that evening. "
    'The old record of "Johnny Lee Walker," her best song, sold well. '
    'Ruiz said the boy of "Johnny Lee Walker" was a farmer from the hills. '
    "Helen Marsh thanked the crowd and left the town by train."
)


def test_a_name_printed_alone_in_quotation_marks_is_a_title_not_a_person(nlp):
    options = sentence_entity_options(nlp, SONGS)
    offered = offered_replacements(options)
    assert "Johnny Lee Walker" not in offered  # offered for "Helen Marsh" without the rule
    assert all("Johnny Lee Walker" not in sentence for sentence in options.values())  # nor a span
    assert options["Dr. Tomas Ruiz gave the prizes to the young singers that evening."] == {"Tomas Ruiz": ("Helen Marsh",)}


@pytest.mark.parametrize(
    ("document", "quoted"),
    [
        ('He sang "Ada Lane" twice.', True),
        ("The hit \u2018Ada Lane,\u2019 sold well.", True),
        ('"We won," Ada Lane said.', False),  # a quotation's closing mark before the name
        ("the Lanes' Ada Lane' fan", False),  # an apostrophe closing a word is no opening mark
        ('He said "Ada Lane is here" to us.', False),  # the name is not all that is quoted
    ],
)
def test_quoted_alone_needs_the_name_alone_between_a_pair_of_marks(document, quoted):
    assert quoted_alone("Ada Lane", document) is quoted


# a surname after a courtesy title, the house style of British news for every mention after the first
COURTESY = (
    "Daniel Hale, the chief engineer, opened the site on Monday. Mr Hale said the tunnel would open in May. "
    "Victor Ortiz, a council member, asked about the cost. Mr Ortiz said the budget had doubled. "
    "Laura Reyes chairs the transport board. Ms Reyes said the board would vote next week. "
    "The work is expected to last two years."
)


@pytest.fixture(scope="module")
def courtesy(nlp):
    return sentence_entity_options(nlp, COURTESY)


def test_a_surname_after_a_courtesy_title_is_replaced_by_one_the_document_writes_after_a_title_of_its_gender(courtesy):
    # "Mr Hale" -> "Mr Ortiz": the title is no part of the name; never "Mr Reyes" (the document writes "Ms Reyes")
    assert courtesy["Mr Hale said the tunnel would open in May."] == {"Hale": ("Ortiz",)}
    assert courtesy["Mr Ortiz said the budget had doubled."] == {"Ortiz": ("Hale",)}
    # no other name the document writes after "Ms": no option, rather than "Ms Hale" or "Ms Daniel Hale"
    assert courtesy["Ms Reyes said the board would vote next week."] == {}


def test_a_surname_written_after_a_courtesy_title_replaces_only_a_name_after_one(courtesy):
    # "Victor Ortiz, a council member" never becomes "Reyes, a council member": the pool of bare names is as it was
    offered = {r for sentence, found in courtesy.items() if not sentence.startswith(("Mr ", "Ms ")) for rs in found.values() for r in rs}
    assert not offered & {"Hale", "Ortiz", "Reyes"}, offered


# an actor and a character, each named in full three times; the second sentence says which is the part
CAST = (
    "The new film of the old novel opened in London on Friday. {casting} "
    "Critics said Oliver Grant was better than Peter Vance in the 1990 version. "
    "Peter Vance later said the part had made his career. "
    "In the novel, James Carter marries the daughter of a vicar. James Carter is proud but kind. "
    "Oliver Grant met Peter Vance at the premiere."
)


@pytest.mark.parametrize(
    "casting",
    [
        "The actor Oliver Grant plays the character James Carter in it.",
        "The actor Oliver Grant is praised for his role as James Carter in it.",
        "The actor Oliver Grant starred as James Carter in it.",
        "The actor Oliver Grant portrayed James Carter in it.",
    ],
)
def test_a_character_in_a_story_is_neither_replaced_nor_a_replacement(nlp, casting):
    options = sentence_entity_options(nlp, CAST.format(casting=casting))
    offered = offered_replacements(options)
    assert "James Carter" not in offered  # offered for both actors without the rule
    assert all("James Carter" not in sentence for sentence in options.values())
    assert options["Peter Vance later said the part had made his career."] == {"Peter Vance": ("Oliver Grant",)}


def test_a_name_is_a_character_only_by_what_the_document_says_of_it(nlp):
    # the same people, nothing casting anyone: the third person stays a person to swap
    options = sentence_entity_options(nlp, CAST.format(casting="The actor Oliver Grant met James Carter in it."))
    assert "James Carter" in options["James Carter is proud but kind."]


SHARED_SURNAME = (
    "Julie Bennet and Heather Gallagher ran the harbour cafe for years. Julie Bennet opened it in 1990. "
    "Heather Gallagher joined in 1995. A photo of Mike and Julie Bennet on the pier was shown at the funeral. "
    "A photo of Ann Walsh and Julie Bennet hangs in the cafe. Julie Bennet was 80."
)


def test_a_full_name_after_a_lone_first_name_and_and_shares_its_surname(nlp):
    options = sentence_entity_options(nlp, SHARED_SURNAME)
    # "Mike and Heather Gallagher" would rename Mike too
    assert options["A photo of Mike and Julie Bennet on the pier was shown at the funeral."] == {}
    # after a full name the surname is the second person's own; and the name still replaces elsewhere
    assert options["A photo of Ann Walsh and Julie Bennet hangs in the cafe."].get("Julie Bennet") == ("Heather Gallagher",)
    assert "Julie Bennet" in options["Heather Gallagher joined in 1995."]["Heather Gallagher"]


GROUP_NAMED_FOR_ITS_CAUSE = (
    "The watchdog Free Speech for People wrote to Ann Walsh in May. Ann Walsh hired Tom Byrne in June. "
    "Tom Byrne will work on public corruption cases. Free Speech for People praised the hiring of Tom Byrne. "
    "Ann Walsh said Tom Byrne would start at once. Free Speech for People has asked for a hearing."
)


def test_a_person_tag_that_runs_on_with_for_and_a_capital_is_a_groups_name(nlp):
    # the tagger takes "Free Speech" of "Free Speech for People" for a person (issue 27: "McMaster" -> "Free Speech")
    options = sentence_entity_options(nlp, GROUP_NAMED_FOR_ITS_CAUSE)
    offered = offered_replacements(options)
    assert "Free Speech" not in offered
    assert options["Free Speech for People has asked for a hearing."] == {}
    assert options["Tom Byrne will work on public corruption cases."] == {"Tom Byrne": ("Ann Walsh",)}
