"""Boilerplate: pieces of text repeated across many documents of a corpus.

Outlets stamp the same lines on many articles: source credits ("Source:
News agencies"), newsletter blurbs, share rows ("Share this slide: ..."),
contact lines, disclaimers ("The views expressed in this article are the
author's own ..."). In text shipped one line per article they are not lines
of their own, so they are found as rough sentences instead: the text split
after ".", "!" or "?" and the space that follows, except after an
abbreviation ("Gen.", "U.S.", "c."). A piece of at least two words, without
quotation marks (a quotation repeated by several articles is still
someone's words, and cutting one mark out would upset the quotation state),
found in at least `MIN_DOCUMENTS` documents of the corpus is boilerplate,
and is cut from every document before parsing. The rule is the data's, not
a list of what one outlet writes: a piece must repeat across documents.

A line without a full stop runs into the sentence after it ("Media playback
is not supported on this device The committee has ..."), so the opening
words of a rough sentence count too: an opening of `HEAD_WORDS` words that
ends in a lower-case word, stands before a capitalised one, and is found in
at least `MIN_DOCUMENTS` documents before at least `MIN_DOCUMENTS` different
words is a line run into whatever follows it, and is cut. Prose openings
that repeat end in a name's first part ("Prime Minister Theresa May") or
go on with the same word; a line stamped before many different sentences
does neither.

Pieces are kept as 8-byte BLAKE2b digests: the count over a corpus costs
one pass of cleaning and a few bytes per distinct piece.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from engine.corpus.cleaning import ABBREVIATIONS, TITLES, clean_text
from engine.corpus.reading import read_documents

MIN_DOCUMENTS = 3
HEAD_WORDS = range(4, 13)
_PIECE_END = re.compile(r"(?<=[.!?])[\"'\u201d\u2019)\]]*[ \t]+(?=\S)")
_WORDS = "|".join(sorted(TITLES | ABBREVIATIONS | {w.capitalize() for w in ABBREVIATIONS}))
# a title, an abbreviation, an initial or a dotted acronym ("U.S.") before the period
_ABBREVIATION_END = re.compile(rf"(?<![^\s(])(?:{_WORDS}|[A-Z]|(?:[A-Za-z]\.)+[A-Za-z])\.$")
_QUOTATION_MARKS = re.compile("[\"\u201c\u201d\u201e\u00ab\u00bb]")
_SPACES = re.compile(r"[ \t]{2,}")
_WORD = re.compile(r"\S+")
_HEAD = b"head\x00"  # an opening's digest differs from a whole piece's with the same words


def rough_sentences(text: str) -> Iterator[tuple[int, int]]:
    """[start, end) of each rough sentence of `text`, line by line."""
    offset = 0
    for line in text.split("\n"):
        start = 0
        for match in _PIECE_END.finditer(line):
            if _ABBREVIATION_END.search(line, start, match.start()):
                continue
            yield offset + start, offset + match.start()
            start = match.end()
        if start < len(line):
            yield offset + start, offset + len(line)
        offset += len(line) + 1


def _candidate(piece: str) -> bool:
    return len(piece.split()) >= 2 and not _QUOTATION_MARKS.search(piece)


def _digest(piece: str, kind: bytes = b"") -> bytes:
    return hashlib.blake2b(kind + " ".join(piece.split()).encode("utf-8"), digest_size=8).digest()


def piece_digests(text: str) -> set[bytes]:
    """The digests of the boilerplate candidates of one document."""
    return {_digest(text[a:b]) for a, b in rough_sentences(text) if _candidate(text[a:b])}


def _heads(piece: str) -> Iterator[tuple[int, str]]:
    """(where the opening ends in `piece`, the word after it) for each opening
    of `piece` that could be a line run into a sentence: `HEAD_WORDS` words
    ending in a lower-case word that is not a function word ("device", not
    "the")."""
    from spacy.lang.en.stop_words import STOP_WORDS  # here: importing spaCy at start-up slows every CLI command

    words = list(_WORD.finditer(piece))
    quoted = next((i for i, word in enumerate(words) if _QUOTATION_MARKS.search(word.group())), len(words))
    for k in HEAD_WORDS:
        if len(words) <= k + 1 or k > quoted:
            return
        last = words[k - 1].group()
        if last.isalpha() and last.islower() and last not in STOP_WORDS:
            yield words[k - 1].end(), words[k].group()


def _first_letter(word: str) -> str:
    return next((c for c in word if c.isalpha()), "")


def repeated_pieces(texts: Iterable[str], min_documents: int = MIN_DOCUMENTS) -> frozenset[bytes]:
    """The digests of the pieces found in at least `min_documents` of `texts`,
    and of the openings found there before at least `min_documents` different words."""
    counts: Counter[bytes] = Counter()
    heads: Counter[bytes] = Counter()
    followers: dict[bytes, set[str]] = {}
    run_on: set[bytes] = set()  # openings seen going on in lower case: a clause, not a line
    for text in texts:
        counts.update(piece_digests(text))
        seen: set[bytes] = set()
        for a, b in rough_sentences(text):
            for end, after in _heads(text[a:b]):
                digest = _digest(text[a : a + end], _HEAD)
                first = _first_letter(after)
                if first.islower():
                    run_on.add(digest)
                if not first.isupper():
                    continue
                if digest not in seen:
                    seen.add(digest)
                    heads[digest] += 1
                words = followers.setdefault(digest, set())
                if len(words) < min_documents:
                    words.add(after)
    pieces = {digest for digest, n in counts.items() if n >= min_documents}
    pieces.update(
        d for d, n in heads.items() if n >= min_documents and len(followers[d]) >= min_documents and d not in run_on
    )
    return frozenset(pieces)


def corpus_texts(inputs: Iterable[Path]) -> Iterator[str]:
    """The text of each document `inputs` hold (the first of each id),
    cleaned as prepare cleans it: for counts over the corpus before parsing."""
    seen: set[str] = set()
    for raw in read_documents(inputs):
        if raw.doc_id not in seen:
            seen.add(raw.doc_id)
            yield clean_text(raw.text, raw.title)


def corpus_boilerplate(inputs: Iterable[Path]) -> frozenset[bytes]:
    """The boilerplate of the documents `inputs` hold: one pass before parsing."""
    return repeated_pieces(corpus_texts(inputs))


def remove_pieces(text: str, boilerplate: frozenset[bytes]) -> tuple[str, int]:
    """`text` without its boilerplate pieces (lines left empty dropped), and how many were cut."""
    if not boilerplate:
        return text, 0
    parts: list[str] = []
    last = removed = 0
    for a, b in rough_sentences(text):
        piece = text[a:b]
        if _candidate(piece) and _digest(piece) in boilerplate:
            parts.append(text[last:a])
            last = b
            removed += 1
            continue
        end = next(
            (e for e, after in reversed(list(_heads(piece))) if _first_letter(after).isupper() and _digest(piece[:e], _HEAD) in boilerplate),
            None,
        )
        if end is not None:  # the longest repeated opening: cut up to the word after it
            parts.append(text[last:a])
            last = a + end
            removed += 1
    if not removed:
        return text, 0
    parts.append(text[last:])
    lines = (_SPACES.sub(" ", line).strip() for line in "".join(parts).split("\n"))
    return "\n".join(line for line in lines if line), removed
