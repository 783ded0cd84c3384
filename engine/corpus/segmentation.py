"""The sentences a document is stored as: spaCy's split, repaired.

spaCy's parser now and then splits a closing quotation mark, or a lone
punctuation mark, off as a "sentence" of its own
(`... coins for "naval victory.` + `"`). Such a fragment holds no word: in a
window it would count as one of the i sentences above the needle and shift
the position by one. So, after parsing:

1. closing punctuation written against the end of the previous sentence
   (no space between) is moved back into that sentence;
2. a fragment that still holds no word (a letter or a digit) is merged into
   the previous sentence of its paragraph, or else into the next one, or
   else dropped; one made only of marks that open what follows (a bullet, a
   dash, an opening quote or bracket) goes to the next one first;
3. a "sentence" that is not one (engine.corpus.sentence_gate.not_a_sentence: no
   sentence end, no finite verb, a fragment, a list entry, a link label, web
   residue, a template hole such as "born in ." or "( years ago)", a row of
   a table, a list, a caption or a teaser, also by its place after a bare
   list numeral or around a teaser's date stamp: engine.corpus.page_rows) is
   dropped: it cannot be repaired, and dropping it is the only way to keep
   it out of every needle and every window. The experiment's (i, j) count
   only the sentences a document is stored with, so a window never holds
   one and always holds i + j real sentences around its needle;
4. a sentence that a later one of its document repeats word for word is
   dropped ("repeated"): a pull quote (set before the passage it quotes),
   or a line the outlet printed twice;
   so is one of at least PULL_QUOTE_WORDS words whose words, in order, make
   up part of another kept sentence of the document ("pull_quote": the display
   copy of a quotation, '"<words>," the minister said.' in the text and
   the bare "<words>." in larger type). Words are compared lowercased,
   without punctuation, so quotation marks and mojibake do not count.

Each stored sentence is a span of the parsed doc (`doc[a:b]`), so the needle
rules run on it unchanged and its text is `doc.text[start:end]` exactly. The
parse is not edited: a fragment that was a sentence of its own keeps its own
root, so a rule that wants one root per sentence (neg, today) skips the
merged sentence rather than misread it. The
gap stored between two sentences is the doc's own whitespace between them;
where a sentence was dropped in between, it is "\\n" if a paragraph break was
skipped and " " otherwise, so that gaps stay whitespace and the stored text
of a document is always sentences joined by gaps (engine.corpus.pairs).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from engine.corpus.cleaning import has_word
from engine.corpus.page_rows import row_neighbours
from engine.corpus.sentence_gate import not_a_sentence

if TYPE_CHECKING:
    from collections.abc import Sequence

    from spacy.tokens import Doc, Span

REPEATED = "repeated"
PULL_QUOTE = "pull_quote"
PULL_QUOTE_WORDS = 8
_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*")
# characters that close what precedes them; a token made only of these and
# written without a space after the previous sentence belongs to it
_CLOSERS = frozenset("\"'”’»)]}.,;:!?…")
# characters that open what follows them: a fragment made only of these joins the next sentence
_OPENERS = frozenset("•·*-–—“‘«([{")


class Sentences(NamedTuple):
    spans: list[Span]  # one per stored sentence
    texts: tuple[str, ...]  # each sentence's text, without surrounding whitespace
    gaps: tuple[str, ...]  # gaps[k]: the whitespace stored between sentence k and k + 1
    merged: int  # wordless fragments merged into a neighbour (or dropped, if alone in a paragraph)
    dropped: dict[str, int]  # spans dropped as not sentences, by reason (engine.corpus.sentence_gate)

    @property
    def holes(self) -> int:
        """Sentences dropped for a template hole."""
        return self.dropped.get("template_hole", 0)


def _bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) of text[start:end] without its surrounding whitespace."""
    piece = text[start:end]
    left = start + len(piece) - len(piece.lstrip())
    return left, max(left, start + len(piece.rstrip()))


def _closes_previous(doc: Doc, i: int) -> bool:
    token = doc[i]
    return i > 0 and not doc[i - 1].whitespace_ and not doc[i - 1].is_space and all(c in _CLOSERS for c in token.text)


