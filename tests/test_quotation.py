"""Quotation state and the attribution of a quotation (engine.needles.quotation),
read through the needle gate (engine.corpus.sentence_gate.needle_refusals) on
documents written for these tests, parsed by the real model."""

from __future__ import annotations

import pytest

from engine.corpus.cleaning import clean_text
from engine.corpus.segmentation import document_sentences
from engine.corpus.sentence_gate import needle_refusals

BEFORE = "Ann Walsh was angry about the leaks from the harbour board."
AFTER = "The board did not answer her on Friday."


def refusals(nlp, text: str) -> dict[str, str]:
    sentences = document_sentences(nlp(clean_text(text)))
    return dict(zip(sentences.texts, needle_refusals(sentences.spans[0].doc, sentences.spans)))


@pytest.mark.parametrize(
    "quotation, sentence, why",
    [
        # the segmenter ends the quotation's sentence at its "?" or "!": the attribution stands alone
        ('"Who decides here? Is it the adviser?"', "The senator said, in an apparent reference to Byrne.", "attribution_tail"),
        ('"Who decides here?"', "Walsh told reporters in Dublin.", "attribution_tail"),
        ('"Who decides here?"', "Walsh, who chairs the ferry committee, said on Friday.", "attribution_tail"),
        ('"Pay the fishermen now!"', "Walsh wrote on her blog.", "attribution_tail"),
        # near misses, sentences of their own: a report with a clause of its own (content the writer
        # gives, not only who spoke), and no verb of saying (an event after the quotation)
        ('"Who decides here?"', "Walsh said Byrne had lost control of the board.", ""),
        ('"Who decides here?"', "Walsh answered when asked whether Byrne should resign.", ""),
        ('"We will win."', "Walsh has promised new jobs at the harbour in Cork.", ""),
        ('"We will win."', "Walsh left the hall with Byrne after the vote.", ""),
    ],
)
def test_the_attribution_of_a_quotation_closed_before_it_is_no_needle_sentence(nlp, quotation, sentence, why):
    found = refusals(nlp, f"{BEFORE} {quotation} {sentence} {AFTER}")
    assert found[sentence] == why
    assert found[BEFORE] == found[AFTER] == ""


def test_an_attribution_after_prose_is_a_sentence_like_any_other(nlp):
    # the same words with no quotation closing right before them
    sentence = "Walsh told reporters in Dublin."
    found = refusals(nlp, f"{BEFORE} The vote was put off until May. {sentence} {AFTER}")
    assert found[sentence] == ""


def test_a_marks_role_read_from_the_tokens_around_it_is_its_role_in_the_whole_text(nlp):
    from engine.needles.quotation import _role_in_doc, is_quotation_mark, mark_role

    doc = nlp('"Close it," said Ines Moura\u2014"now." The clerk\'s "plan" failed "')
    marks = [t for t in doc if is_quotation_mark(t)]
    assert len(marks) >= 5
    assert [_role_in_doc(doc, t.i) for t in marks] == [mark_role(doc.text, t.idx) for t in marks]
