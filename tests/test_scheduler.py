"""engine.run.scheduler against a real corpus, real prompts, real LMDB — with scripted
provider doubles (controlled latency, out-of-order completion, refusals, failures)."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import anyio
import msgspec
import pytest

from engine.cache.call_cache import RESULTS_DB, CallCache, GroupCommitWriter
from engine.config import ExperimentConfig, parse_config
from engine.contracts import CallRequest, CallResult, Capabilities, ResultRow, Usage
from engine.run.design import Design
from engine.run.results import iter_rows, load_cell_states
from engine.run.scheduler import FailurePolicy, RunAborted, Scheduler, StopRequest
from engine.cache.store import Store
from tests.scheduler_harness import design_toml

RUN_ID = "00112233445566ff"

JUDGES = """
[[judges]]
name = "sim"
adapter = "scripted"
model = "sim-1"
concurrency = {concurrency}
[[judges]]
name = "other"
adapter = "scripted"
model = "sim-2"
prompts = ["bands"]
concurrency = {concurrency}
"""


@pytest.fixture(scope="module")
def items(corpus):  # type: ignore[no-untyped-def]
    """Recovers each request's item from its two documents, as the simulated judge does."""
    from simulation.items import ItemIndex

    return ItemIndex(corpus.document(d) for d in corpus.doc_ids)


def item_of(items, request: CallRequest):  # type: ignore[no-untyped-def]
    from engine.prompts.documents import extract_documents

    item = items.item(*extract_documents(request.messages))
    assert item is not None, request.messages[-1].content[:200]
    return item


def config_text(*, stopping: str, concurrency: int, window: int) -> str:
    return design_toml(seed=7, stopping=stopping, window=window) + JUDGES.format(concurrency=concurrency)


def score_for(request: CallRequest) -> int:
    """A deterministic 'judge': a score from the request text, 60-100."""
    digest = hashlib.blake2b(request.messages[-1].content.encode(), digest_size=4).digest()
    return 60 + int.from_bytes(digest, "little") % 41


class ScriptedJudge:
    """A provider double: latency, refusals and failures chosen per request."""

    capabilities = Capabilities()

    def __init__(self, *, seed: int = 0, max_latency: float = 0.0, refuse=None, fail=None, too_long=None, fatal_after: int | None = None) -> None:  # type: ignore[no-untyped-def]
        self.rng = random.Random(seed)
        self.max_latency = max_latency
        self.refuse = refuse or (lambda request: False)
        self.fail = fail or (lambda request: False)
        self.too_long = too_long or (lambda request: False)
        self.fatal_after = fatal_after
        self.calls = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.seen: list[CallRequest] = []
        self.answered: list[CallRequest] = []  # answered ok

    async def complete(self, request: CallRequest) -> CallResult:
        self.calls += 1
        self.seen.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.max_latency:
                await anyio.sleep(self.rng.random() * self.max_latency)
            else:
                await anyio.lowlevel.checkpoint()
        finally:
            self.in_flight -= 1
        if self.fatal_after is not None and self.calls > self.fatal_after:
            return CallResult(status="error", text="HTTP 401: invalid api key", error_kind="auth")
        if self.fail(request):
            return CallResult(status="error", text="HTTP 503", error_kind="server")
        if self.too_long(request):
            return CallResult(status="error", text="HTTP 400: maximum context length exceeded", error_kind="context_length")
        if self.refuse(request):
            return CallResult(status="refused", text="I cannot help with that.", error_kind="content_filter")
        self.answered.append(request)
        return CallResult(
            status="ok",
            text=str(score_for(request)),
            usage=Usage(prompt_tokens=100, completion_tokens=2),
            cost_usd=0.001,
        )

    async def aclose(self) -> None:
        pass


def make_config(tmp_path: Path, *, stopping: str = 'kind = "fixed"\nn = 6', concurrency: int = 8, window: int = 2) -> ExperimentConfig:
    text = config_text(stopping=stopping, concurrency=concurrency, window=window)
    return parse_config(text, base_dir=tmp_path)


