"""Failures never change the data: the real scheduler, an in-memory corpus,
real LMDB, and the HTTP adapter against the fake provider server with
injected faults (engine.run.judge_health, engine.run.scheduler)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulation.fake_server import Fault, async_server_in_thread, serve_in_thread
from engine.run.counters import Progress
from engine.run.judge_health import FailurePolicy, RunAborted
from engine.run.results import iter_failures, iter_rows, load_cell_states
from engine.cache.store import Store
from tests.scheduler_harness import RUN_ID, make_design, outcomes, run_scheduler, server_config
from tests.test_transport import ScriptedServer, switch_protocols

FAST = FailurePolicy(retry_base_s=0.005, retry_cap_s=0.05, probe_base_s=0.01, probe_cap_s=0.05, max_outage_s=0.3)
# every transient fault the fake server injects, ~45% of all requests
TRANSIENT_FAULTS = (
    Fault(kind="server_error", rate=0.10),
    Fault(kind="overloaded", rate=0.08),
    Fault(kind="rate_limit", rate=0.08, retry_after_s=0.01),
    Fault(kind="rate_limit_bare", rate=0.05),
    Fault(kind="reset", rate=0.05),
    Fault(kind="truncated", rate=0.05),
    Fault(kind="malformed", rate=0.05),
    Fault(kind="http_error", status=502, rate=0.04),
)


class OutageWatch:
    """Observes the real HTTP adapter's calls while the judge is down (from a
    `circuit_open` answer, as the scheduler takes it down, until an answer):
    how many went out and how many were in flight at once."""

    def __init__(self, adapter) -> None:  # type: ignore[no-untyped-def]
        self.adapter = adapter
        self.down = False
        self.in_flight = 0
        self.most_in_flight = 0
        self.sent = 0

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.adapter, name)  # reset_circuit, concurrency_limit...

    async def complete(self, request):  # type: ignore[no-untyped-def]
        watching = self.down
        self.in_flight += watching
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            result = await self.adapter.complete(request)
        finally:
            self.in_flight -= watching
        self.sent += watching and result.attempts > 0
        if result.error_kind == "circuit_open":
            self.down = True
        elif result.status != "error":  # an answer (a late one to an earlier call): the judge is up
            self.down = False
        return result


@pytest.fixture(scope="module")
def server():  # type: ignore[no-untyped-def]
    with serve_in_thread() as running:
        yield running


@pytest.fixture(scope="module")
def reference(server, tmp_path_factory):  # type: ignore[no-untyped-def]
    """A fault-free run: the data every faulty run must reproduce."""
    server.configure(faults=())
    tmp = tmp_path_factory.mktemp("reference")
    store = Store(tmp / "store")
    run_scheduler(make_design(server_config(tmp, server.url)), store, failure_policy=FAST)
    rows = outcomes(store)
    store.close()
    assert rows and all(row[9] == "ok" for row in rows)
    return rows


def test_transient_faults_do_not_change_which_documents_are_scored(server, reference, tmp_path: Path) -> None:
    # max_attempts = 1: the adapter gives up at the first fault, so every
    # retry here is the scheduler's (the item stays pending and is asked again)
    server.configure(faults=TRANSIENT_FAULTS, seed=3)
    store = Store(tmp_path / "store")
    scheduler = run_scheduler(make_design(server_config(tmp_path, server.url)), store, failure_policy=FAST)
    stats = server.stats()
    assert stats["requests"] > stats["completed"] * 1.5  # the faults really happened
    assert stats["repeated_completions"] == 0  # no answered call was paid twice
    assert outcomes(store) == reference  # same documents per cell, same scores
    assert scheduler.progress.calls_failed > 0.3 * stats["requests"]
    assert scheduler.progress.items_retried >= scheduler.progress.calls_failed
    failures = list(iter_failures(store, bytes.fromhex(RUN_ID)))
    assert len(failures) == scheduler.progress.calls_failed
    kinds = {f.result.error_kind for f in failures}
    assert {"server", "rate_limit", "connection", "malformed"} <= kinds, kinds
    assert all(f.result.status == "error" and f.result.text for f in failures)  # raw text kept, never a score
    store.close()


def test_a_dead_judge_leaves_items_pending_and_a_rerun_completes_them(server, reference, tmp_path: Path) -> None:
    # the judge answers 40 requests, then every request fails; the adapter's
    # breaker opens after 3 failed calls (instant `circuit_open` answers)
    server.configure(faults=(Fault(kind="server_error", schedule=tuple(range(40, 20_000))),))
    config = server_config(tmp_path, server.url, options=", breaker_threshold = 3")
    store = Store(tmp_path / "store")
    progress = Progress()
    watches: list[OutageWatch] = []
    with pytest.raises(RunAborted) as caught:
        run_scheduler(make_design(config), store, failure_policy=FAST, progress=progress,
                      watch=lambda adapter: watches.append(OutageWatch(adapter)) or watches[-1])
    message = str(caught.value)
    assert "judge 'sim' is failing" in message and "run the same config again to resume" in message
    assert "pending" in message
    partial = outcomes(store)
    assert 0 < len(partial) < len(reference)
    assert set(partial) < set(reference)  # a prefix of cells' data, no error row
    assert all(row[9] == "ok" for row in partial)
    failures = list(iter_failures(store, bytes.fromhex(RUN_ID)))
    assert {f.result.error_kind for f in failures} >= {"server", "circuit_open"}
    # the breaker did not turn into a stream of instant failures: the judge was paused
    assert sum(f.result.error_kind == "circuit_open" for f in failures) <= 2 * 8
    # Once down, the judge gets one call per probe and nothing else: the
    # failed requests are those that failed before the breaker opened
    # (threshold), those already in flight (concurrency), and the probes.
    # A count, not a time: how many probes fit in max_outage_s varies with load.
    failed_requests = server.stats()["requests"] - 40
    assert progress.judge_probes >= 1
    assert failed_requests <= 3 + 8 + progress.judge_probes, (failed_requests, progress.judge_probes)
    # ...and a probe is the only call in flight until it answers
    (watch,) = watches
    assert watch.most_in_flight == 1 and watch.sent == progress.judge_probes

    server.configure(faults=())  # the provider recovers
    run_scheduler(make_design(config), store, failure_policy=FAST)
    assert outcomes(store) == reference
    assert server.stats()["repeated_completions"] == 0
    store.close()


def test_refusals_and_unparseable_answers_still_move_the_cell_on(server, tmp_path: Path) -> None:
    # request-indexed faults: the 3rd, 9th... request is refused, others unparseable
    server.configure(faults=(
        Fault(kind="content_filter", schedule=(2, 8, 20, 33)),
        Fault(kind="unparseable", schedule=(5, 14, 27)),
    ))
    store = Store(tmp_path / "store")
    config = server_config(tmp_path, server.url, concurrency=1)
    scheduler = run_scheduler(make_design(config), store, failure_policy=FAST)
    rows = list(iter_rows(store, bytes.fromhex(RUN_ID)))
    # an answer is cached and shared by identical requests of other cells
    # (at (0, 0) both hays give the same pair): count distinct answers
    answers = {(r.status, r.cache_keys) for r in rows if r.status != "ok"}
    assert sorted(status for status, _ in answers) == ["refused"] * 4 + ["unparseable"] * 3
    assert all(r.score is None for r in rows if r.status != "ok")  # no failure becomes a score
    by_cell: dict[tuple, list] = {}
    for r in rows:
        by_cell.setdefault((r.needle, r.hay, r.i, r.j), []).append(r)
    for cell_rows in by_cell.values():
        assert sum(r.status == "ok" for r in cell_rows) == 5  # replaced by the next documents
        assert [r.doc_index for r in cell_rows] == sorted(r.doc_index for r in cell_rows)
    states = load_cell_states(store, bytes.fromhex(RUN_ID))
    assert sum(s.failed for s in states.values()) == sum(r.status != "ok" for r in rows) >= 7
    assert scheduler.progress.calls_failed == 0
    store.close()


def test_a_transient_error_row_of_an_older_version_is_asked_again(server, reference, tmp_path: Path) -> None:
    """Before this rule a transient failure was stored as the item's row and
    replayed on every re-run; now the re-run drops it (and the rows after
    it) and asks again, so the data end as a fault-free run's."""
    import msgspec

    from engine.contracts import ResultRow
    from engine.run.results import ROWS_DB, RUNS_DB, CellState, cell_state_key, encode_row, row_key

    server.configure(faults=())
    store = Store(tmp_path / "store")
    config = server_config(tmp_path, server.url)
    run_scheduler(make_design(config), store, failure_policy=FAST)
    run_key = bytes.fromhex(RUN_ID)
    victim = next(r for r in iter_rows(store, run_key) if r.i == 1 and r.doc_index >= 2)
    cell_no = next(n for n, s in load_cell_states(store, run_key).items() if s.label.endswith(f"/{victim.needle}/{victim.hay}/(1,2)"))
    error = msgspec.structs.replace(victim, status="error", score=None, raw_text="HTTP 503", error_kind="server")
    store.put_many_raw(ROWS_DB, [(row_key(run_key, cell_no, victim.doc_index), encode_row(error))])
    state = msgspec.msgpack.decode(store.get_raw(RUNS_DB, cell_state_key(run_key, cell_no)), type=CellState)
    store.put_many_raw(RUNS_DB, [(cell_state_key(run_key, cell_no), msgspec.msgpack.encode(msgspec.structs.replace(state, failed=1)))])
    store.delete("results", bytes.fromhex(victim.cache_keys[0]))  # transient failures were never cached
    assert outcomes(store) != reference

    before = server.stats()["requests"]
    run_scheduler(make_design(config), store, failure_policy=FAST)
    assert outcomes(store) == reference
    assert server.stats()["requests"] - before == 1  # only the failed call; the rest from the cache
    assert isinstance(victim, ResultRow)
    store.close()


