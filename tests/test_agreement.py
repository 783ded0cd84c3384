"""Two-model agreement for the neg and con rules (engine.needles.agreement).

The second model's parse is given as data where the test needs a known
disagreement (a Doc built by hand with other heads), and taken from the real
en_core_web_md where the test is about what AgreedParser records or about a
sentence the two models really parse apart."""

from __future__ import annotations

import pytest
from needle_helpers import any_shape_swap
from spacy.tokens import Doc

from engine.needles.agreement import SECOND_MODEL_PARSE, parse_record, second_parse

from engine.needles.entities import SECOND_MODEL_ENTS
from engine.needles.negation import negate, refusal


def _with_second_parse(nlp, text: str, heads: dict[int, int] | None = None, deps: dict[int, str] | None = None):
    """`text` parsed by the session's model, with a second parse equal to it
    except for the heads and labels given (token index -> new value)."""
    doc = nlp(text)
    words = [t.text for t in doc]
    other = Doc(
        doc.vocab,
        words=words,
        spaces=[bool(t.whitespace_) for t in doc],
        heads=[(heads or {}).get(t.i, t.head.i) for t in doc],
        deps=[(deps or {}).get(t.i, t.dep_) for t in doc],
        tags=[t.tag_ for t in doc],
        pos=[t.pos_ for t in doc],
    )
    doc.user_data[SECOND_MODEL_PARSE] = parse_record(other)
    return doc


def test_a_second_parse_that_agrees_changes_nothing(nlp):
    text = "The author published the book and the essay in 1990."
    doc = _with_second_parse(nlp, text)
    sent = next(iter(doc.sents))
    assert negate(sent).apply(text) == "The author did not publish the book and the essay in 1990."
    assert any_shape_swap(sent).apply(text) == "The author published the book or the essay in 1990."


def test_neg_refuses_when_the_second_model_has_another_root_or_auxiliaries(nlp):
    text = "The bridge was built by the army in 1850."
    doc = nlp(text)
    built, was = doc[3], doc[2]
    assert built.dep_ == "ROOT" and was.dep_ == "auxpass"
    # the second model takes "was" as the root and "built" as its complement
    other = _with_second_parse(nlp, text, heads={2: 2, 3: 2, 1: 2}, deps={2: "ROOT", 3: "acomp", 1: "nsubj"})
    assert negate(next(iter(other.sents))) is None and refusal(next(iter(other.sents))) == "models disagree"
    # same root, but without the auxiliary
    other = _with_second_parse(nlp, text, deps={2: "dep"})
    assert negate(next(iter(other.sents))) is None


def test_con_refuses_when_the_second_model_coordinates_other_conjuncts(nlp):
    text = "The team won the league and the cup."
    doc = nlp(text)
    conjunction, league, cup = doc[5], doc[4], doc[7]
    assert conjunction.head.i == league.i and cup.dep_ == "conj"
    # the second model joins "cup" to the verb instead of to "league"
    other = _with_second_parse(nlp, text, heads={5: 2, 7: 2})
    assert any_shape_swap(next(iter(other.sents))) is None


def test_a_sentence_tokenized_differently_is_refused(nlp):
    text = "The author published the book in 1990."
    doc = nlp(text)
    other = nlp("The author published the bookin 1990.")  # one token fewer, offsets shifted
    doc.user_data[SECOND_MODEL_PARSE] = parse_record(other)
    sent = next(iter(doc.sents))
    assert second_parse(sent) is False
    assert negate(sent) is None


def test_the_record_survives_serialisation(nlp):
    text = "The team won the league and the cup."
    doc = _with_second_parse(nlp, text)
    copy = Doc(nlp.vocab).from_bytes(doc.to_bytes())
    assert copy.user_data[SECOND_MODEL_PARSE] == doc.user_data[SECOND_MODEL_PARSE]
    assert any_shape_swap(next(iter(copy.sents))) == any_shape_swap(next(iter(doc.sents)))


def test_agreed_parser_records_the_second_models_own_parse(agreed_nlp):
    text = "The ferry carrying tourists docked late. Ministers back plans to cut fuel duty and rail fares."
    doc = agreed_nlp(text)
    assert doc.user_data[SECOND_MODEL_PARSE] == parse_record(agreed_nlp.second(text))


def test_agreed_parser_skips_the_second_models_lemmas_and_records_the_same(agreed_nlp, monkeypatch):
    """Nothing reads the second parse's lemmas, so AgreedParser does not make
    them (CPU); its entities and parse record are what a full parse gives."""
    text = "The lighthouse keeper on Rathlin never rowed to Ballycastle in winter."
    lemmatizer = agreed_nlp.second.get_pipe("lemmatizer")
    lemmatized: list[int] = []

    def counted(docs, **kwargs):  # type: ignore[no-untyped-def]
        for doc in type(lemmatizer).pipe(lemmatizer, docs, **kwargs):
            lemmatized.append(1)
            yield doc

    monkeypatch.setattr(lemmatizer, "pipe", counted)
    doc = agreed_nlp(text)
    assert lemmatized == []
    full = agreed_nlp.second(text)
    assert full[6].lemma_ == "row"  # the second model alone still lemmatizes
    assert doc.user_data[SECOND_MODEL_PARSE] == parse_record(full)
    assert doc.user_data[SECOND_MODEL_ENTS] == tuple((e.start_char, e.end_char, e.label_) for e in full.ents)


@pytest.mark.parametrize(
    ("rule", "text"),
    [
        (negate, "The ferry carrying tourists docked late."),  # md tags "docked" VBN, sm VBD (which picks "did")
        (any_shape_swap, "Ministers back plans to cut fuel duty and rail fares."),
        (any_shape_swap, "The firm builds and repairs ships and boats for the navy."),
    ],
)
def test_sentences_the_two_models_parse_apart_are_refused_only_with_agreement(nlp, agreed_nlp, rule, text):
    assert rule(next(iter(nlp(text).sents))) is not None  # one model: the rule runs as in the paper's setting
    assert rule(next(iter(agreed_nlp(text).sents))) is None
