"""Gemini batch mode adapter (adapters/gemini_batch.py) over real HTTP to
the fake server's batch endpoints (simulation/batch_gemini.py)."""

from __future__ import annotations

import msgspec
import pytest
from batch_fixtures import PRICES, batch_spec, entries, run_batch, same_answer, sync_results

from engine.contracts import BatchApiError
from adapters.gemini_batch import GRPC_HTTP, GeminiBatchAdapter
from engine.contracts import BatchAdapter
from engine.registry import capabilities, create_batch_adapter
from simulation.batch_gemini import HTTP_GRPC
from simulation.fake_config import BatchFault, BatchSim, FakeConfig

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("keys")]
MODEL = "sim-gemini"


def spec(server, model=MODEL, **overrides):
    return batch_spec("gemini", server, model, **overrides)


async def run(server, batch_entries, **overrides):
    return await run_batch(spec(server, **overrides), batch_entries)


def test_registry_gives_the_batch_adapter_and_the_grpc_codes_round_trip(server):
    judge = spec(server)
    assert capabilities(judge).batch_api and isinstance(adapter := create_batch_adapter(judge), GeminiBatchAdapter)
    assert isinstance(adapter, BatchAdapter) and adapter.capabilities.batch_api and "test-key" not in repr(adapter) + repr(adapter._control)
    assert all(GRPC_HTTP[code] == status for status, code in HTTP_GRPC.items())


async def test_round_trip_equals_the_synchronous_answers(server):
    server.set_config(FakeConfig())
    batch = entries(MODEL, 4, adapter="gemini")
    sync = await sync_results(spec(server), batch)
    server.reset()
    batch_id, status, results = await run(server, batch)
    assert batch_id.startswith("batches/") and (status.state, status.total, status.succeeded, status.errored) == ("ended", 4, 4, 0)
    for entry, answer in zip(batch, sync):
        same_answer(results[entry.custom_id], answer, PRICES.batch_discount)
    assert server.stats()["batch"]["processed"] == {e.custom_id: 1 for e in batch}


async def test_failed_entries_carry_the_status_and_its_classification(server):
    server.set_config(FakeConfig(batch=BatchSim(failure_rate=0.5, failure_status=503)))
    _, status, results = await run(server, entries(MODEL, 12, adapter="gemini"))
    failed = [r for r in results.values() if r.status == "error"]
    assert len(results) == 12 and 0 < len(failed) < 12 and status.errored == len(failed)
    assert {r.error_kind for r in failed} == {"server"}
    assert all('"code":14' in r.text and "injected" in r.text for r in failed)  # google.rpc.Status UNAVAILABLE, raw


async def test_expired_and_failed_batches(server):
    server.set_config(FakeConfig(batch=BatchSim(delay_s=8.0, expire_after_s=2.0, fail_batches=(1,))))
    batch = entries(MODEL, 8, adapter="gemini")
    adapter = create_batch_adapter(spec(server))
    try:
        expiring = await adapter.submit(batch)
        server.batches.jobs[expiring].created -= 3.0
        expired = await adapter.status(expiring)
        kept = await adapter.results(expiring)
        rejected = await adapter.submit(entries(MODEL, 2, adapter="gemini"))
        failed = await adapter.status(rejected)
        none = await adapter.results(rejected)
    finally:
        await adapter.aclose()
    assert expired.state == "expired" and [o.custom_id for o in kept] == [e.custom_id for e in batch[:2]]
    assert failed.state == "failed" and "fail_batches" in failed.detail and none == []


async def test_cancel(server):
    server.set_config(FakeConfig(batch=BatchSim(delay_s=30.0)))
    adapter = create_batch_adapter(spec(server))
    try:
        batch_id = await adapter.submit(entries(MODEL, 2, adapter="gemini"))
        await adapter.cancel(batch_id)
        status = await adapter.status(batch_id)
        results = await adapter.results(batch_id)
    finally:
        await adapter.aclose()
    assert status.state == "cancelled" and results == [] and server.stats()["batch"]["entries_processed"] == 0


async def test_retry_info_429_is_retried_and_a_bad_key_is_auth(server, monkeypatch):
    faults = (BatchFault(kind="rate_limit", operation="create", schedule=(0,), retry_after_s=0.05),
              BatchFault(kind="server_error", operation="status", schedule=(0,)))
    server.set_config(FakeConfig(batch=BatchSim(faults=faults)))
    _, status, results = await run(server, entries(MODEL, 2, adapter="gemini"))
    assert status.state == "ended" and len(results) == 2 and server.stats()["batch"]["by_operation"]["create"] == 2
    server.set_config(FakeConfig(valid_keys=("right",)))
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-wrong-789")
    with pytest.raises(BatchApiError) as caught:
        await run(server, entries(MODEL, 1, adapter="gemini"))
    assert caught.value.kind == "auth" and "API_KEY_INVALID" in str(caught.value) and "AIza-wrong-789" not in str(caught.value)


async def test_missing_model_and_oversized_batches_are_refused(server):
    server.set_config(FakeConfig())
    with pytest.raises(BatchApiError, match="HTTP 404") as caught:
        await run(server, entries("missing-gem", 1, adapter="gemini"), model="missing-gem")
    assert caught.value.kind == "not_found"
    server.reset()
    adapter = create_batch_adapter(spec(server))
    big = entries(MODEL, 1, adapter="gemini")[0]
    huge = msgspec.structs.replace(big.request, messages=(big.request.messages[0].__class__("user", "x" * (21 * 1024 * 1024)),))
    try:
        with pytest.raises(BatchApiError, match="20,971,520-byte limit") as caught:
            await adapter.submit([msgspec.structs.replace(big, request=huge)])
    finally:
        await adapter.aclose()
    assert caught.value.kind == "too_large" and server.stats()["batch"]["by_operation"] == {}
