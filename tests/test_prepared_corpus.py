"""Reading a prepared corpus: opening a store, decoding documents, windows."""

from __future__ import annotations

import msgspec
import pytest

from engine.contracts import ConfigError
from engine.corpus.prepare import CORPUS_DB, META_DB, SUMMARY_KEY
from engine.corpus.prepared_corpus import PreparedCorpus, join_sentences
from engine.cache.store import Store


def test_windows_are_the_joined_sentences_at_every_position(corpus):
    # window slices a per-document layout; it must equal joining the stored sentences and gaps
    corpus = corpus.documents
    for doc_id in corpus.doc_ids[:12]:
        document = corpus.document(doc_id)
        count = len(document.sentences)
        for center in range(count):
            for i in range(0, min(center, 9) + 1):
                for j in range(0, min(count - 1 - center, 9) + 1):
                    own = corpus.window(document, center, i, j, None)
                    before = join_sentences(document, center - i, center) + (document.gaps[center - 1] if i else "")
                    after = (document.gaps[center] if j else "") + join_sentences(document, center + 1, center + j + 1)
                    assert own == ((before if i else ""), (after if j else "")), (doc_id, center, i, j)
                    spaced = corpus.window(document, center, i, j, " ")
                    assert spaced == (
                        join_sentences(document, center - i, center) + " " if i else "",
                        " " + join_sentences(document, center + 1, center + j + 1) if j else "",
                    ), (doc_id, center, i, j)
        assert corpus.window(document, 0, 1, 0, None) is None and corpus.window(document, count - 1, 0, 1, None) is None
    with pytest.raises(ValueError, match="positions must be >= 0"):
        corpus.window(corpus.document(corpus.doc_ids[0]), 5, -1, 0, None)


def test_open_reads_every_document_id_of_the_store(prepared_store, corpus):
    reader = PreparedCorpus.open(prepared_store)
    assert len(reader) == len(corpus) >= 10
    assert reader.doc_ids == corpus.doc_ids
    assert reader.document(reader.doc_ids[0]) == corpus.document(corpus.doc_ids[0])
    with pytest.raises(KeyError, match="'nope' is not in the prepared corpus"):
        reader.document("nope")


def test_a_store_without_a_prepared_corpus_asks_to_prepare(tmp_path):
    with Store(tmp_path / "empty") as store:
        with pytest.raises(ConfigError, match="no prepared corpus in this store; run `needlejudge prepare --store"):
            PreparedCorpus.open(store)


def test_a_store_in_an_older_format_asks_to_prepare_again(prepared_store, corpus, tmp_path):
    """A document stored before needle edits carried their audit trail
    (NeedleEdit of two fields) gives a clear error, not a decoding trace."""
    doc_id = corpus.doc_ids[0]
    old = msgspec.to_builtins(corpus.document(doc_id))
    old[5], old[6] = old[5][:2], old[6][:2]  # neg, con as (sentence, perturbed)
    with Store(tmp_path / "old") as store:
        store.put_many_raw(META_DB, [(SUMMARY_KEY, prepared_store.get_raw(META_DB, SUMMARY_KEY))])
        store.put_many_raw(CORPUS_DB, [(doc_id.encode(), msgspec.msgpack.encode(old))])
        with pytest.raises(ConfigError, match="older format.*run `needlejudge prepare --store"):
            PreparedCorpus.open(store).document(doc_id)
