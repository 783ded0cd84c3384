"""The neg needle (engine.needles.negation) on real spaCy parses (the `nlp` session fixture).

The skip cases pin the defect classes of issue 14, each with a sentence from
the bundled Wikipedia sample or the issue's own example."""

from __future__ import annotations

import pytest

from engine.needles.negation import negate
from needle_helpers import edited, first_sentence


@pytest.mark.parametrize(
    ("text", "expected", "rule"),
    [
        # the paper's own examples
        ("The museum was popular with tourists.", "The museum was not popular with tourists.", "neg:copula"),
        ("She has worked at the library since 2001.", "She has not worked at the library since 2001.", "neg:aux"),
        ("The author published the book in 1990.", "The author did not publish the book in 1990.", "neg:do-support"),
        # do-support agrees in tense and person
        ("He works at the factory near the river.", "He does not work at the factory near the river.", "neg:do-support"),
        ("The brothers work at the factory near the river.", "The brothers do not work at the factory near the river.", "neg:do-support"),
        ("From 1765 until 1772, he had a shop at Castlehill.", "From 1765 until 1772, he did not have a shop at Castlehill.", "neg:do-support"),
        # passive: "not" after the first auxiliary
        ("The bridge was built by the army in 1850.", "The bridge was not built by the army in 1850.", "neg:aux"),
        ("The bridge will be rebuilt by the city.", "The bridge will not be rebuilt by the city.", "neg:aux"),
        # existential "be" is a copula even when tagged VERB
        ("In addition, there are several decibel scales.", "In addition, there are not several decibel scales.", "neg:copula"),
    ],
)
def test_negation_rules(nlp, text, expected, rule):
    sent = first_sentence(nlp, text)
    edit = negate(sent)
    assert edit is not None and edit.apply(text) == expected
    assert edit.rule == rule
    assert text[edit.start : edit.end] == edit.before  # the audit trail points at the edited span
    assert expected[edit.start : edit.start + len(edit.after)] == edit.after


@pytest.mark.parametrize(
    "text",
    [
        "The workers did not strike that year.",  # dep neg
        "He never returned to the city.",  # lemma never
        "No trains stopped at the station.",  # lemma no
        "The workers didn't strike that year.",  # n't
        "A list of rivers in Romania.",  # no verbal root
        "Go to the station and buy two tickets.",  # no subject
    ],
)
def test_negation_skips_negated_and_verbless_sentences(nlp, text):
    assert edited(nlp, negate, text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Nothing came of this.",  # issue 14: "Nothing did not come of this"
        "No one attended the meeting in the town.",
        "Nobody knew the answer to the question.",
        "None of the ships survived the storm.",
        "Neither team scored in the first half.",
        "Few critics liked the film when it opened.",
        "The town hardly changed in the following century.",
    ],
)
def test_no_double_negative_with_a_negative_subject_or_determiner(nlp, text):
    assert edited(nlp, negate, text) is None


def test_a_few_and_a_little_are_not_negative(nlp):
    assert edited(nlp, negate, "The few remaining copies were sold in 1990.") == "The few remaining copies were not sold in 1990."
    assert edited(nlp, negate, "The little village grew in the 1900s.") == "The little village did not grow in the 1900s."
    assert edited(nlp, negate, "Little is known about his early life.") is None


@pytest.mark.parametrize(
    "text",
    [
        # bundled sample, doc 27085061: "His videos did not record as ... received"
        'His videos recorded as "The Fully Sick Rapper" while quarantined received over two million hits and led to '
        "the World Health Organization (WHO) contacting him to help promote World Tuberculosis Day.",
        # issue 14: "The security did not bring about by the 2002 peace settlement has led"
        "The security brought about by the 2002 peace settlement has led to growth.",
    ],
)
def test_a_reduced_relative_participle_is_not_negated_as_the_root(nlp, text):
    assert edited(nlp, negate, text) is None


def test_not_never_lands_in_a_subordinate_clause(nlp):
    assert edited(nlp, negate, "Because the river flooded the town.") is None  # a subordinate clause split off as a sentence
    # the main clause is negated, not the "when" clause
    assert edited(nlp, negate, "When Helward goes to survey the land ahead, he discovers that time passes more quickly.") == (
        "When Helward goes to survey the land ahead, he does not discover that time passes more quickly."
    )


def test_negation_never_edits_quoted_speech(nlp):
    text = 'He held a sign bearing the words "Jesus Gives Peace, Jesus is Alive, Jesus is Lord".'
    result = edited(nlp, negate, text)
    assert result is None or '"Jesus Gives Peace, Jesus is Alive, Jesus is Lord"' in result
    assert edited(nlp, negate, 'The pastor said: "The church is full every Sunday."') == 'The pastor did not say: "The church is full every Sunday."'
    assert edited(nlp, negate, '"The church is full every Sunday."') is None


def test_a_quotation_spanning_sentences_is_never_negated(nlp):
    # bundled sample, doc 8722094: the quotation opens a sentence earlier
    doc = nlp('He said: "We came here at dawn. He walked in and the temperature of the room changed." The crowd left.')
    first, quoted, after = doc.sents
    assert negate(quoted) is None
    assert negate(after) is not None and negate(after).apply(after.text.strip()) == "The crowd did not leave."
    assert negate(quoted, opened="") is not None  # the same sentence out of its quotation is negated


@pytest.mark.parametrize(
    "text",
    [
        "She has also introduced more than 50 bills.",  # "has not also introduced"
        "The company requested a sale price of $2 million instead.",
        "The union was active in organizing faculty as well.",
    ],
)
def test_modifiers_that_read_oddly_under_negation_are_skipped(nlp, text):
    assert edited(nlp, negate, text) is None