def test_a_url_that_switches_protocols_stops_the_run_at_once(tmp_path: Path) -> None:
    """101 Switching Protocols: the URL is an upgrade endpoint, not an API.
    No retry can fix it, so the run stops at its first answer, not after
    the outage limit, and says what to fix."""
    # were it transient, the judge would be probed until the outage limit, then "is failing"
    patient = FailurePolicy(retry_base_s=0.01, probe_base_s=0.05, probe_cap_s=0.1, max_outage_s=3.0)
    # the transport tests' raw TCP server, on its own loop (the scheduler runs its own)
    with async_server_in_thread(lambda: ScriptedServer(*[switch_protocols] * 64), name="raw-101") as server:
        config = server_config(tmp_path, f"http://127.0.0.1:{server.port}")
        store = Store(tmp_path / "store")
        with pytest.raises(RunAborted) as caught:
            run_scheduler(make_design(config), store, failure_policy=patient)
        requests = len(server.requests)
    message = str(caught.value)
    assert "judge 'sim'" in message and "(protocol)" in message and "Switching Protocols" in message
    assert "fix the judge's base_url" in message and "websocket" in message
    assert 1 <= requests <= 8  # the calls of the first wave (concurrency 8), none retried
    assert outcomes(store) == []  # no failure becomes a row
    store.close()
