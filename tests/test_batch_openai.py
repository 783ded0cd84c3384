"""OpenAI's Batch API adapter (adapters/openai_batch.py) over real HTTP to
the fake server's batch endpoints (simulation/batch_openai.py)."""

from __future__ import annotations

import anyio
import msgspec
import pytest
from batch_fixtures import PRICES, batch_spec, entries, run_batch, same_answer, sync_results

from engine.contracts import BatchApiError
from adapters.openai_batch import OpenAIBatchAdapter
from engine.contracts import BatchAdapter, BatchEntry
from engine.registry import capabilities, create_batch_adapter
from simulation.fake_config import BatchFault, BatchSim, FakeConfig

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("keys")]
MODEL = "sim-batch"


def untimed(outcomes):
    return [(o.custom_id, msgspec.structs.replace(o.result, started_at=0.0, finished_at=0.0)) for o in outcomes]


def spec(server, model=MODEL, **overrides):
    return batch_spec("openai", server, model, **overrides)


async def run(server, batch_entries, **overrides):
    return await run_batch(spec(server, **overrides), batch_entries)


def test_registry_gives_the_batch_adapter_and_declares_the_batch_api(server):
    judge = spec(server)
    assert capabilities(judge).batch_api and isinstance(adapter := create_batch_adapter(judge), OpenAIBatchAdapter)
    assert isinstance(adapter, BatchAdapter) and adapter.capabilities.batch_api and "test-key" not in repr(adapter) + repr(adapter._control)


async def test_round_trip_submit_status_results(server):
    server.set_config(FakeConfig())
    batch = entries(MODEL, 5, adapter="openai")
    batch_id, status, results = await run(server, batch)
    assert batch_id.startswith("batch_") and (status.state, status.total, status.succeeded, status.errored) == ("ended", 5, 5, 0)
    assert set(results) == {e.custom_id for e in batch}
    assert all(r.status == "ok" and r.text.startswith("Score: ") and r.usage.prompt_tokens > 0 for r in results.values())
    stats = server.stats()["batch"]
    assert stats["processed"] == {e.custom_id: 1 for e in batch} and stats["by_operation"]["upload"] == 1


async def test_batch_answer_equals_the_synchronous_answer_at_the_batch_price(server):
    server.set_config(FakeConfig())
    batch = entries(MODEL, 4, adapter="openai")
    sync = await sync_results(spec(server), batch)
    server.reset()  # the simulated prefix cache starts empty again, as it did for the synchronous calls
    _, _, results = await run(server, batch)
    for entry, answer in zip(batch, sync):
        same_answer(results[entry.custom_id], answer, PRICES.batch_discount)


async def test_processing_delay_keeps_the_batch_in_progress_then_ends_it(server):
    server.set_config(FakeConfig(batch=BatchSim(delay_s=0.4)))
    batch = entries(MODEL, 3, adapter="openai")
    adapter = create_batch_adapter(spec(server))
    try:
        batch_id = await adapter.submit(batch)
        first = await adapter.status(batch_id)
        early = await adapter.results(batch_id)
        await anyio.sleep(0.45)
        last = await adapter.status(batch_id)
        done = await adapter.results(batch_id)
        again = await adapter.results(batch_id)
    finally:
        await adapter.aclose()
    assert first.state == "in_progress" and early == []
    assert last.state == "ended" and len(done) == 3 and untimed(done) == untimed(again)
    assert server.stats()["batch"]["processed"] == {e.custom_id: 1 for e in batch}  # fetched twice, run once


async def test_partial_failure_gives_classified_failures_with_the_raw_text(server):
    server.set_config(FakeConfig(batch=BatchSim(failure_rate=0.5, failure_status=500)))
    batch = entries(MODEL, 12, adapter="openai")
    _, status, results = await run(server, batch)
    failed = {cid: r for cid, r in results.items() if r.status == "error"}
    assert len(results) == 12 and 0 < len(failed) < 12 and status.errored == len(failed)
    for result in failed.values():
        assert result.error_kind == "server" and result.score is None
        assert "injected" in result.text and '"server_error"' in result.text  # the provider's error body, raw
    server.configure(batch=BatchSim(failure_rate=0.5, failure_status=400))
    _, _, results = await run(server, entries(MODEL, 12, adapter="openai"))
    kinds = {r.error_kind for r in results.values() if r.status == "error"}
    assert kinds == {"bad_request"}


async def test_expired_batch_returns_only_the_entries_it_ran(server):
    server.set_config(FakeConfig(batch=BatchSim(delay_s=10.0, expire_after_s=5.0)))
    batch = entries(MODEL, 6, adapter="openai")
    adapter = create_batch_adapter(spec(server))
    try:
        batch_id = await adapter.submit(batch)
        server.batches.jobs[batch_id].created -= 6.0  # five seconds of the 24 h window, without waiting
        status = await adapter.status(batch_id)
        results = await adapter.results(batch_id)
    finally:
        await adapter.aclose()
    assert status.state == "expired"
    assert [o.custom_id for o in results] == [e.custom_id for e in batch[:3]]  # half the delay: half the entries
    assert all(o.result.status == "ok" for o in results)


