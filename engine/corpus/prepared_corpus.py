"""Read access to a prepared corpus in the store: its document ids, the
decoded documents (cached in memory) and the text windows around a sentence.

A document's text is its sentences joined by the whitespace originally
between them (so a paragraph break inside a window stays a line break).
engine.corpus.pairs builds the pairs from it.
"""

from __future__ import annotations

from typing import NamedTuple

import msgspec

from engine.contracts import ConfigError
from engine.corpus.prepare import CORPUS_DB, StoredDocument, stored_summary
from engine.cache.store import Store


def join_sentences(document: StoredDocument, start: int, stop: int) -> str:
    """Sentences start..stop-1 with the whitespace originally between them."""
    parts: list[str] = []
    for k in range(start, stop):
        if k > start:
            parts.append(document.gaps[k - 1])
        parts.append(document.sentences[k])
    return "".join(parts)


class DocumentLayout(NamedTuple):
    """A document's text as stored (sentences and the gaps between them) with
    each sentence's span: a window is one slice (= join_sentences, cheaper)."""

    text: str
    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, document: StoredDocument) -> DocumentLayout:
        starts, ends, position = [], [], 0
        for k, sentence in enumerate(document.sentences):
            if k:
                position += len(document.gaps[k - 1])
            starts.append(position)
            position += len(sentence)
            ends.append(position)
        return cls(join_sentences(document, 0, len(document.sentences)), starts, ends)


class PreparedCorpus:
    """The documents of a prepared corpus; decoded documents and their
    layouts are cached in memory."""

    def __init__(self, store: Store, doc_ids: tuple[str, ...]) -> None:
        self.store = store
        self.doc_ids = doc_ids
        self._cache: dict[str, StoredDocument] = {}
        self._layouts: dict[str, DocumentLayout] = {}
        self._decoder = msgspec.msgpack.Decoder(StoredDocument)

    @classmethod
    def open(cls, store: Store) -> PreparedCorpus:
        if stored_summary(store) is None:
            raise ConfigError(f"{store.path}: no prepared corpus in this store; run `needlejudge prepare --store {store.path}`")
        with store.begin(db=store.db(CORPUS_DB)) as txn:
            ids = tuple(bytes(k).decode("utf-8") for k in txn.cursor().iternext(keys=True, values=False))
        if not ids:
            raise ConfigError(f"{store.path}: the prepared corpus kept no documents; lower the length bounds and prepare again")
        return cls(store, ids)

    def __len__(self) -> int:
        return len(self.doc_ids)

    def document(self, doc_id: str) -> StoredDocument:
        cached = self._cache.get(doc_id)
        if cached is None:
            raw = self.store.get_raw(CORPUS_DB, doc_id.encode("utf-8"))
            if raw is None:
                raise KeyError(f"document {doc_id!r} is not in the prepared corpus at {self.store.path}")
            try:
                cached = self._cache[doc_id] = self._decoder.decode(raw)
            except msgspec.ValidationError as error:  # a store prepared by an older needlejudge
                raise ConfigError(
                    f"{self.store.path}: document {doc_id!r} is stored in an older format ({error}); "
                    f"run `needlejudge prepare --store {self.store.path}` again"
                ) from None
        return cached

    def window(self, document: StoredDocument, center: int, i: int, j: int, joiner: str | None) -> tuple[str, str] | None:
        """(text before, text after) the `i` sentences before and `j` after
        sentence `center`, None if they do not fit in the document;
        joiner None: the document's own whitespace, else that string
        between the window and the center."""
        if i < 0 or j < 0:
            raise ValueError(f"positions must be >= 0, got i={i}, j={j}")
        if center - i < 0 or center + j >= len(document.sentences):
            return None
        layout = self._layouts.get(document.doc_id)
        if layout is None:
            layout = self._layouts[document.doc_id] = DocumentLayout.of(document)
        text, starts, ends = layout
        prefix = suffix = ""
        if i:
            prefix = text[starts[center - i] : starts[center]] if joiner is None else text[starts[center - i] : ends[center - 1]] + joiner
        if j:
            suffix = text[ends[center] : ends[center + j]] if joiner is None else joiner + text[starts[center + 1] : ends[center + j]]
        return prefix, suffix
