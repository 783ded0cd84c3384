"""Stored sentences that continue a piece the segmenter cut off or the gate dropped.

engine.corpus.sentence_gate drops a span that is not a sentence (no sentence
end, a lowercase start, ...). Where spaCy split one sentence in two, at an
editor's bracket or an ellipsis, the gate drops the first half and keeps the
second, which is not a whole sentence either ('"We will not be free of debt
to Harland [Marine] ... unless the board sells the pier," Walsh said.' split
before the bracket: the kept '[Marine] ... unless the board sells the
pier," Walsh said.' continues a clause no window holds). A rand-hay window may
hold any sentence of another document, and no window is owed a place, so
`continuation_refusals` reads such pieces for engine.corpus.hay_check in
their over-refusing forms:

- "continuation_start": the sentence opens with an ellipsis ("... and the
  pier fell."), or with a bracketed insertion of at most
  MAX_INSERTION_WORDS words followed by an ellipsis or a lowercase function
  word (a conjunction, a preposition, a wh-word: "[Marine] ... unless",
  "[Harland] and there is ..."): the rest of a sentence cut before the
  insertion. An insertion followed by the sentence's verb or an adverb ("[The
  pier] was rebuilt in 1890.", "[Walsh is] well ahead") is a whole sentence
  whose quoted words an editor completed, and stays.
- "after_dropped_in_quote": a piece of a sentence the gate dropped (its
  words start in lowercase, or it has no sentence end) lies right before the
  sentence, and the sentence starts inside a quotation (open at its first
  token, or its own first mark closes one): a quotation the gate cut, whose
  rest depends on the words dropped ('... said. " now you have to decide
  ... are you going to sell the pier?' dropped as a fragment, then 'And if
  you are, the board was wrong."').
- "after_dropped_clause": a piece the gate dropped for having no sentence
  end lies right before the sentence, and it is a clause cut off: it ends
  in a function word, or opens with a personal pronoun and holds a finite
  verb ("She was one of those on a list of pilots" | "The board named in
  May that was drawn up by the union."): a sentence the segmenter split
  mid-clause, whose second half hangs on words no window holds. A headline
  ("Board names new pilots" | "The harbour board ...") is not one.
- "ellipsis_split": the sentence ends in an ellipsis written against the
  next stored sentence's first word ("When you hear those poets...I just
  could not relate to that."): spaCy split one sentence at the ellipsis;
  both halves are refused.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from engine.corpus.cleaning import has_word
from engine.needles.edits import FINITE_TAGS
from engine.needles.quotation import DOUBLE_MARKS, PARAGRAPH, quotation_marks, quotation_open_at

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spacy.tokens import Doc, Span

MAX_INSERTION_WORDS = 5
CONTINUATION_START = "continuation_start"
AFTER_DROPPED_IN_QUOTE = "after_dropped_in_quote"
AFTER_DROPPED_CLAUSE = "after_dropped_clause"
ELLIPSIS_SPLIT = "ellipsis_split"

_FIRST_LETTER = re.compile(r"[^\W\d_]")
_SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*$")
_ELLIPSIS_START = re.compile(r"^[\"'\u201c\u2018]?\s*(?:\.\.\.|\u2026)")
_ELLIPSIS_END = re.compile(r"(?:\.\.\.|\u2026)$")
# a bracketed insertion of a few words opening the sentence, then what follows it
_INSERTION = re.compile(r"^[\"'\u201c\u2018]?\[([^\]]{1,60})\]\s*(\S+)")
_FUNCTION_TAGS = frozenset({"CC", "IN", "TO", "WDT", "WP", "WRB"})
# the last word of a clause cut mid-phrase: a preposition, an article, a conjunction, a possessive
_CUT_TAGS = frozenset({"CC", "IN", "TO", "DT", "PRP$", "WDT"})


def continuation_refusals(doc: Doc, spans: Sequence[Span]) -> dict[int, str]:
    """{index: reason} of the stored sentences `spans` (in order) that
    continue a piece cut off before them or dropped (module docstring)."""
    found: dict[int, str] = {}
    closes_first = _first_mark_closes(doc, spans)
    for k, span in enumerate(spans):
        if _continuation_start(span):
            found[k] = CONTINUATION_START
        elif _piece_dropped_before(doc, spans[k - 1].end if k else 0, span.start) and (
            quotation_open_at(doc, span.start) or closes_first[k]
        ):
            found[k] = AFTER_DROPPED_IN_QUOTE
        elif _clause_dropped_before(doc, spans[k - 1].end if k else 0, span.start):
            found[k] = AFTER_DROPPED_CLAUSE
    for k in range(len(spans) - 1):
        last, nxt = spans[k], spans[k + 1]
        if last.end == nxt.start and not doc[last.end - 1].whitespace_ and _ELLIPSIS_END.search(last.text.rstrip()):
            found.setdefault(k, ELLIPSIS_SPLIT)
            found.setdefault(k + 1, ELLIPSIS_SPLIT)
    return found


def _continuation_start(span: Span) -> bool:
    text = span.text.strip()
    if _ELLIPSIS_START.match(text):
        return True
    match = _INSERTION.match(text)
    if match is None or len(match.group(1).split()) > MAX_INSERTION_WORDS:
        return False
    after = match.group(2)
    if after.startswith(("...", "\u2026")):
        return True
    if not after[:1].islower():
        return False
    # the token that opens what follows the insertion: a function word continues a clause cut before it
    at = span.text.index(after, span.text.index("]")) + span.start_char
    token = next((t for t in span if t.idx >= at), None)
    return token is not None and token.tag_ in _FUNCTION_TAGS


def _piece_dropped_before(doc: Doc, start: int, end: int) -> bool:
    """Whether tokens start:end (between two stored sentences) held a piece
    of a sentence the gate dropped: its words start in lowercase, or it has
    no sentence end (a clause cut off)."""
    text = doc[start:end].text.strip() if start < end else ""
    if not has_word(text):
        return False
    first = _FIRST_LETTER.search(text)
    return bool(first and first.group().islower()) or not _SENTENCE_END.search(text)


def _clause_dropped_before(doc: Doc, start: int, end: int) -> bool:
    """Whether tokens start:end (between two stored sentences) end in a piece
    with no sentence end that is a clause cut off, not a headline: it ends
    on a word, not a comma or a colon, and that word is a function word
    ("... according to a survey by"), or the piece opens with a personal
    pronoun and holds a finite verb ("He was one of those on a list of
    pilots"); headlines name their subject and end in a content word
    ("Board names new pilots")."""
    words = [t for t in doc[start:end] if not t.is_space]
    if not words or words[-1].is_punct:
        return False  # a piece ending in a comma or a colon runs on into a sentence of its own (a list's lead-in)
    ends = [n for n, t in enumerate(words) if t.text in (".", "!", "?")]
    piece = [t for t in words[ends[-1] + 1 if ends else 0 :] if not t.is_punct]
    cut_mid_phrase = piece[-1].tag_ in _CUT_TAGS
    pronoun_clause = piece[0].tag_ == "PRP" and any(t.tag_ in FINITE_TAGS for t in piece)
    return cut_mid_phrase or pronoun_clause


def _first_mark_closes(doc: Doc, spans: Sequence[Span]) -> list[bool]:
    """For each span, whether its first double quotation mark closes a quotation (one it did not open);
    a first mark whose spacing says neither ('entered,-"IS" has') says nothing."""
    events = [(i, role) for i, role in quotation_marks(doc) if role != PARAGRAPH and DOUBLE_MARKS.intersection(doc[i].text)]
    out: list[bool] = []
    e = 0
    for span in spans:
        while e < len(events) and events[e][0] < span.start:
            e += 1
        out.append(e < len(events) and events[e][0] < span.end and events[e][1] == "close")
    return out
