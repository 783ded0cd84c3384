"""Stored sentences (engine.corpus.segmentation) on real text parsed by the real spaCy model."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spacy.tokens import Doc

from engine.corpus.cleaning import clean_text, has_word, template_hole
from engine.needles.conjunctions import swap_conjunction
from engine.needles.entities import document_entity_texts, entity_options
from engine.needles.edits import sentence_bounds, sentence_text
from engine.corpus.segmentation import document_sentences
from engine.corpus.sentence_gate import not_a_sentence


@pytest.fixture(scope="module")
def records(bundled_corpus_path):
    return {r["id"]: r for r in json.loads(bundled_corpus_path.read_text(encoding="utf-8"))}


def stored_text(sentences) -> str:
    """A document's text as engine.corpus.pairs joins it: sentences with their gaps."""
    parts = [sentences.texts[0]] if sentences.texts else []
    for gap, text in zip(sentences.gaps, sentences.texts[1:]):
        parts += [gap, text]
    return "".join(parts)


def check_invariants(sentences, doc) -> None:
    assert len(sentences.spans) == len(sentences.texts) == len(sentences.gaps) + 1
    for span, text in zip(sentences.spans, sentences.texts):
        assert span.text.strip() == text and text == text.strip() and has_word(text)
        assert template_hole(text) is None
    assert all(not gap.strip() for gap in sentences.gaps)
    assert all(a.end <= b.start for a, b in zip(sentences.spans, sentences.spans[1:]))
    assert all("\n" not in text for text in sentences.texts)  # never across a paragraph break


def test_a_split_off_closing_quote_rejoins_its_sentence(records, nlp):
    # "Jewish pirates": the parser splits the closing quote of
    # '... coins for "naval victory."' (end of a paragraph) off on its own
    record = records["27084114"]
    text = clean_text(record["text"], record["title"])
    doc = nlp(text)
    assert any(s.text.strip() == '"' for s in doc.sents), "the model no longer splits the quote off: pick another case"
    sentences = document_sentences(doc)
    check_invariants(sentences, doc)
    assert sentences.merged >= 1
    victory = [t for t in sentences.texts if t.endswith('for "naval victory."')]
    assert len(victory) == 1 and victory[0].startswith("The Romans considered their victory")
    # dropped: a sentence with a hole ("Hasmonean period ( 140–37 BCE)"), a
    # heading line and a sentence whose verb the tagger read as a noun ("Some
    # attribute to him ...": the cost of the finite-verb rule); all else is kept verbatim
    assert sentences.holes == 1 and sentences.dropped == {"template_hole": 1, "no_finite_verb": 2}
    dropped = next(s.text.strip() for s in doc.sents if "Hasmonean period ( 140" in s.text)
    heading = "Piracy in the ancient world: pirates of Joppa."
    attribute = next(s.text for s in doc.sents if s.text.startswith("Some attribute to him"))
    kept = text.replace(dropped + " ", "").replace(heading + "\n", "").replace(attribute, "")
    assert stored_text(sentences) == kept.replace("  ", " ").replace(" \n", "\n")


def test_needle_offsets_hold_on_merged_sentences(records, nlp):
    # the needle rules read a stored sentence as a span of the doc and edit its
    # text at token offsets (engine.needles.edits._offset): both must agree
    record = records["27084114"]
    doc = nlp(clean_text(record["text"], record["title"]))
    full_text = doc.text
    sentences = document_sentences(doc)
    for span, text in zip(sentences.spans, sentences.texts):
        start, end = sentence_bounds(span)
        assert full_text[start:end] == text == sentence_text(span)
        for token in span:
            if not token.is_space:
                assert text[token.idx - start : token.idx - start + len(token.text)] == token.text
    merged = next(span for span, text in zip(sentences.spans, sentences.texts) if text.endswith('for "naval victory."'))
    edit = swap_conjunction(merged)
    if edit is not None:  # whether this "and" may swap is the con rule's call
        swapped = edit.apply(merged.text.strip())
        assert swapped.endswith('for "naval victory."') and swapped.replace(" or ", " and ") == merged.text.strip()
    options = entity_options(merged, document_entity_texts(doc))
    assert all(merged.text.strip()[o.start : o.end] == o.text for o in options)


def test_sentences_with_template_holes_are_dropped(records, nlp):
    # "Abu Mikhnaf": "Abu Mikhnaf was born in ." ({{birth year}} removed)
    record = records["8722088"]
    text = clean_text(record["text"], record["title"])
    doc = nlp(text)
    sentences = document_sentences(doc)
    check_invariants(sentences, doc)
    assert not any("born in ." in t for t in sentences.texts)
    assert sentences.texts[0].startswith("His given name was Lut")
    assert sentences.holes >= 1
    # the paragraph closes around the dropped sentence: a space, not the hole
    first_paragraph = stored_text(sentences).split("\n")[0]
    assert first_paragraph.startswith("His given name was Lut and his father was Yahya") and "  " not in first_paragraph