def _token_ranges(doc: Doc, text: str) -> tuple[list[list[int]], int]:
    """[start, end) token ranges of the repaired sentences, and how many
    wordless fragments were merged away (steps 1 and 2)."""
    ranges: list[list[int]] = []
    merged = 0
    for sent in doc.sents:
        start, end = sent.start, sent.end
        moved = False
        if ranges and ranges[-1][1] == start:
            while start < end and _closes_previous(doc, start):
                start += 1
                moved = True
            ranges[-1][1] = start
        if start < end and doc[start:end].text.strip():
            ranges.append([start, end])
        elif moved:
            merged += 1  # the whole fragment went back
    repaired: list[list[int]] = []
    carry: int | None = None  # start token of a fragment waiting for the next sentence of its paragraph
    for start, end in ranges:
        first, last = doc[start], doc[end - 1]
        span_text = text[first.idx : last.idx + len(last.text)]
        if carry is not None:
            if "\n" in text[doc[carry].idx : first.idx]:
                carry = None  # the fragment was alone at the end of its paragraph: dropped
            else:
                start, carry = carry, None
        if has_word(span_text):
            repaired.append([start, end])
            continue
        merged += 1
        opener = all(c in _OPENERS or c.isspace() for c in span_text)
        if not opener and repaired and "\n" not in text[doc[repaired[-1][1] - 1].idx : first.idx]:
            repaired[-1][1] = end  # into the previous sentence of the paragraph
        else:
            carry = start  # into the next one, if it is in the same paragraph
    return repaired, merged


def _word_key(text: str) -> str:
    """The sentence's words, lowercased, between single spaces and padded with one on each side."""
    return " " + " ".join(_WORD.findall(text.lower())) + " "


def pull_quotes(texts: Sequence[str]) -> set[int]:
    """The indices of sentences of at least PULL_QUOTE_WORDS words that make up
    part of a longer sentence among `texts`, or whose words a later one repeats
    with other capitals or marks (step 4)."""
    keys = [_word_key(t) for t in texts]
    joined = "\n".join(keys)
    found: set[int] = set()
    last = {key: k for k, key in enumerate(keys)}
    for k, key in enumerate(keys):
        if key.count(" ") - 1 < PULL_QUOTE_WORDS:
            continue
        # inside a sentence that is not a copy of it, or an earlier copy ("Administration" | "administration")
        if last[key] != k or joined.count(key) > keys.count(key):
            found.add(k)
    return found


def document_sentences(doc: Doc) -> Sentences:
    """The stored sentences of a parsed document (see the module docstring)."""
    text = doc.text  # Doc.text rebuilds the string from every token: once only
    ranges, merged = _token_ranges(doc, text)
    spans: list[Span] = []
    bounds: list[tuple[int, int]] = []
    dropped: dict[str, int] = {}
    found = [(span, *_bounds(text, span.start_char, span.end_char)) for span in (doc[a:b] for a, b in ranges)]
    by_place = row_neighbours([text[a:b] for _, a, b in found])
    reasons = [not_a_sentence(span, text[a:b]) or by_place.get(k) for k, (span, a, b) in enumerate(found)]
    # copies are looked for among the kept sentences: a teaser or a link row that repeats an
    # article's sentence is dropped as such, and the article keeps its sentence; of copies, the
    # last is kept (a pull quote is set before the passage it quotes)
    last = {" ".join(text[a:b].split()): k for k, (_, a, b) in enumerate(found) if reasons[k] is None}
    for k, (_, a, b) in enumerate(found):
        if reasons[k] is None and last[" ".join(text[a:b].split())] != k:
            reasons[k] = REPEATED
    kept = [k for k, reason in enumerate(reasons) if reason is None]
    for q in pull_quotes([text[found[k][1] : found[k][2]] for k in kept]):
        reasons[kept[q]] = PULL_QUOTE
    for (span, a, b), reason in zip(found, reasons):
        if reason is not None:
            dropped[reason] = dropped.get(reason, 0) + 1
            continue
        spans.append(span)
        bounds.append((a, b))
    gaps = []
    for (_, end), (start, _) in zip(bounds, bounds[1:]):
        between = text[end:start]
        gaps.append(between if not between.strip() else ("\n" if "\n" in between else " "))
    return Sentences(spans, tuple(text[a:b] for a, b in bounds), tuple(gaps), merged, dropped)
