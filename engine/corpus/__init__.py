"""The corpus stage: raw files read and cleaned, parsed once by spaCy
(`engine.corpus.nlp`, loaded only by `prepare`), screened by the needle rules,
stored in the store's corpus databases, and read back as needle/hay pairs.
"""

from engine.exports import lazy_exports

__all__ = ['BUNDLED_CORPUS', 'Corpus', 'CorpusSettings', 'PrepareSummary', 'PreparedCorpus', 'RawDocument', 'StoredDocument', 'document_order', 'model_names', 'prepare_corpus', 'read_documents', 'stored_summary']
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "CorpusSettings": "prepare",
        "StoredDocument": "prepare",
        "PrepareSummary": "prepare",
        "prepare_corpus": "prepare",
        "stored_summary": "prepare",
        "BUNDLED_CORPUS": "prepare",
        "read_documents": "reading",
        "RawDocument": "reading",
        "PreparedCorpus": "prepared_corpus",
        "Corpus": "pairs",
        "document_order": "pairs",
        "model_names": "model_setting",
    },
)