async def test_a_batch_rejected_whole_is_failed_with_the_providers_detail(server):
    server.set_config(FakeConfig(batch=BatchSim(fail_batches=(0,))))
    _, status, results = await run(server, entries(MODEL, 2, adapter="openai"))
    assert status.state == "failed" and "fail_batches" in status.detail and '"data"' in status.detail
    assert results == {}


async def test_cancel_ends_the_batch_without_running_it(server):
    server.set_config(FakeConfig(batch=BatchSim(delay_s=30.0)))
    adapter = create_batch_adapter(spec(server))
    try:
        batch_id = await adapter.submit(entries(MODEL, 2, adapter="openai"))
        await adapter.cancel(batch_id)
        status = await adapter.status(batch_id)
        results = await adapter.results(batch_id)
    finally:
        await adapter.aclose()
    assert status.state == "cancelled" and results == []
    assert server.stats()["batch"]["entries_processed"] == 0


async def test_transient_failures_of_upload_and_poll_are_retried(server):
    faults = (BatchFault(kind="server_error", operation="upload", schedule=(0,)),
              BatchFault(kind="rate_limit", operation="status", schedule=(0, 1)),
              BatchFault(kind="http_error", status=503, operation="results", schedule=(0,)))
    server.set_config(FakeConfig(batch=BatchSim(faults=faults)))
    _, status, results = await run(server, entries(MODEL, 2, adapter="openai"))
    assert status.state == "ended" and len(results) == 2
    ops = server.stats()["batch"]["by_operation"]
    assert ops["upload"] == 2 and ops["status"] >= 3 and ops["results"] == 2


async def test_transient_failures_past_max_attempts_raise_a_retryable_error(server):
    server.set_config(FakeConfig(batch=BatchSim(faults=(BatchFault(kind="server_error", operation="create", rate=1.0),))))
    with pytest.raises(BatchApiError, match=r"batch create gave up after 4 attempt\(s\): server: HTTP 500") as caught:
        await run(server, entries(MODEL, 1, adapter="openai"))
    assert caught.value.retryable and caught.value.kind == "server"


async def test_a_dropped_create_is_not_resubmitted_blindly_but_a_dropped_poll_is_retried(server):
    faults = (BatchFault(kind="reset", operation="create", schedule=(0, 1)),  # the request and the transport's one replay
              BatchFault(kind="reset", operation="status", schedule=(0, 1)))
    server.set_config(FakeConfig(batch=BatchSim(faults=faults)))
    with pytest.raises(BatchApiError, match="may have been created") as caught:
        await run(server, entries(MODEL, 1, adapter="openai"))
    assert caught.value.kind == "connection" and caught.value.retryable
    assert server.stats()["batch"]["by_operation"]["create"] == 2
    _, status, results = await run(server, entries(MODEL, 1, adapter="openai"))
    assert status.state == "ended" and len(results) == 1 and server.stats()["batch"]["by_operation"]["status"] >= 3


async def test_a_wrong_key_is_classified_auth_and_not_retried(server, monkeypatch):
    server.set_config(FakeConfig(valid_keys=("right-key",)))
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key-123")
    with pytest.raises(BatchApiError) as caught:
        await run(server, entries(MODEL, 1, adapter="openai"))
    assert caught.value.kind == "auth" and not caught.value.retryable
    assert "HTTP 401" in str(caught.value) and "wrong-key-123" not in str(caught.value)
    assert server.stats()["batch"]["by_operation"] == {"upload": 1}


async def test_custom_ids_are_checked_before_anything_is_sent(server):
    server.set_config(FakeConfig())
    good = entries(MODEL, 2, adapter="openai")
    adapter = create_batch_adapter(spec(server))
    bad = {
        "appears twice": [good[0], good[0]],
        "must be 1-64 characters": [BatchEntry(custom_id="x" * 65, request=good[0].request)],
        "must be 1-64": [BatchEntry(custom_id="a/b", request=good[0].request)],
        "no entries": [],
    }
    try:
        for message, batch in bad.items():
            with pytest.raises(BatchApiError, match=message):
                await adapter.submit(batch)
        adapter.max_entries = 1
        with pytest.raises(BatchApiError, match="at most 1 per batch") as caught:
            await adapter.submit(good)
    finally:
        await adapter.aclose()
    assert caught.value.kind == "too_large" and server.stats()["batch"]["by_operation"] == {}


async def test_guided_regex_is_refused_like_the_synchronous_adapter(server):
    server.set_config(FakeConfig())
    entry = entries(MODEL, 1, adapter="openai")[0]
    guided = msgspec.structs.replace(entry.request, decoding=msgspec.structs.replace(entry.request.decoding, guided_regex="[0-9]+"))
    adapter = create_batch_adapter(spec(server))
    try:
        with pytest.raises(BatchApiError, match="regex-guided") as caught:
            await adapter.submit([BatchEntry(custom_id=entry.custom_id, request=guided)])
    finally:
        await adapter.aclose()
    assert caught.value.kind == "unsupported"


async def test_missing_model_is_a_per_entry_not_found_failure(server):
    server.set_config(FakeConfig())
    batch = entries("missing-model", 2, adapter="openai")
    _, status, results = await run(server, batch, model="missing-model")
    assert status.state == "ended" and {r.error_kind for r in results.values()} == {"not_found"}
    assert all("model_not_found" in r.text for r in results.values())
