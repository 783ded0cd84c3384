"""Anthropic's Message Batches adapter (adapters/anthropic_batch.py) over
real HTTP to the fake server's batch endpoints (simulation/batch_anthropic.py)."""

from __future__ import annotations

import msgspec
import pytest
from batch_fixtures import PRICES, batch_spec, entries, run_batch, same_answer, sync_results

from adapters.anthropic import create
from adapters.anthropic_batch import AnthropicBatchAdapter
from engine.contracts import BatchApiError
from engine.contracts import BatchAdapter, BatchEntry
from engine.registry import capabilities, create_batch_adapter
from simulation.fake_config import BatchFault, BatchSim, FakeConfig

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("keys")]
MODEL = "sim-claude"


def spec(server, model=MODEL, **overrides):
    return batch_spec("anthropic", server, model, **overrides)


async def run(server, batch_entries, **overrides):
    return await run_batch(spec(server, **overrides), batch_entries)


def test_registry_gives_the_batch_adapter_and_declares_the_batch_api(server):
    judge = spec(server)
    assert capabilities(judge).batch_api and isinstance(adapter := create_batch_adapter(judge), AnthropicBatchAdapter)
    assert isinstance(adapter, BatchAdapter) and adapter.capabilities.batch_api and "test-key" not in repr(adapter) + repr(adapter._control)


async def test_round_trip_with_the_synchronous_bodies_and_answers(server):
    server.set_config(FakeConfig())
    batch = entries(MODEL, 4, adapter="anthropic")
    sync = await sync_results(spec(server), batch)
    server.reset()
    batch_id, status, results = await run(server, batch)
    assert batch_id.startswith("msgbatch_") and (status.state, status.total, status.succeeded, status.errored) == ("ended", 4, 4, 0)
    for entry, answer in zip(batch, sync):
        same_answer(results[entry.custom_id], answer, PRICES.batch_discount)
    assert results[batch[1].custom_id].usage.cached_tokens > 0  # the cache_control prefix went through the batch too
    assert server.stats()["batch"]["processed"] == {e.custom_id: 1 for e in batch}


async def test_errored_entries_are_classified_like_synchronous_errors(server):
    server.set_config(FakeConfig(batch=BatchSim(failure_rate=0.5, failure_status=529)))
    batch = entries(MODEL, 12, adapter="anthropic")
    _, status, results = await run(server, batch)
    failed = [r for r in results.values() if r.status == "error"]
    assert len(results) == 12 and 0 < len(failed) < 12 and status.errored == len(failed)
    assert {r.error_kind for r in failed} == {"overloaded"} and all('"overloaded_error"' in r.text for r in failed)
    missing = entries("missing-claude", 1, adapter="anthropic")
    server.configure(batch=BatchSim())
    _, _, results = await run(server, missing, model="missing-claude")
    assert [(r.status, r.error_kind) for r in results.values()] == [("error", "not_found")]


async def test_expired_and_cancelled_entries_are_left_out(server):
    server.set_config(FakeConfig(batch=BatchSim(delay_s=10.0, expire_after_s=5.0)))
    batch = entries(MODEL, 4, adapter="anthropic")
    adapter = create_batch_adapter(spec(server))
    try:
        expiring = await adapter.submit(batch)
        server.batches.jobs[expiring].created -= 6.0
        expired = await adapter.status(expiring)
        kept = await adapter.results(expiring)
        cancelled_id = await adapter.submit(entries(MODEL, 2, adapter="anthropic"))
        await adapter.cancel(cancelled_id)
        cancelled = await adapter.status(cancelled_id)
        none = await adapter.results(cancelled_id)
    finally:
        await adapter.aclose()
    assert (expired.state, expired.total, expired.succeeded) == ("expired", 4, 2)
    assert [o.custom_id for o in kept] == [e.custom_id for e in batch[:2]]
    assert cancelled.state == "cancelled" and none == []


async def test_a_batch_refused_at_creation_raises_bad_request(server):
    server.set_config(FakeConfig(batch=BatchSim(fail_batches=(0,))))
    with pytest.raises(BatchApiError, match="HTTP 400.*fail_batches") as caught:
        await run(server, entries(MODEL, 1, adapter="anthropic"))
    assert caught.value.kind == "bad_request" and not caught.value.retryable


async def test_transient_poll_failures_are_retried_and_401_is_not(server, monkeypatch):
    faults = (BatchFault(kind="http_error", status=529, operation="status", schedule=(0,)),
              BatchFault(kind="rate_limit", operation="results", schedule=(0,)))
    server.set_config(FakeConfig(batch=BatchSim(faults=faults)))
    _, status, results = await run(server, entries(MODEL, 2, adapter="anthropic"))
    assert status.state == "ended" and len(results) == 2
    assert server.stats()["batch"]["by_operation"]["results"] == 2
    server.set_config(FakeConfig(valid_keys=("right",)))
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-wrong-456")
    with pytest.raises(BatchApiError) as caught:
        await run(server, entries(MODEL, 1, adapter="anthropic"))
    assert caught.value.kind == "auth" and "authentication_error" in str(caught.value) and "sk-wrong-456" not in str(caught.value)
    assert server.stats()["batch"]["by_operation"] == {"create": 1}


async def test_results_url_on_another_host_is_refused(server):
    from adapters.anthropic_batch import create as create_adapter

    adapter = create_adapter(spec(server))
    with pytest.raises(BatchApiError, match="not sending the key"):
        adapter._same_origin("https://elsewhere.example/v1/messages/batches/x/results")
    assert adapter._same_origin(f"{server.url}/v1/messages/batches/x/results").startswith(server.url)


async def test_the_fake_refuses_custom_ids_anthropic_refuses(server):
    """The adapter checks custom_ids first; the fake refuses them as the API does, for any client."""
    import aiohttp

    server.set_config(FakeConfig())
    params = msgspec.json.decode(create(spec(server))._dialect.url_and_body(entries(MODEL, 1, adapter="anthropic")[0].request)[1])
    headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
    async with aiohttp.ClientSession() as s:
        for custom_id in ("x" * 65, "a.b"):
            async with s.post(f"{server.url}/v1/messages/batches", json={"requests": [{"custom_id": custom_id, "params": params}]},
                              headers=headers) as r:
                assert r.status == 400 and "custom_id" in (await r.json())["error"]["message"]
    adapter = create_batch_adapter(spec(server))
    try:
        with pytest.raises(BatchApiError, match="1-64 characters"):
            await adapter.submit([BatchEntry(custom_id="x" * 65, request=entries(MODEL, 1, adapter="anthropic")[0].request)])
    finally:
        await adapter.aclose()
