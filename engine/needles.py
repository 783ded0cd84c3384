"""Needle perturbations: pure functions over parsed spaCy sentences.

Each function takes one sentence (a `spacy.tokens.Span`) and returns the
perturbed sentence text, or None when the sentence does not admit that
needle type. Sentence texts are the sentence without surrounding
whitespace; offsets are relative to that text. Rules (ARCHITECTURE.md, "The experiment"):

- neg: skip sentences that already hold a negation; require a unique verbal
  root with a subject; copula / auxiliary root -> "not" after it; root with
  auxiliaries -> "not" after the first one; otherwise do-support agreeing
  in tense and person ("published" -> "did not publish", "works" -> "does
  not work", "work" -> "do not work").
- con: swap every coordinating "and" <-> "or", keeping casing; "&" is never
  touched. Coordinations that cannot take the other conjunction are left
  alone: correlatives (both/either/neither/whether ... and/or), "between X
  and Y", "and/or", conjunctions inside a named entity ("Bosnia and
  Herzegovina"), and "and" inside a subject or in a sentence with "both"
  ("X and Y were" would become "X or Y were").
- ner: options are the sentence's entities labelled PERSON, GPE, LOC,
  LANGUAGE or DATE that have at least one different same-label entity text
  elsewhere in the document, of the same shape (`entity_shape`: a year for a
  year, a day-month-year for a day-month-year; "the ..." for "the ...").
  Possessive texts and texts the model also tags with another label are
  never replacements; entities inside quotation marks and PERSON entities
  after an article ("the Chincha") are not options. The seeded choice of option and replacement happens
  at pair time (engine.pairs), applied by `apply_entity`.
- neg never edits quoted speech (a root inside quotation marks).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:  # spaCy objects come in as arguments; importing them here is not needed at run time
    from spacy.tokens import Doc, Span, Token

NER_LABELS = frozenset({"PERSON", "GPE", "LOC", "LANGUAGE", "DATE"})
NEGATION_WORDS = frozenset({"not", "n't", "never", "no"})
SUBJECT_DEPS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})
AUX_DEPS = frozenset({"aux", "auxpass"})
DO_FORMS = {"VBD": "did", "VBZ": "does", "VBP": "do"}
_CORRELATIVES = frozenset({"both", "either", "neither", "whether"})
_SWAP = {"and": "or", "or": "and"}


class EntityOption(msgspec.Struct, frozen=True, array_like=True):
    """One replaceable entity of a needle sentence."""

    start: int  # character offsets in the sentence text
    end: int
    label: str
    text: str
    replacements: tuple[str, ...]  # distinct same-label texts from the document, sorted


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


def _insert(text: str, at: int, piece: str) -> str:
    return text[:at] + piece + text[at:]


def _inside_quotes(text: str, at: int) -> bool:
    return text.count('"', 0, at) % 2 == 1 or text.count("“", 0, at) > text.count("”", 0, at)


def _match_case(word: str, model: str) -> str:
    if len(model) > 1 and model.isupper():
        return word.upper()
    if model[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


# ---------------------------------------------------------------------------
# neg


def has_negation(sent: Span) -> bool:
    return any(t.dep_ == "neg" or t.lower_ in NEGATION_WORDS or t.lemma_.lower() in NEGATION_WORDS for t in sent)


def negate(sent: Span) -> str | None:
    if has_negation(sent):
        return None
    roots = [t for t in sent if t.dep_ == "ROOT"]
    if len(roots) != 1:
        return None
    root = roots[0]
    if root.pos_ not in ("VERB", "AUX"):
        return None
    subjects = [c for c in root.children if c.dep_ in SUBJECT_DEPS]
    if not subjects:
        return None
    subject_start = min(s.left_edge.i for s in subjects)
    text = sentence_text(sent)
    if _inside_quotes(text, _offset(sent, root)):  # the root of quoted speech, not of the sentence
        return None
    auxiliaries = sorted((c for c in root.children if c.dep_ in AUX_DEPS), key=lambda t: t.i)
    if auxiliaries:
        first = auxiliaries[0]
        if first.i < subject_start or first.lower_ == "to":  # inversion ("Had he known") or infinitive
            return None
        return _insert(text, _offset(sent, first) + len(first.text), " not")
    if root.pos_ == "AUX" or root.lemma_ == "be":  # copula ("was" -> "was not", "there are" -> "there are not")
        if root.i < subject_start:
            return None
        return _insert(text, _offset(sent, root) + len(root.text), " not")
    do_form = DO_FORMS.get(root.tag_)
    if do_form is None or root.i < subject_start:  # participles, bare forms, inversion
        return None
    lemma = root.lemma_.lower()
    if not lemma.isalpha():
        return None
    at = _offset(sent, root)
    replacement = f"{_match_case(do_form, root.text)} not {lemma}"
    return text[:at] + replacement + text[at + len(root.text) :]


# ---------------------------------------------------------------------------
# con


def _swappable(sent: Span, token: Token) -> bool:
    if token.pos_ != "CCONJ" or token.lower_ not in _SWAP or token.text == "&":
        return False
    if token.ent_type_:
        return False
    doc = token.doc
    if (token.i > 0 and doc[token.i - 1].text == "/") or (token.i + 1 < len(doc) and doc[token.i + 1].text == "/"):
        return False
    head = token.head
    if token.lower_ == "and" and (_in_subject(head) or any(t.lower_ == "both" for t in sent)):
        return False  # "X and Y were" -> "X or Y were", "X and Y were both" break agreement
    # correlatives ("either X or Y", "both X and Y", "whether X or Y") sit at or
    # just before the first conjunct; the parser often attaches them to the verb
    for t in doc[max(sent.start, head.left_edge.i - 2) : token.i]:
        if t.lower_ in _CORRELATIVES:
            return False
    if head.head.lower_ == "between" or head.lower_ == "between":
        return False
    return True


def _in_subject(token: Token) -> bool:
    """Whether `token` is (inside) a subject noun phrase."""
    while True:
        if token.dep_ in SUBJECT_DEPS:
            return True
        if token.pos_ in ("VERB", "AUX") or token.head.i == token.i:
            return False
        token = token.head


def swap_conjunctions(sent: Span) -> str | None:
    text = sentence_text(sent)
    swaps = [t for t in sent if _swappable(sent, t)]
    if not swaps:
        return None
    for token in reversed(swaps):  # right to left keeps earlier offsets valid
        at = _offset(sent, token)
        text = text[:at] + _match_case(_SWAP[token.lower_], token.text) + text[at + len(token.text) :]
    return text


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
