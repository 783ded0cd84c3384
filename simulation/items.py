"""The item behind a pair call, recovered from the two documents alone.

A real judge sees only the texts it is asked to compare; the simulated
judge too. Holding the prepared corpus (the sentences of every document, as
`needlejudge prepare` stored them), it reads each document back into corpus
sentences and so recovers exactly what it plants effects on:

- identical documents: needle `none`; its sentence is the one at its own
  document's middle (the none needle's sentence; rand hay never contains
  the donor's middle), which gives the document, the position and the hay;
- equal up to whitespace: the `null_edit` control;
- one document made of corpus sentences and the other differing from it
  inside a single sentence: that sentence is the needle (its document,
  position, and the hay: `rand` when any other sentence comes from another
  document); the edit is the document's stored neg or con edit, else an
  entity replacement (ner); the order is "21" when the corpus text is Document 2;
- anything else two corpus texts: the `negative` control.

`item` answers None when the texts are not made of corpus sentences (a
request built by hand, another corpus): the caller then guesses from the
texts alone (`simulation.judge.infer_item`).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from engine.corpus.prepare import CORPUS_DB, StoredDocument
from engine.cache.store import Store
from simulation.judge import ItemInfo

PREFIX = 16  # characters of a sentence's start that index it


class _Sentence(msgspec.Struct, frozen=True, array_like=True):
    doc_id: str
    index: int
    text: str


class _Span(msgspec.Struct, frozen=True, array_like=True):
    sentence: _Sentence
    start: int
    end: int


class ItemIndex:
    """Every corpus sentence, indexed by its first characters."""

    def __init__(self, documents: Iterable[StoredDocument]) -> None:
        self._by_prefix: dict[str, list[_Sentence]] = {}
        self._short_lengths: set[int] = set()
        self._middle: dict[str, int] = {}
        self._edits: dict[tuple[str, str], str] = {}  # (doc_id, perturbed sentence) -> needle
        for document in documents:
            self._middle[document.doc_id] = document.middle
            self._edits[document.doc_id, document.neg.perturbed] = "neg"
            self._edits[document.doc_id, document.con.perturbed] = "con"
            for index, text in enumerate(document.sentences):
                if not text:
                    continue
                if len(text) < PREFIX:
                    self._short_lengths.add(len(text))
                self._by_prefix.setdefault(text[:PREFIX], []).append(_Sentence(document.doc_id, index, text))

    @classmethod
    def from_store(cls, store: Store) -> ItemIndex:
        """The index of the corpus prepared in `store` (read once; the store may be closed after)."""
        decoder = msgspec.msgpack.Decoder(StoredDocument)
        return cls(decoder.decode(raw) for _, raw in store.items_raw(CORPUS_DB))

    def __len__(self) -> int:
        return len(self._middle)

    def parse(self, text: str) -> list[_Span] | None:
        """`text` as consecutive corpus sentences (with any whitespace between), or None."""
        spans: list[_Span] = []
        position, size = 0, len(text)
        while True:
            while position < size and text[position].isspace():
                position += 1
            if position >= size:
                return spans
            previous = spans[-1].sentence if spans else None
            best: _Sentence | None = None
            best_rank: tuple[bool, int] = (False, -1)
            for candidate in self._candidates(text, position):
                if not text.startswith(candidate.text, position):
                    continue  # (sentences may also meet without whitespace: a gap can be empty)
                follows = previous is not None and (previous.doc_id, previous.index + 1) == (candidate.doc_id, candidate.index)
                rank = (follows, len(candidate.text))
                if rank > best_rank:
                    best, best_rank = candidate, rank
            if best is None:
                return None
            spans.append(_Span(best, position, position + len(best.text)))
            position += len(best.text)

    def _candidates(self, text: str, position: int) -> list[_Sentence]:
        found = list(self._by_prefix.get(text[position : position + PREFIX], ()))
        for length in self._short_lengths:
            found.extend(self._by_prefix.get(text[position : position + length], ()))
        return found

    def item(self, document_1: str, document_2: str) -> ItemInfo | None:
        if document_1 == document_2:
            return self._unchanged(document_1)
        if " ".join(document_1.split()) == " ".join(document_2.split()):
            return ItemInfo(control="null_edit")
        for order, original, perturbed in (("12", document_1, document_2), ("21", document_2, document_1)):
            spans = self.parse(original)
            if not spans:
                continue
            needle = _edited_sentence(spans, original, perturbed)
            if needle is not None:
                span = spans[needle]
                shift = len(perturbed) - len(original)
                edited = perturbed[span.start : span.end + shift]
                kind = self._edits.get((span.sentence.doc_id, edited), "ner")
                return self._item(spans, needle, needle=kind, order=order)
        if self.parse(document_1) and self.parse(document_2):
            return ItemInfo(control="negative")
        return None

    def _unchanged(self, text: str) -> ItemInfo | None:
        spans = self.parse(text)
        if not spans:
            return None
        middles = [n for n, span in enumerate(spans) if self._middle.get(span.sentence.doc_id) == span.sentence.index]
        if len(middles) != 1:
            return None
        return self._item(spans, middles[0], needle="none", order="12")

    @staticmethod
    def _item(spans: list[_Span], at: int, *, needle: str, order: str) -> ItemInfo:
        doc_id = spans[at].sentence.doc_id
        hay = "rand" if any(span.sentence.doc_id != doc_id for span in spans) else "orig"
        return ItemInfo(needle=needle, hay=hay, i=at, j=len(spans) - 1 - at, order=order, doc_id=doc_id)


def _edited_sentence(spans: list[_Span], original: str, perturbed: str) -> int | None:
    """The index of the one span of `original` that holds every difference from `perturbed`."""
    limit = min(len(original), len(perturbed))
    head = 0
    while head < limit and original[head] == perturbed[head]:
        head += 1
    tail = 0
    while tail < limit - head and original[-1 - tail] == perturbed[-1 - tail]:
        tail += 1
    edit_end = len(original) - tail
    for n, span in enumerate(spans):
        if span.start <= head <= span.end and edit_end <= span.end:
            return n
    return None
