"""Batch judges (`mode = "batch"`) through the real scheduler, real LMDB and
real HTTP to the fake provider server's OpenAI Batch endpoints
(adapters/openai_batch.py, simulation/batch_openai.py): waves, answers
interchangeable with synchronous calls, resubmission of the missing entries
only, whole-batch failures, resume without paying twice (the server counts
how many times it processed each entry)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from engine.run.batch.store import pending_batches
from engine.cache.call_cache import CallCache
from engine.config import parse_config
from engine.registry import create_adapter, create_batch_adapter
from engine.run.results import iter_rows, load_cell_states
from engine.run.scheduler import FailurePolicy, StopRequest
from engine.cache.store import Store
from simulation.batch_endpoints import entry_fails
from simulation.fake_config import BatchFault, BatchSim, FakeConfig
from tests.scheduler_harness import RUN_ID, design_toml, make_design, outcomes, run_scheduler

pytestmark = pytest.mark.usefixtures("keys")

JUDGE = """
[[judges]]
name = "{name}"
adapter = "{adapter}"
model = "sim-{name}"
base_url = "{base}"
mode = "{mode}"
batch_poll_s = 0.02
concurrency = 4
max_attempts = 2
timeout_s = 5.0
prompts = ["bands"]
options = {{ backoff_base_s = 0.005, backoff_cap_s = 0.02 }}
"""
FIXED = 'kind = "fixed"\nn = 5'
CI = 'kind = "ci"\nepsilon = 15.0\nalpha = 0.2\nmin_docs = 3\nmax_docs = 40'
FAST = FailurePolicy(retry_base_s=0.01, retry_cap_s=0.02, probe_base_s=0.01, probe_cap_s=0.02, max_outage_s=2.0)


def design_for(tmp_path: Path, url: str, *judges: tuple[str, str], stopping: str = FIXED, adapter: str = "openai"):  # type: ignore[no-untyped-def]
    text = design_toml(seed=3, stopping=stopping, window=2, needles='["none", "neg"]', positions="[[0, 0], [1, 2]]")
    for name, mode in judges:
        text += JUDGE.format(name=name, base=f"{url}/v1" if adapter == "openai" else url, mode=mode, adapter=adapter)
    return make_design(parse_config(text, base_dir=tmp_path))


def adapters_for(design, max_entries: int | None = None):  # type: ignore[no-untyped-def]
    """The registry's adapters, as the runner makes them: a batch judge's is its batch API."""
    made = {}
    for name, judge in design.judges.items():
        spec = judge.spec()
        made[name] = create_batch_adapter(spec) if spec.mode == "batch" else create_adapter(spec)
        if max_entries is not None and spec.mode == "batch":
            made[name].max_entries = max_entries
    return made


def run(design, store, adapters, **options):  # type: ignore[no-untyped-def]
    try:
        return run_scheduler(design, store, adapters, **({"failure_policy": FAST} | options))
    finally:
        close(adapters)


def close(adapters) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        for adapter in adapters.values():
            await adapter.aclose()

    anyio.run(main)


def rows_of(store: Store, judge: str) -> list[tuple]:
    return [row[1:] for row in outcomes(store) if row[0] == judge]


def processed(server) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """custom_id -> times the fake server ran the entry (what a provider bills)."""
    return server.stats()["batch"]["processed"]


class Observed:
    """A batch adapter seen from outside: `after(operation, value)` runs after each call."""

    def __init__(self, adapter, after) -> None:  # type: ignore[no-untyped-def]
        self.adapter, self.after = adapter, after
        self.capabilities, self.max_entries = adapter.capabilities, adapter.max_entries

    def __getattr__(self, name):  # type: ignore[no-untyped-def]
        call = getattr(self.adapter, name)

        async def observed(*args):  # type: ignore[no-untyped-def]
            value = await call(*args)
            self.after(name, value)
            return value

        return observed


@pytest.fixture
def fresh(server):  # type: ignore[no-untyped-def]
    """The fake server with batch settings and zeroed counters."""

    def configure(**batch) -> None:  # type: ignore[no-untyped-def]
        server.set_config(FakeConfig(batch=BatchSim(**batch)))
        server.reset()

    configure()
    return configure


@pytest.fixture
def sync_rows(server, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Rows of a synchronous run of judge "j", the reference."""

    def make(stopping: str = FIXED) -> list[tuple]:
        design = design_for(tmp_path, server.url, ("j", "sync"), stopping=stopping)
        with Store(tmp_path / f"sync-{len(stopping)}") as store:
            run(design, store, adapters_for(design))
            return rows_of(store, "j")

    return make


