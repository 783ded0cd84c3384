"""Helpers shared by the batch adapter tests (tests/test_batch_*.py): batch
entries keyed like the engine keys them, and polling a batch to its end."""

from __future__ import annotations

import time

import anyio

from engine.contracts import BatchEntry, BatchStatus, CallResult, JudgeSpec, Prices, request_key
import msgspec

from engine.registry import create_adapter, create_batch_adapter
from http_fixtures import judge_request, spec_for

PRICES = Prices(input=2.0, output=8.0, batch_discount=0.5)


def entries(model: str, n: int, *, adapter: str) -> list[BatchEntry]:
    """`n` distinct judge calls, custom_id = the hex request key (as the engine submits them)."""
    requests = [judge_request(model, adapter=adapter) for _ in range(n)]
    return [BatchEntry(custom_id=request_key(r).hex(), request=r) for r in requests]


async def until_done(adapter, batch_id: str, *, timeout_s: float = 10.0) -> BatchStatus:
    deadline = time.monotonic() + timeout_s
    while True:
        status = await adapter.status(batch_id)
        if status.state != "in_progress":
            return status
        assert time.monotonic() < deadline, f"batch {batch_id} still in progress after {timeout_s}s"
        await anyio.sleep(0.05)


def same_answer(batch: CallResult, sync: CallResult, discount: float) -> None:
    """A batch answer equals the synchronous one (cost at the batch rate)."""
    assert (batch.status, batch.text, batch.usage, batch.model_version, batch.finish_reason, batch.error_kind) == (
        sync.status, sync.text, sync.usage, sync.model_version, sync.finish_reason, sync.error_kind)
    assert sync.cost_usd > 0 and abs(batch.cost_usd - sync.cost_usd * discount) < 1e-12


def batch_spec(adapter: str, server, model: str, **overrides) -> JudgeSpec:
    """A batch judge of `adapter` pointed at the fake server, priced at PRICES."""
    return spec_for(adapter, server.url, model, **{"prices": PRICES, "mode": "batch", **overrides})


async def run_batch(judge: JudgeSpec, batch: list[BatchEntry]) -> tuple[str, BatchStatus, dict[str, CallResult]]:
    """Submit, poll to the end, fetch: (batch id, final status, results by custom_id)."""
    adapter = create_batch_adapter(judge)
    try:
        batch_id = await adapter.submit(batch)
        status = await until_done(adapter, batch_id)
        return batch_id, status, {o.custom_id: o.result for o in await adapter.results(batch_id)}
    finally:
        await adapter.aclose()


async def sync_results(judge: JudgeSpec, batch: list[BatchEntry]) -> list[CallResult]:
    """The same entries asked one by one through the judge's synchronous adapter."""
    adapter = create_adapter(msgspec.structs.replace(judge, mode="sync"))
    try:
        return [await adapter.complete(e.request) for e in batch]
    finally:
        await adapter.aclose()
