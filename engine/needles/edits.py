"""Needle perturbations: pure functions over parsed spaCy sentences.

Each needle function takes one sentence (a `spacy.tokens.Span`) and returns
what to change (a `TextEdit` for neg/con, `EntityOption`s for ner), or None
/ empty when the sentence does not admit that needle type. Sentence texts
are the sentence without surrounding whitespace; offsets are relative to
that text. Rules (ARCHITECTURE.md, "The experiment"):

- neg and con live in engine.needles.negation and engine.needles.conjunctions (their rules
  and what they skip are documented there); they return a `TextEdit`.
- ner: which entities may be swapped, and with what, is decided in
  engine.needles.entities (`entity_options`); the seeded choice of option and
  replacement happens at pair time (engine.corpus.pairs), applied by `apply_entity`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import msgspec

from engine.needles.quotation import quote_open_before  # noqa: F401  (the rules import it from here)

if TYPE_CHECKING:  # spaCy objects come in as arguments; importing them here is not needed at run time
    from spacy.tokens import Span, Token

SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})  # neg and con
FINITE_TAGS = frozenset({"VBD", "VBZ", "VBP", "MD"})  # a finite verb's tags (the modals with them)
# closing quotes and brackets at a sentence's end, with a dataset's mojibake of a
# curly quote ('"?': '... "Apposition party."?' is no question)
_ENDING_CLOSERS = re.compile(r"(?:\"\?|[\"'”’)\]»])+$")


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


def finite_verb(verb: Token) -> bool:
    """`verb` is finite by its own tag or an auxiliary's ("has fired", "will fire"; not "to fire", "firing")."""
    return verb.tag_ in FINITE_TAGS or any(c.dep_ in ("aux", "auxpass") and c.tag_ in FINITE_TAGS for c in verb.children)


# ---------------------------------------------------------------------------
# Sentence text and offsets


def asks(text: str) -> bool:
    """Whether a sentence is a question: it ends in "?" before any closing
    quotes or brackets (a negated or swapped question asserts nothing)."""
    return _ENDING_CLOSERS.sub("", text.rstrip()).endswith("?")


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


def _match_case(word: str, model: str) -> str:
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# ---------------------------------------------------------------------------
# ner


def apply_entity(text: str, option: EntityOption, replacement: str) -> str:
    if text[option.start : option.end] != option.text:
        raise ValueError(f"entity {option.text!r} is not at {option.start}:{option.end} of {text!r}")
    return text[: option.start] + replacement + text[option.end :]


# ---------------------------------------------------------------------------
# The needle sentence


def scan_order(middle: int, n_sentences: int, radius: int, *, room: int | None = None) -> list[int]:
    """middle, then middle-1, middle+1, ..., up to `radius` away, inside the document;
    with `room`, then the farther sentences that have at least `room` sentences
    above and below them, in the same alternating order."""
    order = [middle]
    for d in range(1, radius + 1):
        order.extend(k for k in (middle - d, middle + d) if 0 <= k < n_sentences)
    if room is not None:
        for d in range(radius + 1, max(middle, n_sentences - 1 - middle) + 1):
            order.extend(k for k in (middle - d, middle + d) if room <= k < n_sentences - room)
    return [k for k in order if 0 <= k < n_sentences]


def find_needle_sentence(
    sentences: Sequence[Span], middle: int, radius: int, admits: Callable[[Span], object], *, room: int | None = None
) -> tuple[int, object] | None:
    """The first sentence in scan order (`scan_order`) whose perturbation is not None/empty."""
    for k in scan_order(middle, len(sentences), radius, room=room):
        result = admits(sentences[k])
        if result:
            return k, result
    return None