def test_batch_run_matches_a_sync_run(server, fresh, tmp_path: Path, sync_rows) -> None:
    design = design_for(tmp_path, server.url, ("j", "batch"))
    with Store(tmp_path / "batch") as store:
        scheduler = run(design, store, adapters_for(design, max_entries=7))
        rows = rows_of(store, "j")
        states = load_cell_states(store, bytes.fromhex(RUN_ID))
        keys = {key for row in iter_rows(store, bytes.fromhex(RUN_ID)) for key in row.cache_keys}
        assert pending_batches(store, bytes.fromhex(RUN_ID)) == []  # every record removed with its answers
    paid = processed(server)
    assert rows == sync_rows()
    assert len(rows) == 8 * 5 and all(state.reason == "n_reached" for state in states.values())
    # fixed n: one wave; identical requests (the "none" needle's) asked once,
    # in batches of at most 7, each entry paid once
    assert scheduler.progress.batch_waves == 1
    assert set(paid) == keys and 20 < len(keys) < 40 and set(paid.values()) == {1}
    assert scheduler.progress.batches_submitted == -(-len(keys) // 7)
    assert scheduler.progress.calls_network == len(keys)


@pytest.mark.parametrize("adapter", ["anthropic", "gemini"])
def test_other_providers_batch_runs_match_their_sync_runs(server, fresh, tmp_path: Path, adapter: str) -> None:
    batch = design_for(tmp_path, server.url, ("j", "batch"), stopping=CI, adapter=adapter)
    sync = design_for(tmp_path, server.url, ("j", "sync"), stopping=CI, adapter=adapter)
    with Store(tmp_path / "batch") as store, Store(tmp_path / "sync") as reference:
        scheduler = run(batch, store, adapters_for(batch))
        run(sync, reference, adapters_for(sync))
        assert rows_of(store, "j") == rows_of(reference, "j") and rows_of(store, "j")
    assert scheduler.progress.batch_waves >= 2 and set(processed(server).values()) == {1}


def test_batch_answers_serve_a_sync_run_and_back(server, fresh, tmp_path: Path) -> None:
    """Batch, then sync over the same store: no call, identical rows; and the reverse."""
    batch_design = design_for(tmp_path, server.url, ("j", "batch"))
    sync_design = design_for(tmp_path, server.url, ("j", "sync"))
    with Store(tmp_path / "s1") as store:
        run(batch_design, store, adapters_for(batch_design))
        first = rows_of(store, "j")
        again = run(sync_design, store, adapters_for(sync_design), run_id="00000000000000aa")
        assert again.progress.calls_network == 0 and again.progress.calls_cached == 40
        assert rows_of_run(store, "00000000000000aa") == first
    fresh()
    with Store(tmp_path / "s2") as store:
        run(sync_design, store, adapters_for(sync_design))
        back = run(batch_design, store, adapters_for(batch_design), run_id="00000000000000bb")
        assert back.progress.batch_waves == 0 and back.progress.calls_network == 0
        assert processed(server) == {}
        assert rows_of_run(store, "00000000000000bb") == first


def rows_of_run(store: Store, run_id: str) -> list[tuple]:
    return [row[1:] for row in outcomes(store, run_id)]


def test_mixed_sync_and_batch_judges_in_one_run(server, fresh, tmp_path: Path) -> None:
    mixed = design_for(tmp_path, server.url, ("s", "sync"), ("b", "batch"))
    all_sync = design_for(tmp_path, server.url, ("s", "sync"), ("b", "sync"))
    with Store(tmp_path / "mixed") as store, Store(tmp_path / "all-sync") as reference:
        scheduler = run(mixed, store, adapters_for(mixed))
        run(all_sync, reference, adapters_for(all_sync))
        assert outcomes(store) == outcomes(reference) and len(outcomes(store)) == 80
    assert scheduler.progress.batch_waves == 1


def test_ci_rule_in_waves_stops_where_the_sync_run_does(server, fresh, tmp_path: Path, sync_rows) -> None:
    design = design_for(tmp_path, server.url, ("j", "batch"), stopping=CI)
    with Store(tmp_path / "ci") as store:
        scheduler = run(design, store, adapters_for(design))
        rows = rows_of(store, "j")
        states = load_cell_states(store, bytes.fromhex(RUN_ID))
        used = {key for row in iter_rows(store, bytes.fromhex(RUN_ID)) for key in row.cache_keys}
    paid = processed(server)
    assert rows == sync_rows(CI)
    assert {state.reason for state in states.values()} >= {"converged"}
    progress = scheduler.progress
    assert progress.batch_waves >= 2  # the minimum first, then sized from each rule
    # each entry paid once; over-submission: documents past a cell's stopping point, paid and dropped
    assert progress.calls_network == len(paid) and set(paid.values()) == {1}
    assert used <= set(paid)
    assert progress.items_dropped > 0 and progress.items_done == len(rows) + progress.items_dropped


def test_failed_entries_are_asked_again_alone(server, fresh, tmp_path: Path, sync_rows) -> None:
    fresh(failure_rate=0.3)  # HTTP 500 entries, drawn afresh on each run of an entry
    design = design_for(tmp_path, server.url, ("j", "batch"))
    with Store(tmp_path / "partial") as store:
        scheduler = run(design, store, adapters_for(design))
        rows = rows_of(store, "j")
    paid = processed(server)
    seed = server.config.seed

    def runs_until_ok(cid: str) -> int:
        runs = 0
        while entry_fails(seed, cid, runs, 0.3):
            runs += 1
        return runs + 1

    assert rows == sync_rows()
    assert paid == {cid: runs_until_ok(cid) for cid in paid}  # each failed entry, and only it, again
    assert max(paid.values()) > 1 and min(paid.values()) == 1
    assert scheduler.progress.batch_waves == max(paid.values())
    assert scheduler.progress.failures_by_kind["server"] == sum(paid.values()) - len(paid)


def test_expired_batch_resubmits_only_the_unprocessed_entries(server, fresh, tmp_path: Path, sync_rows) -> None:
    fresh(delay_s=0.4, expire_after_s=0.2)  # expires with the first half of its entries done
    design = design_for(tmp_path, server.url, ("j", "batch"))
    adapters = adapters_for(design)
    totals = []

    def after(operation, value) -> None:  # type: ignore[no-untyped-def]
        if operation == "status" and value.state != "in_progress":
            totals.append((value.state, value.total))
        if operation == "results":
            server.config = FakeConfig(batch=BatchSim(delay_s=0.05))  # the provider is back to normal (counters kept)

    with Store(tmp_path / "expired") as store:
        scheduler = run(design, store, {"j": Observed(adapters["j"], after)})
        assert rows_of(store, "j") == sync_rows()
    paid = processed(server)
    first_total = totals[0][1]
    assert totals == [("expired", first_total), ("ended", first_total - first_total // 2)]
    assert set(paid.values()) == {1}  # an unprocessed entry is not billed: asked again, paid once
    assert scheduler.progress.failures_by_kind["not_processed"] == first_total - first_total // 2


def test_failed_batch_follows_the_failure_policy(server, fresh, tmp_path: Path, sync_rows) -> None:
    fresh(fail_batches=(0,))
    design = design_for(tmp_path, server.url, ("j", "batch"))
    with Store(tmp_path / "failed") as store:
        scheduler = run(design, store, adapters_for(design))
        assert rows_of(store, "j") == sync_rows()
        assert pending_batches(store, bytes.fromhex(RUN_ID)) == []
    assert scheduler.progress.failures_by_kind["batch_failed"] == 1
    assert set(processed(server).values()) == {1}  # the rejected batch ran nothing


def test_a_judge_whose_batches_keep_failing_ends_the_run(server, fresh, tmp_path: Path) -> None:
    from engine.run.judge_health import RunAborted

    fresh(fail_batches=tuple(range(50)))
    design = design_for(tmp_path, server.url, ("j", "batch"))
    policy = FailurePolicy(consecutive_failures=2, retry_base_s=0.01, retry_cap_s=0.02, probe_base_s=0.01, probe_cap_s=0.02, max_outage_s=0.1)
    with Store(tmp_path / "down") as store:
        with pytest.raises(RunAborted, match="resume"):
            run(design, store, adapters_for(design), failure_policy=policy)
        assert outcomes(store) == []  # nothing became a score


@pytest.mark.parametrize("new_run_id", [None, "00000000000000cc"], ids=["same config", "changed config"])
def test_resume_fetches_recorded_batches_without_paying_twice(server, fresh, tmp_path: Path, sync_rows, new_run_id) -> None:
    fresh(delay_s=1.0)
    design = design_for(tmp_path, server.url, ("j", "batch"), stopping=CI)
    stop = StopRequest()
    submitted: list[str] = []

    def after(operation, value) -> None:  # type: ignore[no-untyped-def]
        if operation == "submit":
            submitted.append(value)
            if len(submitted) == 2:
                stop.set()

    with Store(tmp_path / "resume") as store:
        adapters = adapters_for(design, max_entries=5)
        run(design, store, {"j": Observed(adapters["j"], after)}, stop=stop)
        run_key = bytes.fromhex(RUN_ID)
        recorded = pending_batches(store, run_key)
        # the stop came while the first wave's batches were out: each submitted batch is recorded
        assert [r.batch_id for r in recorded] == submitted
        assert len(CallCache(store)) == 0 and processed(server) == {}
        # the next run polls and fetches them (the provider still has them), then goes on
        # (a changed config is another run: it collects the batches the first one paid for all the same)
        scheduler = run(design, store, adapters_for(design, max_entries=5), run_id=new_run_id or RUN_ID)
        assert scheduler.progress.batches_resumed == 2
        assert pending_batches(store, run_key) == []
        paid = processed(server)
        assert set(paid.values()) == {1} and {k.hex() for r in recorded for k in r.keys} <= set(paid)  # no entry paid twice
        assert rows_of_run(store, new_run_id or RUN_ID) == sync_rows(CI)


def test_a_recorded_batch_the_provider_does_not_know_is_dropped(server, fresh, tmp_path: Path, sync_rows) -> None:
    from engine.run.batch.store import new_record, record_write

    design = design_for(tmp_path, server.url, ("j", "batch"))
    with Store(tmp_path / "unknown") as store:
        spec = design.judges["j"]
        stale = new_record("batch_gone", "j", spec.adapter, spec.model, [b"\x01" * 32], 0)
        store.put_batch_raw([record_write(bytes.fromhex(RUN_ID), stale)])
        scheduler = run(design, store, adapters_for(design))
        assert pending_batches(store, bytes.fromhex(RUN_ID)) == []
        assert rows_of(store, "j") == sync_rows()
    assert scheduler.progress.batches_resumed == 1 and scheduler.progress.failures_by_kind["batch_failed"] == 1


def test_an_entry_the_provider_rejects_for_good_stops_the_run(server, fresh, tmp_path: Path) -> None:
    from engine.run.judge_health import RunAborted

    design = design_for(tmp_path, server.url, ("missing-model", "batch"))  # model "sim-missing-model"
    server.configure(missing_models=("sim-missing-*",))
    with Store(tmp_path / "rejected") as store:
        with pytest.raises(RunAborted, match="missing-model.*not_found"):
            run(design, store, adapters_for(design))
        assert outcomes(store) == [] and pending_batches(store, bytes.fromhex(RUN_ID)) == []


def test_a_submission_without_an_answer_stops_the_run_rather_than_pay_twice(server, fresh, tmp_path: Path) -> None:
    from engine.run.judge_health import RunAborted

    # the connection drops on the batch creation (and on the transport's one replay): it may exist
    fresh(faults=(BatchFault(kind="reset", operation="create", schedule=(0, 1)),))
    design = design_for(tmp_path, server.url, ("j", "batch"))
    with Store(tmp_path / "dropped") as store:
        with pytest.raises(RunAborted, match="may have been created.*batch list.*resume"):
            run(design, store, adapters_for(design))
        assert outcomes(store) == []
    assert server.stats()["batch"]["by_operation"]["create"] == 2  # not submitted a third time


def test_transient_batch_api_failures_are_retried_in_the_next_wave(server, fresh, tmp_path: Path, sync_rows) -> None:
    # every create answers 500 for the adapter's attempts (max_attempts = 2), then the provider is back
    fresh(faults=(BatchFault(kind="server_error", operation="create", schedule=(0, 1)),))
    design = design_for(tmp_path, server.url, ("j", "batch"))
    with Store(tmp_path / "flaky") as store:
        scheduler = run(design, store, adapters_for(design))
        assert rows_of(store, "j") == sync_rows()
    assert scheduler.progress.failures_by_kind["server"] == 1 and scheduler.progress.batch_waves == 2
    assert set(processed(server).values()) == {1}
