"""The con needle: swap one coordinating "and" <-> "or" (a pure function of the parse).

`swap_conjunction(sentence)` returns the `TextEdit` of ONE swap (rule
con:and->or or con:or->and, casing kept, "&" never touched), or None when no
conjunction of the sentence can take the other one cleanly. When several
can, phrase-level coordinations ("the league and the cup") are preferred to
verb or clause coordinations ("He walked in and the room changed": "or"
between two reported facts reads oddly), and the pick among them is fixed by
a CRC-32 of the sentence text: the edit depends on the sentence only, never
on the experiment seed, like neg.

A conjunction is left alone when it is
- inside a quotation, including one opened in an earlier sentence of the
  paragraph, or inside a named-entity span;
- sentence-initial ("And the crowd cheered": a discourse connective);
- part of a fixed phrase (`FIXED_PHRASES`: "more or less", "rock and roll",
  "and so on", "and then", "and/or", ... and "one X and the other Y");
- an appositive or alias "or" ("The fungi, or mycobionts, are",
  "(or slab)", "or simply X");
- in a correlative (both/either/neither/whether), "between X and Y" /
  "among", a subject ("X and Y were" -> "X or Y were"), a sentence with
  "both";
- reciprocal or symmetric: the sentence says "each other", "one another",
  "together", "respectively", ..., or the coordination is an argument of a
  symmetric verb ("married X and Y", "merged", "combined");
- inside a proper name: between capitalised words of a longer capitalised
  run ("the American Recovery and Reinvestment Act", "Federation Square and
  Town Hall"), or coordinating the modifiers of a noun phrase that holds a
  proper noun ("the Pyrenees conifer and mixed forests ecoregion").
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING

from engine.needles.edits import SUBJECT_DEPS, TextEdit, _inside_quotes, _match_case, _offset, quote_open_before, sentence_text

if TYPE_CHECKING:
    from spacy.tokens import Span, Token

_SWAP = {"and": "or", "or": "and"}
_CORRELATIVES = frozenset({"both", "either", "neither", "whether"})
# Fixed phrases whose conjunction cannot take the other one. Matched on
# lower-cased tokens around the conjunction.
FIXED_PHRASES = tuple(
    tuple(p.split())
    for p in (
        "more or less", "one or the other", "one or another", "or so", "or else", "or not", "whether or not",
        "sooner or later", "give or take", "and so on", "and so forth", "and the like", "and then", "and thus",
        "and hence", "and therefore", "and yet", "and also", "and so", "and now", "by and large", "by and for",
        "rock and roll", "rhythm and blues", "more and more", "less and less", "over and over", "again and again",
        "back and forth", "up and down", "on and off", "off and on", "each and every", "first and foremost", "here and there", "now and then",
        "now and again", "odds and ends", "pros and cons", "trial and error", "one and the same", "nice and",
        "and / or", "or / and", "or more", "or fewer", "or less",
        "or longer", "and more",
    )
)  # fmt: skip
_RECIPROCALS = (("each", "other"), ("one", "another"), ("together",), ("respectively",), ("jointly",), ("mutually",),
                ("alike",), ("apart",), ("in", "common"), ("combined",))  # fmt: skip
_SYMMETRIC_VERBS = frozenset(
    "marry meet merge combine collaborate divorce unite mix differ compare connect link separate distinguish "
    "join pair partner intermarry negotiate reconcile share alternate co-write co-found cofound".split()
)
_ALIAS_MARKERS = frozenset({"simply", "also", "alternatively", "formerly", "sometimes", "officially", "otherwise"})
_NAME_GLUE = frozenset({"of", "the", "for", "de", "du", "la", "von", "van"})


def swap_conjunction(sent: Span, *, opened: str | None = None) -> TextEdit | None:
    """The one-conjunction swap of `sent`, or None. `opened`: the mark of a
    quotation still open at the sentence start (default: read from the document)."""
    text = sentence_text(sent)
    if opened is None:
        opened = quote_open_before(sent)
    if _reciprocal(sent):
        return None
    candidates = [t for t in sent if _swappable(sent, t) and not _inside_quotes(text, _offset(sent, t), opened=opened)]
    if not candidates:
        return None
    preferred = [t for t in candidates if not _verbal(t)] or candidates
    token = preferred[zlib.crc32(text.encode("utf-8")) % len(preferred)]
    at = _offset(sent, token)
    swapped = _SWAP[token.lower_]
    return TextEdit(at, at + len(token.text), token.text, _match_case(swapped, token.text), f"con:{token.lower_}->{swapped}")


def _swappable(sent: Span, token: Token) -> bool:
    if token.pos_ != "CCONJ" or token.lower_ not in _SWAP or token.ent_type_:
        return False
    if all(t.is_punct for t in sent[: token.i - sent.start]):
        return False  # sentence-initial "And ..."
    head = token.head
    if _in_subject(head) or (token.lower_ == "and" and any(t.lower_ == "both" for t in sent)):
        return False  # "X and Y were" -> "X or Y were", "X and Y were both"
    if _fixed_phrase(sent, token) or _alias(sent, token) or _in_name(sent, token):
        return False
    doc = token.doc
    # correlatives ("either X or Y", "both X and Y", "whether X or Y") sit at or
    # just before the first conjunct; the parser often attaches them to the verb
    if any(t.lower_ in _CORRELATIVES for t in doc[max(sent.start, head.left_edge.i - 2) : token.i]):
        return False
    for t in doc[sent.start : token.i]:  # "between X and Y", "among A, B and C"
        if t.lower_ in ("between", "among", "amongst") and t.left_edge.i <= token.i <= t.right_edge.i:
            return False
    return not _symmetric_argument(head)


def _in_subject(token: Token) -> bool:
    """Whether `token` is (inside) a subject noun phrase."""
    while True:
        if token.dep_ in SUBJECT_DEPS:
            return True
        if token.pos_ in ("VERB", "AUX") or token.head.i == token.i:
            return False
        token = token.head


def _verbal(token: Token) -> bool:
    """Whether the conjunction joins verbs or clauses rather than phrases."""
    return token.head.pos_ in ("VERB", "AUX")


def _fixed_phrase(sent: Span, token: Token) -> bool:
    doc = token.doc
    for phrase in FIXED_PHRASES:
        for k, word in enumerate(phrase):
            if word != token.lower_:
                continue
            start = token.i - k
            if start >= sent.start and start + len(phrase) <= sent.end and all(
                doc[start + n].lower_ == w for n, w in enumerate(phrase)
            ):
                return True
    # "one X and the other Y", "one implementation and another"
    after = [t.lower_ for t in doc[token.i + 1 : min(sent.end, token.i + 3)]]
    return after[:2] == ["the", "other"] or after[:1] == ["another"]


def _alias(sent: Span, token: Token) -> bool:
    """An "or" that renames: "The fungi, or mycobionts, are", "(or slab)", "or simply X"."""
    if token.lower_ != "or":
        return False
    doc = token.doc
    previous = doc[token.i - 1] if token.i > sent.start else None
    following = doc[token.i + 1] if token.i + 1 < sent.end else None
    if previous is not None and previous.text == "(":
        return True
    if following is not None and following.lower_ in _ALIAS_MARKERS:
        return True
    head = token.head
    if previous is None or previous.text != "," or head.pos_ not in ("NOUN", "PROPN"):
        return False
    # a two-member "X, or Y" (not the last item of "A, B, or C")
    conjuncts = [c for c in head.children if c.dep_ == "conj"]
    return head.dep_ != "conj" and len(conjuncts) <= 1


def _in_name(sent: Span, token: Token) -> bool:
    doc = token.doc

    def capitalised(i: int) -> bool:
        return sent.start < i < sent.end and doc[i].text[:1].isupper()

    def glued(i: int, step: int) -> bool:  # a capitalised word further on, over "of"/"the"
        i += step
        while sent.start <= i < sent.end and doc[i].lower_ in _NAME_GLUE:
            i += step
        return capitalised(i)

    if capitalised(token.i - 1) and capitalised(token.i + 1) and (glued(token.i - 1, -1) or glued(token.i + 1, 1)):
        return True  # "American Recovery and Reinvestment Act"
    head = token.head
    if head.dep_ in ("compound", "amod", "nmod") and head.head.i > token.i and head.head.pos_ in ("NOUN", "PROPN"):
        noun = head.head
        return any(t.pos_ == "PROPN" for t in doc[noun.left_edge.i : noun.i + 1])  # "Pyrenees conifer and mixed forests"
    return False


def _reciprocal(sent: Span) -> bool:
    words = [t.lower_ for t in sent]
    return any(words[k : k + len(r)] == list(r) for r in _RECIPROCALS for k in range(len(words)))


def _symmetric_argument(head: Token) -> bool:
    """The coordination is an argument of a symmetric verb ("merged A and B")."""
    token = head
    while token.dep_ == "conj" or token.dep_ in ("pobj", "prep"):
        token = token.head
    verb = token.head if token.dep_ in ("dobj", "pobj", "attr") else token
    return verb.pos_ == "VERB" and verb.lemma_.lower() in _SYMMETRIC_VERBS
