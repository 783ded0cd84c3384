"""Needle perturbations: pure functions over parsed spaCy sentences.

Each needle function takes one sentence (a `spacy.tokens.Span`) and returns
what to change (a `TextEdit` for neg/con, `EntityOption`s for ner), or None
/ empty when the sentence does not admit that needle type. Sentence texts
are the sentence without surrounding whitespace; offsets are relative to
that text. Rules (DESIGN.md):

- neg and con live in engine.negation and engine.conjunctions (their rules
  and what they skip are documented there); they return a `TextEdit`.
- ner: options are the sentence's entities labelled PERSON, GPE, LOC,
  LANGUAGE or DATE that have at least one different same-label entity text
  elsewhere in the document, of the same shape (`entity_shape`: a year for a
  year, a day-month-year for a day-month-year; "the ..." for "the ...").
  Possessive texts and texts the model also tags with another label are
  never replacements; entities inside quotation marks and PERSON entities
  after an article ("the Chincha") are not options. The seeded choice of option and replacement happens
  at pair time (engine.pairs), applied by `apply_entity`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:  # spaCy objects come in as arguments; importing them here is not needed at run time
    from spacy.tokens import Doc, Span, Token

NER_LABELS = frozenset({"PERSON", "GPE", "LOC", "LANGUAGE", "DATE"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})  # neg and con


class EntityOption(msgspec.Struct, frozen=True, array_like=True):
    """One replaceable entity of a needle sentence."""

    start: int  # character offsets in the sentence text
    end: int
    label: str
    text: str
    replacements: tuple[str, ...]  # distinct same-label texts from the document, sorted


class TextEdit(msgspec.Struct, frozen=True, array_like=True):
    """What a needle changed in its sentence (the audit trail): `before` at
    start:end of the original sentence became `after` (which starts at `start`
    in the perturbed sentence), by `rule` ("neg:aux", "con:and->or", "ner:GPE")."""

    start: int
    end: int
    before: str
    after: str
    rule: str
    label: str = ""  # the entity label (ner)

    def apply(self, text: str) -> str:
        if text[self.start : self.end] != self.before:
            raise ValueError(f"{self.before!r} is not at {self.start}:{self.end} of {text!r}")
        return text[: self.start] + self.after + text[self.end :]


# ---------------------------------------------------------------------------
# Sentence text and offsets


def sentence_bounds(sent: Span) -> tuple[int, int]:
    """Character offsets in the doc of the sentence without surrounding whitespace."""
    raw = sent.text
    start = sent.start_char + (len(raw) - len(raw.lstrip()))
    end = sent.start_char + len(raw.rstrip())
    return start, max(start, end)


def sentence_text(sent: Span) -> str:
    return sent.text.strip()


def _offset(sent: Span, token: Token) -> int:
    return token.idx - sentence_bounds(sent)[0]


def _inside_quotes(text: str, at: int, *, opened: str = "") -> bool:
    """Whether offset `at` of `text` is inside quotation marks; `opened`: the
    mark of a quotation opened before `text` and still open ('"' or '“')."""
    before = opened + text[:at]
    return before.count('"') % 2 == 1 or before.count("“") > before.count("”")


def quote_open_before(sent: Span) -> str:
    """The mark ('"' or '“') of a quotation opened earlier in `sent`'s
    paragraph and still open where `sent` starts, or "". Straight quotes pair
    by parity; the count stops at the paragraph start, so one stray mark (5'11")
    cannot put the rest of a document inside a quotation."""
    doc = sent.doc
    start = sent.start
    while start > 0 and "\n" not in doc[start - 1].text_with_ws:
        start -= 1
    before = doc[start : sent.start].text
    if before.count('"') % 2 == 1:
        return '"'
    return "“" if before.count("“") > before.count("”") else ""


def _match_case(word: str, model: str) -> str:
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# ---------------------------------------------------------------------------
# ner


_MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_SHAPE_PIECES = re.compile(r"\d+|[^\W\d_]+|\S")


def entity_shape(text: str, label: str) -> str:
    """What a replacement must share with the entity it replaces to read fluently.

    DATE: the token pattern with years as Y, other numbers as 9 and month
    names as M ("15 May 1873" -> "9 M Y", "the 1970s" -> "the Y s"), so a
    year replaces a year and a day-month a day-month, never "four years"
    by "March". Other labels: only whether the text starts with "the".
    """
    if label != "DATE":
        return "the" if text.lower().startswith("the ") else ""
    pieces = []
    for piece in _SHAPE_PIECES.findall(text.lower()):
        if piece.isdigit():
            pieces.append("Y" if len(piece) == 4 else "9")
        elif piece in _MONTHS:
            pieces.append("M")
        else:
            pieces.append(piece)
    return " ".join(pieces)


def _usable_entity_text(text: str) -> bool:
    return "\n" not in text and text.strip() == text and not text.endswith(("'s", "’s"))


def document_entity_texts(doc: Doc) -> dict[str, frozenset[str]]:
    """label -> distinct entity texts in the whole document (NER labels only).

    Texts the model also tags with another label somewhere in the document
    (e.g. a company tagged PERSON once and ORG elsewhere) are left out, as
    are possessives ("Stan Kenton's")."""
    found: dict[str, set[str]] = {}
    labels_of: dict[str, set[str]] = {}
    for ent in doc.ents:
        labels_of.setdefault(ent.text, set()).add(ent.label_)
        if ent.label_ in NER_LABELS and _usable_entity_text(ent.text):
            found.setdefault(ent.label_, set()).add(ent.text)
    return {
        label: frozenset(t for t in texts if len(labels_of[t]) == 1) for label, texts in found.items()
    }


def entity_options(sent: Span, entity_texts: dict[str, frozenset[str]]) -> tuple[EntityOption, ...]:
    options = []
    base = sentence_bounds(sent)[0]
    text = sentence_text(sent)
    for ent in sent.ents:
        if ent.label_ not in NER_LABELS or not _usable_entity_text(ent.text):
            continue
        if _inside_quotes(text, ent.start_char - base):  # titles and quoted names ("United States v. X")
            continue
        if ent.label_ == "PERSON" and ent.start > sent.start and ent.doc[ent.start - 1].lower_ in ("the", "a", "an"):
            continue  # "the Chincha", "the Beatles": a people or a band tagged PERSON
        shape = entity_shape(ent.text, ent.label_)
        replacements = tuple(
            sorted(t for t in entity_texts.get(ent.label_, ()) if t != ent.text and entity_shape(t, ent.label_) == shape)
        )
        if not replacements:
            continue
        options.append(
            EntityOption(
                start=ent.start_char - base,
                end=ent.end_char - base,
                label=ent.label_,
                text=ent.text,
                replacements=replacements,
            )
        )
    return tuple(options)


def apply_entity(text: str, option: EntityOption, replacement: str) -> str:
    if text[option.start : option.end] != option.text:
        raise ValueError(f"entity {option.text!r} is not at {option.start}:{option.end} of {text!r}")
    return text[: option.start] + replacement + text[option.end :]


# ---------------------------------------------------------------------------
# The needle sentence


def scan_order(middle: int, n_sentences: int, radius: int) -> list[int]:
    """middle, then middle-1, middle+1, ..., up to `radius` away, inside the document."""
    order = [middle]
    for d in range(1, radius + 1):
        order.extend(k for k in (middle - d, middle + d) if 0 <= k < n_sentences)
    return [k for k in order if 0 <= k < n_sentences]


def find_needle_sentence(
    sentences: Sequence[Span], middle: int, radius: int, admits: Callable[[Span], object]
) -> tuple[int, object] | None:
    """The first sentence in scan order whose perturbation is not None/empty."""
    for k in scan_order(middle, len(sentences), radius):
        result = admits(sentences[k])
        if result:
            return k, result
    return None


def iter_sentences(doc: Doc) -> Iterable[Span]:
    """The doc's sentences that hold more than whitespace."""
    return (s for s in doc.sents if s.text.strip())
