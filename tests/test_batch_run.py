"""Batch judges (`mode = "batch"`) through the real scheduler, real LMDB and
real HTTP to the fake provider server: waves, interchangeable answers with
synchronous calls, resubmission of the missing entries only, resume."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from engine.batch_store import pending_batches
from engine.cache import CallCache
from engine.config import parse_config
from engine.registry import create_adapter
from engine.results import iter_rows, load_cell_states
from engine.scheduler import FailurePolicy, StopRequest
from engine.store import Store
from tests.batch_double import LoopbackBatch
from tests.scheduler_harness import RUN_ID, design_toml, make_design, outcomes, run_scheduler

JUDGE = """
[[judges]]
name = "{name}"
adapter = "openai-compatible"
model = "local-{name}"
base_url = "{url}/v1"
mode = "{mode}"
batch_poll_s = 0.02
concurrency = 4
max_attempts = 1
timeout_s = 5.0
prompts = ["bands"]
"""
FIXED = 'kind = "fixed"\nn = 5'
CI = 'kind = "ci"\nepsilon = 15.0\nalpha = 0.2\nmin_docs = 3\nmax_docs = 40'
FAST = FailurePolicy(retry_base_s=0.01, retry_cap_s=0.02, probe_base_s=0.01, probe_cap_s=0.02, max_outage_s=2.0)


def design_for(tmp_path: Path, url: str, *judges: tuple[str, str], stopping: str = FIXED):  # type: ignore[no-untyped-def]
    text = design_toml(seed=3, stopping=stopping, window=2, needles='["none", "neg"]', positions="[[0, 0], [1, 2]]")
    for name, mode in judges:
        text += JUDGE.format(name=name, url=url, mode=mode)
    return make_design(parse_config(text, base_dir=tmp_path))


def adapters_for(design, **batch_options):  # type: ignore[no-untyped-def]
    made = {}
    for name, judge in design.judges.items():
        sync = create_adapter(judge.spec())
        made[name] = LoopbackBatch(sync, **batch_options) if judge.mode == "batch" else sync
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


@pytest.fixture
def sync_rows(server, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Rows of a synchronous run of one judge, the reference."""

    def make(stopping: str = FIXED) -> list[tuple]:
        design = design_for(tmp_path, server.url, ("j", "sync"), stopping=stopping)
        with Store(tmp_path / f"sync-{len(stopping)}") as store:
            run(design, store, adapters_for(design))
            return rows_of(store, "j")

    return make