def run_design(config: ExperimentConfig, corpus, store: Store, judges: dict[str, ScriptedJudge], run_id: str = RUN_ID, scheduler_class: type[Scheduler] = Scheduler, **options) -> Scheduler:  # type: ignore[no-untyped-def]
    from engine.corpus.pairs import document_order
    from engine.prompts import load_prompt

    prompts = {name: load_prompt(name) for name in ("pair", "bands", "triples")}
    # the scripted judges answer a bare number, which the score prompts' parsers read
    design = Design(config, corpus, prompts, document_order=document_order)

    async def main() -> Scheduler:
        async with GroupCommitWriter(store) as writer:
            scheduler = scheduler_class(
                design,
                cache=CallCache(store),
                writer=writer,
                adapters=judges,  # type: ignore[arg-type]
                run_id=run_id,
                prompt_versions={name: p.version for name, p in prompts.items()},
                **options,
            )
            scheduler.restore()
            await scheduler.run()
        return scheduler

    return anyio.run(main)


def rows_of(store: Store, run_id: str = RUN_ID) -> list[tuple]:
    return [
        (r.judge, r.prompt_id, r.needle, r.hay, r.i, r.j, r.doc_index, r.doc_id, r.status, r.score, r.order, r.control)
        for r in iter_rows(store, bytes.fromhex(run_id))
    ]


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = Store(tmp_path / "store")
    yield s
    s.close()


def test_results_do_not_depend_on_timing_or_concurrency(corpus, tmp_path: Path) -> None:
    paper = 'kind = "paper"\nmin_docs = 12\nwindow = 4\ntolerance = 2.0'
    stores = []
    for n, (latency, concurrency) in enumerate([(0.0, 1), (0.004, 16), (0.004, 5)]):
        store = Store(tmp_path / f"s{n}")
        config = make_config(tmp_path, stopping=paper, concurrency=concurrency, window=3)
        judges = {"sim": ScriptedJudge(seed=n, max_latency=latency), "other": ScriptedJudge(seed=n + 10, max_latency=latency)}
        run_design(config, corpus, store, judges)
        assert judges["sim"].max_in_flight <= concurrency
        stores.append(store)
    reference = rows_of(stores[0])
    assert len(reference) > 0
    for store in stores[1:]:
        assert rows_of(store) == reference
    # in document-index order within each cell, and every cell reached its minimum
    states = load_cell_states(stores[0], bytes.fromhex(RUN_ID))
    assert all(state.n >= 12 or state.reason == "exhausted" for state in states.values())
    for store in stores:
        store.close()


def test_in_flight_calls_stay_within_each_judges_concurrency(corpus, store: Store, tmp_path: Path) -> None:
    config = make_config(tmp_path, concurrency=3)
    judges = {"sim": ScriptedJudge(max_latency=0.003), "other": ScriptedJudge(max_latency=0.003)}
    run_design(config, corpus, store, judges)
    assert 1 < judges["sim"].max_in_flight <= 3
    assert 1 < judges["other"].max_in_flight <= 3


