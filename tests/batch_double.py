"""A provider batch API in process, over the real synchronous adapter and the
fake provider server: each entry of a batch is answered by a real HTTP call
when its results are fetched. It stands in for a provider's batch endpoints
(processing delay, expiry of some entries, entry failures, whole-batch
failure) where the tests need them controlled per entry, and counts how
many times each entry was submitted (what the provider would bill)."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence

from engine.contracts import BatchEntry, BatchOutcome, BatchStatus, CallResult, Capabilities


class LoopbackBatch:
    capabilities = Capabilities(batch_api=True)

    def __init__(
        self,
        adapter,  # type: ignore[no-untyped-def]  # a synchronous adapter (the fake server's)
        *,
        max_entries: int = 50,
        delay_s: float = 0.05,
        expire: Callable[[str, int], bool] = lambda custom_id, attempt: False,
        fail_entry: Callable[[str, int], bool] = lambda custom_id, attempt: False,
        fail_batch: Callable[[int], bool] = lambda index: False,
        on_submit: Callable[[str], None] | None = None,
    ) -> None:
        self.adapter = adapter
        self.max_entries = max_entries
        self.delay_s = delay_s
        self.expire = expire
        self.fail_entry = fail_entry
        self.fail_batch = fail_batch
        self.on_submit = on_submit
        self.submitted: Counter[str] = Counter()  # entry custom_id -> times submitted
        self.fetched: Counter[str] = Counter()  # batch id -> times its results were fetched
        self.batches: dict[str, tuple[float, list[BatchEntry], bool]] = {}

    async def submit(self, entries: Sequence[BatchEntry]) -> str:
        assert 0 < len(entries) <= self.max_entries
        assert len({e.custom_id for e in entries}) == len(entries), "duplicate custom_id in one batch"
        index = len(self.batches)
        batch_id = f"batch_{index}"
        for entry in entries:
            self.submitted[entry.custom_id] += 1
        self.batches[batch_id] = (time.monotonic(), list(entries), self.fail_batch(index))
        if self.on_submit is not None:
            self.on_submit(batch_id)
        return batch_id

    async def status(self, batch_id: str) -> BatchStatus:
        started, entries, failed = self.batches[batch_id]
        if time.monotonic() - started < self.delay_s:
            return BatchStatus(batch_id=batch_id, state="in_progress", total=len(entries))
        if failed:
            return BatchStatus(batch_id=batch_id, state="failed", total=len(entries), detail="validation failed")
        expired = any(self.expire(e.custom_id, self.submitted[e.custom_id]) for e in entries)
        return BatchStatus(batch_id=batch_id, state="expired" if expired else "ended", total=len(entries))

    async def results(self, batch_id: str) -> list[BatchOutcome]:
        self.fetched[batch_id] += 1
        _, entries, _ = self.batches[batch_id]
        out = []
        for entry in entries:
            attempt = self.submitted[entry.custom_id]
            if self.expire(entry.custom_id, attempt):
                continue  # not processed before the window closed
            if self.fail_entry(entry.custom_id, attempt):
                result = CallResult(status="error", text="HTTP 500: entry failed", error_kind="server")
            else:
                result = await self.adapter.complete(entry.request)
            out.append(BatchOutcome(custom_id=entry.custom_id, result=result))
        return out

    async def cancel(self, batch_id: str) -> None:
        pass

    async def aclose(self) -> None:
        await self.adapter.aclose()