def test_batch_run_matches_a_sync_run(server, tmp_path: Path, sync_rows) -> None:
    design = design_for(tmp_path, server.url, ("j", "batch"))
    batch = LoopbackBatch(create_adapter(design.judges["j"].spec()), max_entries=7)
    with Store(tmp_path / "batch") as store:
        scheduler = run(design, store, {"j": batch})
        rows = rows_of(store, "j")
        states = load_cell_states(store, bytes.fromhex(RUN_ID))
        assert pending_batches(store, bytes.fromhex(RUN_ID)) == []  # every record removed with its answers
        keys = {key for row in iter_rows(store, bytes.fromhex(RUN_ID)) for key in row.cache_keys}
    assert rows == sync_rows()
    assert len(rows) == 8 * 5 and all(state.reason == "n_reached" for state in states.values())
    # fixed n: one wave, identical requests (the "none" needle's) asked once,
    # in batches of at most 7, each entry paid once
    assert scheduler.progress.batch_waves == 1
    assert set(batch.submitted) == keys and 20 < len(keys) < 40
    assert scheduler.progress.batches_submitted == -(-len(keys) // 7)
    assert set(batch.submitted.values()) == {1}
    assert scheduler.progress.calls_network == len(keys)


def test_batch_answers_serve_a_sync_run_and_back(server, tmp_path: Path) -> None:
    """Batch, then sync over the same store: no call, identical rows; and the reverse."""
    batch_design = design_for(tmp_path, server.url, ("j", "batch"))
    sync_design = design_for(tmp_path, server.url, ("j", "sync"))
    with Store(tmp_path / "s1") as store:
        run(batch_design, store, adapters_for(batch_design))
        first = rows_of(store, "j")
        again = run(sync_design, store, adapters_for(sync_design), run_id="00000000000000aa")
        assert again.progress.calls_network == 0 and again.progress.calls_cached == 40
        assert rows_of_run(store, "00000000000000aa") == first
    with Store(tmp_path / "s2") as store:
        run(sync_design, store, adapters_for(sync_design))
        batch = LoopbackBatch(create_adapter(batch_design.judges["j"].spec()))
        back = run(batch_design, store, {"j": batch}, run_id="00000000000000bb")
        assert back.progress.batch_waves == 0 and not batch.submitted
        assert rows_of_run(store, "00000000000000bb") == first


def rows_of_run(store: Store, run_id: str) -> list[tuple]:
    return [row[1:] for row in outcomes(store, run_id)]


def test_mixed_sync_and_batch_judges_in_one_run(server, tmp_path: Path) -> None:
    mixed = design_for(tmp_path, server.url, ("s", "sync"), ("b", "batch"))
    all_sync = design_for(tmp_path, server.url, ("s", "sync"), ("b", "sync"))
    with Store(tmp_path / "mixed") as store, Store(tmp_path / "all-sync") as reference:
        scheduler = run(mixed, store, adapters_for(mixed))
        run(all_sync, reference, adapters_for(all_sync))
        assert outcomes(store) == outcomes(reference) and len(outcomes(store)) == 80
    assert scheduler.progress.batch_waves == 1


def test_ci_rule_in_waves_stops_where_the_sync_run_does(server, tmp_path: Path, sync_rows) -> None:
    design = design_for(tmp_path, server.url, ("j", "batch"), stopping=CI)
    batch = LoopbackBatch(create_adapter(design.judges["j"].spec()))
    with Store(tmp_path / "ci") as store:
        scheduler = run(design, store, {"j": batch})
        rows = rows_of(store, "j")
        states = load_cell_states(store, bytes.fromhex(RUN_ID))
        used = {key for row in iter_rows(store, bytes.fromhex(RUN_ID)) for key in row.cache_keys}
    assert rows == sync_rows(CI)
    assert {state.reason for state in states.values()} >= {"converged"}
    progress = scheduler.progress
    assert progress.batch_waves >= 2  # the minimum first, then sized from each rule
    # each entry paid once; over-submission: documents past a cell's stopping point, paid and dropped
    assert progress.calls_network == len(batch.submitted) and set(batch.submitted.values()) == {1}
    assert used <= set(batch.submitted)
    assert progress.items_dropped > 0 and progress.items_done == len(rows) + progress.items_dropped


def test_partial_failure_and_expiry_resubmit_only_the_missing(server, tmp_path: Path, sync_rows) -> None:
    design = design_for(tmp_path, server.url, ("j", "batch"))
    # entries whose key starts with 0-3 expire on their first submission; 4-5 fail transiently once
    batch = LoopbackBatch(
        create_adapter(design.judges["j"].spec()),
        max_entries=16,
        expire=lambda cid, attempt: attempt == 1 and cid[0] in "0123",
        fail_entry=lambda cid, attempt: attempt == 1 and cid[0] in "45",
    )
    with Store(tmp_path / "partial") as store:
        scheduler = run(design, store, {"j": batch})
        rows = rows_of(store, "j")
    assert rows == sync_rows()
    again = {cid for cid, times in batch.submitted.items() if times > 1}
    assert again == {cid for cid in batch.submitted if cid[0] in "012345"} and again
    assert set(batch.submitted.values()) == {1, 2}
    assert scheduler.progress.batch_waves == 2
    assert scheduler.progress.failures_by_kind["server"] == sum(cid[0] in "45" for cid in batch.submitted)
    assert scheduler.progress.failures_by_kind["not_processed"] == sum(cid[0] in "0123" for cid in batch.submitted)


def test_failed_batch_follows_the_failure_policy(server, tmp_path: Path, sync_rows) -> None:
    design = design_for(tmp_path, server.url, ("j", "batch"))
    batch = LoopbackBatch(create_adapter(design.judges["j"].spec()), max_entries=40, fail_batch=lambda index: index == 0)
    with Store(tmp_path / "failed") as store:
        scheduler = run(design, store, {"j": batch})
        assert rows_of(store, "j") == sync_rows()
        assert pending_batches(store, bytes.fromhex(RUN_ID)) == []
    assert scheduler.progress.failures_by_kind["batch_failed"] == 1
    assert set(batch.submitted.values()) == {2}  # the failed batch was not processed: all asked again


def test_a_judge_whose_batches_keep_failing_ends_the_run(server, tmp_path: Path) -> None:
    from engine.judge_health import RunAborted

    design = design_for(tmp_path, server.url, ("j", "batch"))
    batch = LoopbackBatch(create_adapter(design.judges["j"].spec()), fail_batch=lambda index: True)
    policy = FailurePolicy(consecutive_failures=2, retry_base_s=0.01, retry_cap_s=0.02, probe_base_s=0.01, probe_cap_s=0.02, max_outage_s=0.1)
    with Store(tmp_path / "down") as store:
        with pytest.raises(RunAborted, match="resume"):
            run(design, store, {"j": batch}, failure_policy=policy)
        assert outcomes(store) == []  # nothing became a score


def test_resume_fetches_recorded_batches_without_paying_twice(server, tmp_path: Path, sync_rows) -> None:
    design = design_for(tmp_path, server.url, ("j", "batch"), stopping=CI)
    stop = StopRequest()
    first = LoopbackBatch(create_adapter(design.judges["j"].spec()), max_entries=5, delay_s=3.0, on_submit=lambda batch_id: stop.set() if batch_id == "batch_1" else None)
    with Store(tmp_path / "resume") as store:
        run(design, store, {"j": first}, stop=stop)
        run_key = bytes.fromhex(RUN_ID)
        recorded = pending_batches(store, run_key)
        # the stop came while the first wave's batches were out: each submitted batch is recorded
        assert [r.batch_id for r in recorded] == ["batch_0", "batch_1"]
        assert sorted(k.hex() for r in recorded for k in r.keys) == sorted(first.submitted)
        assert not first.fetched and len(CallCache(store)) == 0
        # the next run polls and fetches them (the provider still has them), then goes on
        second = LoopbackBatch(create_adapter(design.judges["j"].spec()), max_entries=5)
        second.batches = first.batches
        second.submitted = first.submitted
        scheduler = run(design, store, {"j": second})
        assert scheduler.progress.batches_resumed == 2
        assert pending_batches(store, run_key) == []
        assert set(second.submitted.values()) == {1}  # no entry paid twice
        assert rows_of(store, "j") == sync_rows(CI)