def test_next_item_goes_to_the_least_advanced_cell(corpus, items, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = make_config(tmp_path, concurrency=1, window=1)
    judges = {"sim": ScriptedJudge(), "other": ScriptedJudge()}
    run_design(config, corpus, store, judges)
    cells = [item_of(items, r) for r in judges["sim"].seen]
    names = [f"{t.needle}/{t.hay}/{t.i},{t.j}" for t in cells]
    issued = dict.fromkeys(names, 0)
    # 3 needles x 2 hays x 3 positions, each exactly n=6 documents (fixed rule: no wasted call);
    # at (0, 0) there is no hay, so a rand item is the orig item's very call, made once
    assert len(issued) == 15 and len(names) == 15 * 6
    for name in names:
        issued[name] += 1
        assert max(issued.values()) - min(issued.values()) <= 1, issued


def test_refused_and_failed_documents_are_recorded_and_replaced(corpus, items, store: Store, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    doc_ids = sorted(corpus.doc_ids)
    refused_docs, failed_docs = set(doc_ids[:3]), set(doc_ids[3:5])

    def doc_of(request: CallRequest) -> str:
        return item_of(items, request).doc_id

    judges = {
        "sim": ScriptedJudge(refuse=lambda r: doc_of(r) in refused_docs, too_long=lambda r: doc_of(r) in failed_docs),
        "other": ScriptedJudge(),
    }
    run_design(make_config(tmp_path), corpus, store, judges)
    rows = [r for r in iter_rows(store, bytes.fromhex(RUN_ID)) if r.judge == "sim"]
    by_status: dict[str, int] = {}
    for r in rows:
        by_status[r.status] = by_status.get(r.status, 0) + 1
        if r.status != "ok":
            assert r.score is None  # no failure ever becomes a score
            assert r.error_kind in ("content_filter", "context_length")
    assert by_status.get("refused", 0) > 0 and by_status.get("error", 0) > 0
    cells: dict[tuple, list] = {}
    for r in rows:
        cells.setdefault((r.needle, r.hay, r.i, r.j), []).append(r)
    for cell_rows in cells.values():
        assert sum(r.status == "ok" for r in cell_rows) == 6  # replaced until n ok scores
        indices = [r.doc_index for r in cell_rows]
        assert indices == sorted(indices)
    # refusals are answers (cached); errors are not cached
    cache = CallCache(store)
    for r in rows:
        cached = [cache.get(bytes.fromhex(k)) for k in r.cache_keys]
        if r.status == "error":
            assert cached == [None]
        else:
            assert cached[0] is not None and cached[0].status == r.status


def test_cache_hits_make_no_calls_and_a_finished_run_is_not_rerun(corpus, store: Store, tmp_path: Path) -> None:
    config = make_config(tmp_path)
    first = {"sim": ScriptedJudge(), "other": ScriptedJudge()}
    run_design(config, corpus, store, first)
    rows = rows_of(store)
    assert first["sim"].calls > 0
    # the same run again: every cell ended, nothing dispatched
    again = {"sim": ScriptedJudge(), "other": ScriptedJudge()}
    scheduler = run_design(config, corpus, store, again)
    assert again["sim"].calls == again["other"].calls == 0
    assert scheduler.progress.cells_reused == len(scheduler.runs)
    assert rows_of(store) == rows
    # a different run (n 6 -> 8): the first 6 documents per cell come from the cache
    bigger = make_config(tmp_path, stopping='kind = "fixed"\nn = 8')
    third = {"sim": ScriptedJudge(), "other": ScriptedJudge()}
    scheduler = run_design(bigger, corpus, store, third, run_id="00000000000000aa")
    cells = len(scheduler.runs)
    progress = scheduler.progress
    assert progress.calls_network + progress.calls_cached == 8 * cells
    assert progress.calls_network == third["sim"].calls + third["other"].calls <= 2 * cells
    assert progress.calls_cached >= 6 * cells
    new_rows = rows_of(store, "00000000000000aa")
    assert len(new_rows) == 8 * cells
    assert [r for r in new_rows if r[6] < 6] == rows


def test_an_aborted_run_resumes_to_the_same_results(corpus, tmp_path: Path) -> None:
    config = make_config(tmp_path, stopping='kind = "paper"\nmin_docs = 10\nwindow = 3\ntolerance = 3.0')
    reference_store = Store(tmp_path / "ref")
    reference_judges = {"sim": ScriptedJudge(), "other": ScriptedJudge()}
    run_design(config, corpus, reference_store, reference_judges)
    reference = rows_of(reference_store)
    reference_calls = reference_judges["sim"].calls + reference_judges["other"].calls

    store = Store(tmp_path / "resumed")
    broken = {"sim": ScriptedJudge(fatal_after=40, max_latency=0.002), "other": ScriptedJudge(fatal_after=40, max_latency=0.002)}
    with pytest.raises(RunAborted, match="rejected the call"):
        run_design(config, corpus, store, broken)
    partial = rows_of(store)
    assert 0 < len(partial) < len(reference)
    assert set(partial) < set(reference)  # a prefix of every cell, nothing else
    resumed = {"sim": ScriptedJudge(max_latency=0.002), "other": ScriptedJudge(max_latency=0.002)}
    run_design(config, corpus, store, resumed)
    assert rows_of(store) == reference
    # never paid twice: an answer the aborted run got is asked again only if it
    # was cancelled on its way to the commit (at most the calls in flight: 2 judges x 8)
    answered_before = {request_key_of(r) for judge in broken.values() for r in judge.answered}
    asked_again = {request_key_of(r) for judge in resumed.values() for r in judge.seen}
    assert len(answered_before) >= 40
    assert len(answered_before & asked_again) <= 2 * 8
    assert resumed["sim"].calls + resumed["other"].calls < reference_calls
    reference_store.close()
    store.close()


class StoppingJudge(ScriptedJudge):
    """Requests a graceful stop when its `stop_at`-th call starts."""

    def __init__(self, stop: StopRequest, stop_at: int, **options) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**options)
        self.stop, self.stop_at = stop, stop_at
        self.calls_at_stop: int | None = None

    async def complete(self, request: CallRequest) -> CallResult:
        if self.calls + 1 == self.stop_at:
            self.stop.set()
            self.calls_at_stop = self.calls + 1
        return await super().complete(request)


def test_a_graceful_stop_takes_no_new_item_and_commits_the_calls_in_flight(corpus, tmp_path: Path) -> None:
    config = make_config(tmp_path, stopping='kind = "paper"\nmin_docs = 10\nwindow = 3\ntolerance = 3.0')
    reference_store = Store(tmp_path / "ref")
    run_design(config, corpus, reference_store, {"sim": ScriptedJudge(), "other": ScriptedJudge()})
    reference = rows_of(reference_store)

    store = Store(tmp_path / "stopped")
    stop = StopRequest()
    stopping = {"sim": StoppingJudge(stop, 30, max_latency=0.005), "other": StoppingJudge(stop, 10**9, max_latency=0.005)}
    at_stop: dict[str, int] = {}
    stop.on_set(lambda: at_stop.update({name: judge.calls for name, judge in stopping.items()}))
    run_design(config, corpus, store, stopping, stop=stop)  # returns once the calls in flight are done
    assert stopping["sim"].calls_at_stop == 30 and at_stop["sim"] == 29
    # after the stop, only items already taken (at most 8 per judge) reach the judge
    for name, judge in stopping.items():
        assert at_stop[name] <= judge.calls <= at_stop[name] + 8, (name, judge.calls, at_stop)
    assert 0 < len(rows_of(store)) < len(reference)
    resumed = {"sim": ScriptedJudge(max_latency=0.002), "other": ScriptedJudge(max_latency=0.002)}
    run_design(config, corpus, store, resumed)
    assert rows_of(store) == reference
    # every answer the stopped run received was committed: the resume asks none again
    answered_before = {request_key_of(r) for judge in stopping.values() for r in judge.answered}
    asked_again = {request_key_of(r) for judge in resumed.values() for r in judge.seen}
    assert len(answered_before) >= 30 and not answered_before & asked_again
    reference_store.close()
    store.close()


def test_persistent_failures_abort_instead_of_burning_through_the_corpus(corpus, store: Store, tmp_path: Path) -> None:
    judges = {"sim": ScriptedJudge(fail=lambda r: True), "other": ScriptedJudge()}
    policy = FailurePolicy(consecutive_failures=20, max_outage_s=0.0)  # no probing: stop at once
    with pytest.raises(RunAborted, match="judge 'sim' is failing: 20 calls in a row failed"):
        run_design(make_config(tmp_path), corpus, store, judges, failure_policy=policy)
    assert judges["sim"].calls < 20 + 8  # stopped within one round of in-flight calls after the threshold
    assert all(r.judge != "sim" for r in iter_rows(store, bytes.fromhex(RUN_ID)))  # no failure became a row


def test_identical_requests_in_flight_together_are_called_once(corpus, store: Store, tmp_path: Path) -> None:
    # at (0, 0) a window is the needle sentence alone: orig and rand hay give the same pair
    text = config_text(stopping='kind = "fixed"\nn = 5', concurrency=8, window=2).replace(
        "positions = [[0, 0], [1, 2], [2, 1]]", "positions = [[0, 0]]"
    )
    config = parse_config(text, base_dir=tmp_path)
    judges = {"sim": ScriptedJudge(max_latency=0.01), "other": ScriptedJudge(max_latency=0.01)}
    scheduler = run_design(config, corpus, store, judges)
    for judge in judges.values():
        keys = [request_key_of(r) for r in judge.seen]
        assert len(keys) == len(set(keys))  # never the same request twice
    rows = [r for r in iter_rows(store, bytes.fromhex(RUN_ID)) if r.judge == "other" and r.order == "12" and not r.control]
    by_doc: dict[tuple, set] = {}
    for r in rows:
        by_doc.setdefault((r.needle, r.doc_id), set()).add((r.raw_text, r.latency_s, r.cache_keys))
    assert len(by_doc) == 3 * 5  # none, neg, con x 5 documents, each seen by both hays
    assert all(len(answers) == 1 for answers in by_doc.values())  # orig and rand rows share one answer
    assert scheduler.progress.calls_cached > 0


def request_key_of(request: CallRequest) -> bytes:
    from engine.contracts import request_key

    return request_key(request)


class TriplesJudge(ScriptedJudge):
    """Answers triple-extraction calls as the simulated judge does."""

    async def complete(self, request: CallRequest) -> CallResult:
        from simulation.judge import triples_answer
        from engine.prompts.documents import extract_document

        result = await super().complete(request)
        return msgspec.structs.replace(result, text=triples_answer(extract_document(request.messages)))


class CommitCheckingScheduler(Scheduler):
    """The real scheduler, recording any item consumed before its answers were stored."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.consumed_before_commit: list[str] = []

    def restore(self) -> None:
        super().restore()
        consume = self.output.consume

        def checked(cell_no, doc_index, judged) -> None:  # type: ignore[no-untyped-def]
            row = msgspec.msgpack.decode(judged[0][2], type=ResultRow)
            for key in row.cache_keys:
                if self.cache.store.get_raw(RESULTS_DB, bytes.fromhex(key)) is None:
                    self.consumed_before_commit.append(key)
            consume(cell_no, doc_index, judged)

        self.output.consume = checked  # type: ignore[method-assign]


def test_an_item_never_counts_before_the_answers_it_used_are_stored(corpus, store: Store, tmp_path: Path) -> None:
    # triples items make two calls, and one document's extraction is shared by
    # many items (the same window under several needles): twins in flight
    text = config_text(stopping='kind = "fixed"\nn = 4', concurrency=8, window=2)
    text = text.replace('model = "sim-1"\n', 'model = "sim-1"\nprompts = ["triples"]\n').replace('prompts = ["bands"]', 'prompts = ["triples"]')
    config = parse_config(text, base_dir=tmp_path)
    # latencies spread well past the 10 ms commit gather, so a twin can finish first
    judges = {"sim": TriplesJudge(max_latency=0.08), "other": TriplesJudge(seed=3, max_latency=0.08)}
    scheduler = run_design(config, corpus, store, judges, scheduler_class=CommitCheckingScheduler)
    assert isinstance(scheduler, CommitCheckingScheduler)
    rows = list(iter_rows(store, bytes.fromhex(RUN_ID)))
    assert rows and all(len(r.cache_keys) == 2 for r in rows)
    assert sum(r.status == "ok" for r in rows) == len(rows)
    assert scheduler.progress.calls_cached > 0  # answers were shared between items
    assert scheduler.consumed_before_commit == []