def _doc(nlp, text: str, starts: list[bool]) -> Doc:
    """`text` tokenized by the real model, with the sentence starts a parser
    could have set (a start after every line break, as engine.corpus.nlp forces)."""
    tokens = nlp.tokenizer(text)
    assert len(starts) == len(tokens)
    return Doc(
        nlp.vocab,
        words=[t.text for t in tokens],
        spaces=[bool(t.whitespace_) for t in tokens],
        sent_starts=[k == 0 or starts[k] or "\n" in tokens[k - 1].text for k in range(len(tokens))],
    )


def _starts_before(nlp, text: str, *pieces: str) -> list[bool]:
    """Sentence starts at the first token of each piece (found in order)."""
    tokens = nlp.tokenizer(text)
    starts, at = [False] * len(tokens), 0
    for piece in pieces:
        at = text.index(piece, at)
        starts[next(t.i for t in tokens if t.idx == at)] = True
        at += 1
    return starts


def test_closing_punctuation_written_against_a_sentence_returns_to_it(nlp):
    # the parser put the closing quote at the start of the next sentence
    text = 'It was called "a naval victory." The coins were struck in Rome.'
    doc = _doc(nlp, text, _starts_before(nlp, text, '." The', '" The'))
    assert [s.text.strip() for s in doc.sents] == ['It was called "a naval victory', '.', '" The coins were struck in Rome.']
    sentences = document_sentences(doc)
    assert sentences.texts == ('It was called "a naval victory."', "The coins were struck in Rome.")
    assert sentences.gaps == (" ",) and sentences.merged == 1


def test_wordless_fragments_join_a_sentence_of_their_paragraph(nlp):
    # a real quotation of the sample typed with a space before its closing
    # quote; a paragraph opening with a dash; a paragraph of a lone colon
    text = (
        '"It was moving so fast I kept losing the funnel behind the buildings. " '
        "Between 1975 and 1979, the four editions were published.\n"
        "— The Times was merged.\n"
        ":\n"
        "The series was cancelled."
    )
    doc = _doc(nlp, text, _starts_before(nlp, text, '" Between', "Between", "The Times"))
    assert [s.text.strip() for s in doc.sents] == [
        '"It was moving so fast I kept losing the funnel behind the buildings.',
        '"',
        "Between 1975 and 1979, the four editions were published.",
        "—",
        "The Times was merged.",
        ":",
        "The series was cancelled.",
    ]
    sentences = document_sentences(doc)
    assert sentences.texts == (
        '"It was moving so fast I kept losing the funnel behind the buildings. "',  # the previous one
        "Between 1975 and 1979, the four editions were published.",
        "— The Times was merged.",  # first of its paragraph: the next one
        "The series was cancelled.",  # alone in its paragraph: dropped
    )
    assert sentences.gaps == (" ", "\n", "\n") and sentences.merged == 3


# real sentences of the bundled sample, without template holes
HOLE_FREE = (
    "The Romans considered their victory over Joppa's pirates very important, and commemorated it with "
    'a large number of coins for "naval victory."\n'
    "His given name was Lut and his father was Yahya ibn Sa'id ibn Mikhnaf (epithet), who belonged to a noble clan.\n"
    '"It was moving so fast I kept losing the funnel behind the buildings." Between 1975 and 1979, the four '
    "newspaper editions were published: The Times, The Enterprise, and The Clarion!"
)


def test_the_sentences_of_hole_free_text_are_all_stored(nlp):
    doc = nlp(HOLE_FREE)
    sentences = document_sentences(doc)
    check_invariants(sentences, doc)
    assert stored_text(sentences) == HOLE_FREE and sentences.dropped == {}


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_split_of_hole_free_text_stores_verbatim_worded_sentences(nlp, data):
    # a split a parser could make cuts fragments that are not sentences
    # (engine.corpus.sentence_gate: no sentence end, a lowercase start): they are
    # dropped; what is stored is the text's own, in order, in sentences
    size = len(nlp.tokenizer(HOLE_FREE))
    doc = _doc(nlp, HOLE_FREE, data.draw(st.lists(st.booleans(), min_size=size, max_size=size)))
    sentences = document_sentences(doc)
    if sentences.texts:
        check_invariants(sentences, doc)
    at = 0
    for span, text in zip(sentences.spans, sentences.texts):
        assert HOLE_FREE.index(text, at) == span.start_char + (len(span.text) - len(span.text.lstrip()))
        at = span.end_char
        assert not_a_sentence(span, text) is None
    assert sentences.holes == 0
