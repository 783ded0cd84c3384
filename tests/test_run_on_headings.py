"""engine.corpus.run_on_headings.heading_opening on a parse given as data,
where the parse the test needs (a name apposed to the first of coordinated
roles) is one the session's model gives only to other wordings; the
sentences parsed by the real model are in tests/test_sentence_gate.py and
tests/test_hay_check.py."""

from __future__ import annotations

import pytest
from spacy.tokens import Doc

from engine.corpus.run_on_headings import heading_opening


def _parsed(nlp, text: str, heads: dict[int, int], deps: dict[int, str]):
    """`text` parsed by the session's model, its heads and labels replaced where given."""
    parsed = nlp(text)
    doc = Doc(
        parsed.vocab,
        words=[t.text for t in parsed],
        spaces=[bool(t.whitespace_) for t in parsed],
        heads=[heads.get(t.i, t.head.i) for t in parsed],
        deps=[deps.get(t.i, t.dep_) for t in parsed],
        tags=[t.tag_ for t in parsed],
        pos=[t.pos_ for t in parsed],
        ents=[f"{t.ent_iob_}-{t.ent_type_}" if t.ent_type_ else "O" for t in parsed],
    )
    return doc[:]


def test_a_name_apposed_to_coordinated_roles_is_one_subject(nlp):
    text = "Opposition party ABC lawmaker and former treasury undersecretary Tarik Demir told a press conference that the harbour plan was wrong."
    # 0 Opposition 1 party 2 ABC 3 lawmaker 4 and 5 former 6 treasury 7 undersecretary 8 Tarik 9 Demir 10 told
    heads = {0: 1, 1: 3, 2: 3, 3: 10, 4: 3, 5: 7, 6: 7, 7: 3, 8: 9, 9: 3}
    deps = {0: "compound", 1: "compound", 2: "compound", 3: "nsubj", 4: "cc", 5: "amod", 6: "compound", 7: "conj", 8: "compound", 9: "appos"}
    span = _parsed(nlp, text, heads, deps)
    assert [t.text for t in span[8:10]] == ["Tarik", "Demir"] and span[8].ent_type_ == "PERSON"
    assert not heading_opening(span) and not heading_opening(span, hay=True)
    # the same words with the name a subject of its own beside the roles: a heading run into a name
    assert heading_opening(_parsed(nlp, text, heads | {9: 10}, deps | {9: "nsubj"}))


def _sentence_in_context(nlp, sentence: str):
    doc = nlp(f"The ferry left Cork at noon. {sentence} The crew stayed in Cork.")
    return next(s for s in doc.sents if s.text.startswith(sentence[:20]))


@pytest.mark.parametrize(
    "sentence",
    [
        # issue 27, session 18: a noun phrase of time before a name, the name's verb taking it as its adverb
        "The last time Anna Berg visited the island was in May.",
        # a day's name after a noun: its adverb of time, not a sentence's first word
        "A Cork Examiner report Tuesday says the talks stalled.",
        # a role noun before a name says what the name is (WordNet's noun.person), however the parser hangs it
        "In the end, her younger brother Tom Byrne sold the farm.",
        # the words of a hyphenated age said twice: a form, not a title the sentence restates
        "The 30-year-old Dane has beaten 41-year-old Tom Byrne of Cork, who had to retire with a sore back.",
        "The harbour master identified the skipper as 52-year-old Tom Byrne of Cork, and the deckhand as 19-year-old "
        "Ann Walsh of Cobh.",
        # words said again inside a name ("Women's Day"): the name is a topic, not a title restated in lowercase
        "She posted a photo with her husband and urged women to mark International Women's Day by sharing a photo.",
    ],
)
def test_prose_with_a_noun_before_a_name_is_no_heading(nlp, sentence):
    span = _sentence_in_context(nlp, sentence)
    assert not heading_opening(span) and not heading_opening(span, hay=True)


def test_a_place_noun_before_a_place_name_in_a_heading_is_not_read_as_its_kind(nlp):
    # "center" can name a place (or a player), but only a noun whose first sense is a person, before a person's
    # name, is taken as saying what the name is: the tagger's places are looser, and "front and center" a heading
    span = _sentence_in_context(nlp, "Safety front and center Kinsale has made the pier the big issue in its campaign.")
    assert heading_opening(span)


def test_a_noun_that_cannot_name_a_possessed_name_ends_a_heading(nlp):
    # issue 27, session 18: "convergence" names no place or group: a heading run into "Norway's plan ..."
    span = _sentence_in_context(nlp, "Price convergence Norway's plan to cap the fares began after the storm.")
    assert heading_opening(span) and heading_opening(span, hay=True)


def test_a_bare_heading_hung_on_a_place_name_is_refused_in_hay_too(nlp):
    # a two-word heading whose noun says nothing of a place, run into the place that opens the sentence
    span = _sentence_in_context(nlp, "Water dispute Ireland also plans to close the bay to foreign boats next year.")
    assert heading_opening(span) and heading_opening(span, hay=True)
    # a noun naming the place's kind before it is prose
    span = _sentence_in_context(nlp, "Host nation Ireland opened the games in May.")
    assert not heading_opening(span) and not heading_opening(span, hay=True)
