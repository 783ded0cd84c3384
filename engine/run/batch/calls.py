"""The provider side of a batch judge (engine.run.batch.judge): its batch API
calls under the judge's failure policy, and the store records that make
them resumable.

- submit: entries in batches of at most `adapter.max_entries`, each batch
  recorded in the store (engine.run.batch.store) before anything waits on it;
- wait_and_fetch: poll every `batch_poll_s` until each batch ended,
  expired, was cancelled or failed, fetching the answers as they end;
- commit: the answers into the call cache under their request keys, in the
  transaction that deletes their batches' records; calls, tokens and cost
  counted; a fatal entry failure (bad credentials, bad request) stops the
  run once the answers are stored;
- resume: every recorded batch this judge can fetch, fetched first.

A batch that failed as a whole, or a batch API call that gave up on a
transient failure, is one failure of the judge (engine.run.judge_health); a
failure no retry fixes stops the run; a creation whose answer was lost
stops it too (the batch may exist: submitting again could pay twice).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio

from engine.run.batch.store import new_record, record_delete, record_key, record_write, recorded_for
from engine.cache.call_cache import RESULTS_DB, GroupCommitWriter, encode_result, is_cacheable
from engine.contracts import BatchAdapter, BatchApiError, BatchEntry, BatchStatus, CallRequest, CallResult, JudgeSpec
from engine.run.counters import Progress
from engine.run.judge_health import JudgeHealth, RunAborted, fatal_message, is_transient
from engine.cache.store import Store

READABLE_STATES = frozenset({"ended", "expired", "cancelled"})  # results can be fetched
TERMINAL_STATES = READABLE_STATES | {"failed"}
# a batch API call that got no answer: it may have been acted on (adapters/batch_http.py)
UNANSWERED_KINDS = frozenset({"timeout", "connection"})


class BatchCalls:
    """One batch judge's batch API calls and their records."""

    def __init__(
        self,
        spec: JudgeSpec,
        adapter: BatchAdapter,
        *,
        writer: GroupCommitWriter,
        store: Store,
        health: JudgeHealth,
        progress: Progress,
        run_key: bytes,
        stopped: Callable[[], bool],
    ) -> None:
        self.judge = spec.name
        self.spec = spec
        self.adapter = adapter
        self.poll_s = spec.batch_poll_s
        self.writer = writer
        self.store = store
        self.health = health
        self.progress = progress
        self.run_key = run_key
        self.stopped = stopped
        self._records: dict[str, bytes] = {}  # batch id -> its record's store key
        self.stop_message = ""  # a batch's `stop`: raised by the commit that stores its answers
        self.wake = anyio.Event()  # set on a stop request: waits end early

    def request_stop(self) -> None:
        self.wake.set()

    async def submit(self, requests: dict[bytes, CallRequest], wave: int) -> list[str]:
        """Submit the entries in batches of at most max_entries; each batch is
        recorded (durably) before anything waits on it."""
        keys = list(requests)
        size = max(1, int(self.adapter.max_entries))
        batch_ids = []
        for start in range(0, len(keys), size):
            if self.stopped():
                break  # a graceful stop: what is not submitted stays pending for the next run
            chunk = keys[start : start + size]
            entries = [BatchEntry(custom_id=key.hex(), request=requests[key]) for key in chunk]
            batch_id = await self._control("submit", self.adapter.submit(entries))
            if batch_id is None:
                continue  # the submission gave up: its items go again in the next wave
            record = new_record(batch_id, self.judge, self.spec.adapter, self.spec.model, chunk, wave)
            self._records[batch_id] = record_key(self.run_key, batch_id)
            await self.writer.commit([record_write(self.run_key, record)])
            self.progress.batches_submitted += 1
            batch_ids.append(batch_id)
        return batch_ids

    async def wait_and_fetch(self, batch_ids: list[str]) -> tuple[dict[bytes, CallResult], list[str], bool]:
        """Poll until every batch is terminal, fetching each one's answers (by
        request key) as it ends: (answers, batches read, all read?). A stop
        ends the wait early (False): the batches not read stay recorded."""
        outcomes: dict[bytes, CallResult] = {}
        waiting = list(batch_ids)
        done: list[str] = []
        while waiting:
            for batch_id in list(waiting):
                status = await self._control("status", self.adapter.status(batch_id), batch_id=batch_id)
                if status is None or status.state not in TERMINAL_STATES:
                    continue
                waiting.remove(batch_id)
                if await self._read(batch_id, status, outcomes):
                    done.append(batch_id)
            if waiting:
                if not self.stopped():
                    with anyio.move_on_after(self.poll_s):
                        await self.wake.wait()
                if self.stopped():
                    return outcomes, done, False
        return outcomes, done, True

    async def _read(self, batch_id: str, status: BatchStatus, outcomes: dict[bytes, CallResult]) -> bool:
        """Fetch a terminal batch's answers into `outcomes`; False when they
        could not be fetched (the record stays; its entries go again)."""
        self.stop_message = self.stop_message or status.stop
        if status.state == "failed":
            self._judge_failed("batch_failed", f"batch {batch_id} failed: {status.detail}")
            return True  # nothing to fetch: the record goes
        results = await self._control("results", self.adapter.results(batch_id))
        if results is None:
            return False
        self.health.answered()
        for outcome in results:
            outcomes[bytes.fromhex(outcome.custom_id)] = outcome.result
        return True

    async def commit(self, outcomes: dict[bytes, CallResult], finished: list[str], asked: list[bytes] | None = None) -> None:
        """Store the answers under their request keys, deleting the records of
        the batches they came from in the same transaction; count the calls
        and the entries to ask again (`asked`: the wave's entries).
        A fatal entry failure, or a batch whose status said `stop`, stops the
        run after the answers are stored."""
        writes = [(RESULTS_DB, key, encode_result(result)) for key, result in outcomes.items() if is_cacheable(result)]
        writes += [record_delete(self._records.pop(batch_id)) for batch_id in finished]
        if writes:
            await self.writer.commit(writes)
        progress = self.progress
        for result in outcomes.values():
            progress.count_answer(result)
        for key in asked or ():
            result = outcomes.get(key)
            if result is None or is_transient(result):
                progress.count_failure("not_processed" if result is None else (result.error_kind or "error"))
        for result in outcomes.values():
            fatal = fatal_message(self.judge, result)
            if fatal is not None:
                raise RunAborted(fatal)
        if self.stop_message:
            raise RunAborted(self.stop_message)

    async def resume(self) -> None:
        """Fetch the batches an interrupted run submitted and recorded."""
        records = recorded_for(self.store, self.judge, self.spec.adapter, self.spec.model)
        if not records:
            return
        self.progress.batches_resumed += len(records)
        self._records.update((record.batch_id, key) for key, record in records.items())
        outcomes, finished, _ = await self.wait_and_fetch([record.batch_id for record in records.values()])
        await self.commit(outcomes, finished)

    # -- failures --------------------------------------------------------------------
    async def _control(self, operation: str, call: Any, *, batch_id: str | None = None) -> Any:
        """A batch API call; None when it gave up on a transient failure
        (one failure of the judge). A failure no retry fixes stops the run,
        but a batch the provider does not know (`not_found` on its status:
        an old record, another account) is taken as failed: its record goes
        and its entries are asked again."""
        try:
            return await call
        except BatchApiError as exc:
            kind = exc.kind
            if kind == "not_found" and batch_id is not None:
                return BatchStatus(batch_id=batch_id, state="failed", detail=f"unknown to the provider: {str(exc)[:300]}")
            if operation == "submit" and kind in UNANSWERED_KINDS:
                # the batch may exist (and be billed) without its id: submitting its entries
                # again could pay for them twice, so the run stops and says so
                raise RunAborted(
                    f"judge {self.judge!r}: {str(exc)[:500]}. Stopping the run: results so far are kept; look the batch "
                    "up in the provider's batch list (cancel it, or let it run: its answers are not collected), then "
                    "run the same config again to resume (it submits the entries of that batch again)"
                ) from None
            if exc.retryable:
                self._judge_failed(kind, f"batch {operation}: {exc}")
                return None
            raise RunAborted(
                f"judge {self.judge!r}: batch {operation} failed ({kind}): {str(exc)[:300]}; "
                "fix the judge's config (results so far are kept; submitted batches are recorded and fetched on the next run)"
            ) from None

    def _judge_failed(self, kind: str, text: str) -> None:
        self.progress.count_failure(kind)
        self.health.failed(CallResult(status="error", text=text, error_kind=kind, finished_at=time.time()))
