"""prepare_corpus on real files into a real store (the session's prepared slice)."""

from __future__ import annotations

import json
import subprocess
import sys

import msgspec
import pytest

from engine.contracts import ConfigError
from engine.prepare import (
    CORPUS_DB,
    CorpusSettings,
    PrepareSummary,
    StoredDocument,
    prepare_corpus,
    stored_summary,
)
from engine.store import Store


def test_summary_counts_add_up(prepared_store, corpus_settings):
    summary = stored_summary(prepared_store)
    assert summary.read == 20
    assert summary.model.startswith("en_core_web_sm")
    assert summary.settings == corpus_settings
    length_drops = sum(summary.drops.get(k, 0) for k in ("empty_after_cleaning", "duplicate_id", "too_short_text", "too_few_sentences", "sentences_too_short", "sentences_too_long"))
    screen_drops = sum(summary.drops.get(k, 0) for k in ("no_neg", "no_con", "no_ner"))
    assert summary.read == length_drops + summary.kept_length
    assert summary.kept_length == summary.kept_screening + screen_drops
    assert prepared_store.count(CORPUS_DB) == summary.kept_screening


def test_stored_documents_meet_the_filters(prepared_store, corpus_settings):
    for key, raw in prepared_store.items_raw(CORPUS_DB):
        doc = msgspec.msgpack.decode(raw, type=StoredDocument)
        assert doc.doc_id == key.decode()
        n = len(doc.sentences)
        assert n >= corpus_settings.min_sentences and len(doc.gaps) == n - 1
        average = sum(map(len, doc.sentences)) / n
        assert corpus_settings.min_chars_per_sentence <= average <= corpus_settings.max_chars_per_sentence
        assert all(s == s.strip() and s for s in doc.sentences)
        assert all(not g.strip() for g in doc.gaps)  # gaps are whitespace only
        assert doc.neg.perturbed != doc.sentences[doc.neg.sentence]
        assert doc.con.perturbed != doc.sentences[doc.con.sentence]
        assert doc.ner_options


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "engine.cli", *args], capture_output=True, text=True, timeout=300)


def test_prepare_cli_reuses_the_prepared_store(prepared_store, corpus_slice_path, corpus_settings):
    before = stored_summary(prepared_store)
    done = _cli(
        "prepare", str(corpus_slice_path), "--store", str(prepared_store.path),
        "--min-chars-per-sentence", str(corpus_settings.min_chars_per_sentence), "--json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = msgspec.json.decode(done.stdout, type=PrepareSummary)
    assert summary.reused
    assert (summary.read, summary.kept_length, summary.kept_screening) == (before.read, before.kept_length, before.kept_screening)
    assert summary.fingerprint == before.fingerprint


def test_changed_settings_or_input_prepare_again(tmp_path):
    # documents too short to parse: the pre-filter drops them without spaCy work
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps({"id": str(k), "title": "T", "text": "It is a short text."}) for k in range(3)))
    with Store(tmp_path / "store") as store:
        first = prepare_corpus([path], store, CorpusSettings(), progress=True)
        assert (first.read, first.kept_length, first.kept_screening, first.reused) == (3, 0, 0, False)
        assert first.drops == {"too_short_text": 3}
        again = prepare_corpus([path], store, CorpusSettings())
        assert again.reused and again.fingerprint == first.fingerprint
        # settings that cannot change the stored corpus, and 150 == 150.0, keep it
        same = prepare_corpus([path], store, CorpusSettings(min_chars_per_sentence=150, batch_size=7, n_process=2))
        assert same.reused
        other = prepare_corpus([path], store, CorpusSettings(min_sentences=31))
        assert not other.reused and other.fingerprint != first.fingerprint
        path.write_text(path.read_text() + "\n" + json.dumps({"id": "3", "title": "T", "text": "It is new."}))
        changed = prepare_corpus([path], store, CorpusSettings(min_sentences=31))
        assert not changed.reused and changed.read == 4


def test_duplicate_ids_and_empty_documents(tmp_path):
    path = tmp_path / "dups.json"
    path.write_text(json.dumps([
        {"id": "1", "title": "A", "text": "It is a text."},
        {"id": "1", "title": "A", "text": "It is a text."},
        {"id": "2", "title": "B", "text": "B\nReferences.\nA book."},
    ]))  # fmt: skip
    with Store(tmp_path / "store") as store:
        summary = prepare_corpus([path], store, CorpusSettings())
    assert summary.drops == {"duplicate_id": 1, "empty_after_cleaning": 1, "too_short_text": 1}


@pytest.mark.parametrize(
    "settings",
    [
        CorpusSettings(min_sentences=0),
        CorpusSettings(min_chars_per_sentence=300, max_chars_per_sentence=200),
        CorpusSettings(batch_size=0),
        CorpusSettings(n_process=0),
        CorpusSettings(scan_radius=-1),
    ],
)
def test_invalid_settings(tmp_path, settings):
    with Store(tmp_path / "store") as store, pytest.raises(ConfigError):
        prepare_corpus([tmp_path], store, settings)


def test_bad_input_error_names_the_file(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('[{"id": "1"}]')
    with Store(tmp_path / "store") as store, pytest.raises(ConfigError, match="bad.json: record 0"):
        prepare_corpus([path], store, CorpusSettings())


@pytest.mark.slow
def test_worker_processes_store_the_same_corpus(corpus_slice_path, corpus_settings, prepared_store, nlp, tmp_path):
    records = json.loads(corpus_slice_path.read_text(encoding="utf-8"))[:3]
    path = tmp_path / "three.json"
    path.write_text(json.dumps(records))
    with Store(tmp_path / "one") as one, Store(tmp_path / "two") as two:
        prepare_corpus([path], one, corpus_settings, nlp=nlp)
        parallel = msgspec.structs.replace(corpus_settings, n_process=2, batch_size=1)
        prepare_corpus([path], two, parallel, nlp=nlp)
        stored_one, stored_two = dict(one.items_raw(CORPUS_DB)), dict(two.items_raw(CORPUS_DB))
    assert stored_one and stored_one == stored_two
    for key, raw in stored_one.items():  # and the same as the session's single-process run
        assert prepared_store.get_raw(CORPUS_DB, key) == raw
