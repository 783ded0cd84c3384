"""A batch judge (`mode = "batch"`): its items asked through the provider's
batch API, in waves, over the same cells, items and output stage as the
synchronous workers (engine.scheduler).

One wave:

1. Plan: each live cell of the judge gets its next documents
   (engine.wave_planner, from its stopping rule's state); items whose calls
   failed transiently or were not processed in an earlier wave go again.
2. Items: built by the same policy and design as synchronous items; the
   call cache answers what it can (such an item is consumed on the spot,
   no call); identical requests become one entry.
3. Submit: entries (`custom_id` = the request key in hex) in batches of at
   most `adapter.max_entries`; each batch is recorded in the store
   (engine.batch_store) before it is waited on.
4. Wait: every `batch_poll_s`, until each batch ended, expired, was
   cancelled or failed.
5. Commit: the answers go into the call cache under the same keys a
   synchronous call uses (the two are interchangeable), in the transaction
   that deletes the batches' records; then the items are consumed through
   the output stage, in document order, by the stopping rules.

Entry failures are those of a synchronous call (engine.judge_health): an
answer about the item (refusal, context length) is its outcome; a transient
one, or an entry the provider did not process (expired, cancelled), is
asked again in the next wave, for those items only; a fatal one (bad
credentials, bad request) stops the run. A batch that failed as a whole,
or a batch API call that gave up, counts as one failure of the judge under
its failure policy: after `consecutive_failures` in a row the judge is down
and the run ends after `max_outage_s` (resumable). Nothing becomes a score.

Resume: batches recorded by an interrupted run are polled and fetched
first (their answers land in the cache), so no entry is paid twice; that
includes batches of an earlier config of the experiment (another run id),
when the judge's name, adapter and model are the same. A kill between a
batch's creation and its record's commit (milliseconds) loses its id: the
one window in which an entry can be paid twice.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import anyio
import msgspec

from engine.batch_store import new_record, record_delete, record_key, record_write, recorded_for
from engine.cache import RESULTS_DB, CallCache, GroupCommitWriter, encode_result, is_cacheable
from engine.cell_policy import CellPolicy, CellRun
from engine.contracts import BatchAdapter, BatchEntry, BatchStatus, CallRequest, CallResult, JudgeSpec
from engine.counters import Progress
from engine.design import Item
from engine.judge_health import JudgeHealth, RunAborted, fatal_message, is_transient
from engine.ordered_output import OrderedOutput
from engine.results import failure_item
from engine.wave_planner import wave_size

READABLE_STATES = frozenset({"ended", "expired", "cancelled"})  # results can be fetched
TERMINAL_STATES = READABLE_STATES | {"failed"}
# a batch API call that got no answer: it may have been acted on (adapters/batch_http.py)
UNANSWERED_KINDS = frozenset({"timeout", "connection"})


class BatchJudge:
    """Runs one batch judge's waves until its cells end (or a stop)."""

    def __init__(
        self,
        judge: str,
        adapter: BatchAdapter,
        *,
        spec: JudgeSpec,
        poll_s: float,
        retry_delay: Callable[[int], float],
        policy: CellPolicy,
        output: OrderedOutput,
        cache: CallCache,
        writer: GroupCommitWriter,
        health: JudgeHealth,
        progress: Progress,
        run_key: bytes,
        stopped: Callable[[], bool],
    ) -> None:
        self.judge = judge
        self.spec = spec
        self.adapter = adapter
        self.poll_s = poll_s
        self.retry_delay = retry_delay
        self.policy = policy
        self.output = output
        self.cache = cache
        self.writer = writer
        self.health = health
        self.progress = progress
        self.run_key = run_key
        self.stopped = stopped
        self.runs = [run for run in policy.runs if run.cell.judge == judge]
        self.waves = 0
        self._records: dict[str, bytes] = {}  # batch id -> its record's store key
        self.wake = anyio.Event()  # set on a stop request: polling ends early

    # -- main --------------------------------------------------------------------
    async def run(self) -> None:
        await self._resume()
        retry: list[Item] = []
        while not self.stopped():
            issued = sum(run.issued for run in self.runs)
            pending = self._ask_cache(retry) + self._issue_wave()
            if not pending:
                if all(run.done for run in self.runs) or issued == sum(run.issued for run in self.runs):
                    return  # finished (or nothing left to ask: the cells end as their documents run out)
                # the wave was answered from the cache: let the writer catch up, plan the next
                await self.writer.wait_for_room()
                await anyio.lowlevel.checkpoint()
                continue
            requests = _unique_requests(pending)
            self.progress.calls_cached += sum(len(item.missing) for item in pending) - len(requests)  # twins share an entry
            self.waves += 1
            self.progress.batch_waves += 1
            batch_ids = await self._submit(requests)
            asked = list(requests)
            del requests
            _lighten(pending)
            outcomes, readable, complete = await self._wait_and_fetch(batch_ids)
            if not complete:  # a stop while waiting: what was fetched is stored, the other records stay
                await self._commit(outcomes, readable)
                return
            await self._commit(outcomes, readable, asked)
            retry = self._complete(pending, outcomes)
            if retry and self.health.down:
                await self.health.pause_before_probe(len(retry))  # RunAborted once the outage is too long
            elif retry and not outcomes:  # nothing answered: back off before asking again
                with anyio.move_on_after(self.retry_delay(self.health.consecutive)):
                    await self.wake.wait()

    def request_stop(self) -> None:
        self.wake.set()

    # -- a wave --------------------------------------------------------------------
    def _issue_wave(self) -> list[Item]:
        """Issue each live cell's next documents; consume what the cache answers."""
        pending: list[Item] = []
        for run in self.runs:
            if run.done:
                continue
            count = wave_size(run.rule, outstanding=len(run.outstanding), cap=run.cap, min_docs=run.min_docs)
            if count == 0 and not run.outstanding:
                count = 1  # a live cell with nothing asked: at least one document (or it runs out)
            for _ in range(count):
                item = self.policy.issue_in(run)
                if item is None:
                    break
                if self._missing(item):
                    pending.append(item)
                else:
                    self.output.consume(run.cell.cell_no, item.doc_index, self.output.judge(item))
                if run.done:
                    break
        return pending

    def _missing(self, item: Item) -> bool:
        hits = self.cache.get_many(item.keys)
        item.results = hits
        item.missing = [n for n, hit in enumerate(hits) if hit is None]
        self.progress.calls_cached += len(hits) - len(item.missing)
        item.cached = not item.missing
        return bool(item.missing)

    def _ask_cache(self, retry: list[Item]) -> list[Item]:
        """Items to ask again; those whose missing answers reached the cache meanwhile are consumed."""
        pending = []
        for item in retry:
            if self.policy.runs[item.cell.cell_no].done:
                continue  # its cell ended meanwhile: nothing to ask
            hits = self.cache.get_many([item.keys[n] for n in item.missing])
            still = []
            for n, hit in zip(item.missing, hits):
                if hit is None:
                    still.append(n)
                else:
                    item.results[n] = hit
            item.missing = still
            if still:
                item.requests = self.policy.design.item(item.cell, item.doc_index).requests  # type: ignore[union-attr]  # released by _lighten
                pending.append(item)
            else:
                self.output.consume(item.cell.cell_no, item.doc_index, self.output.judge(item))
        return pending

    async def _submit(self, requests: dict[bytes, CallRequest]) -> list[str]:
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
            record = new_record(batch_id, self.judge, self.spec.adapter, self.spec.model, chunk, self.waves)
            self._records[batch_id] = record_key(self.run_key, batch_id)
            await self.writer.commit([record_write(self.run_key, record)])
            self.progress.batches_submitted += 1
            batch_ids.append(batch_id)
        return batch_ids

    async def _wait_and_fetch(self, batch_ids: list[str]) -> tuple[dict[bytes, CallResult], list[str], bool]:
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

    async def _commit(self, outcomes: dict[bytes, CallResult], finished: list[str], asked: list[bytes] | None = None) -> None:
        """Store the answers under their request keys, deleting the records of
        the batches they came from in the same transaction; count the calls
        and the entries to ask again (`asked`: the wave's entries).
        A fatal entry failure stops the run after the answers are stored."""
        writes = [(RESULTS_DB, key, encode_result(result)) for key, result in outcomes.items() if is_cacheable(result)]
        writes += [record_delete(self._records.pop(batch_id)) for batch_id in finished]
        if writes:
            await self.writer.commit(writes)
        progress = self.progress
        for result in outcomes.values():
            progress.calls_network += 1
            progress.prompt_tokens += result.usage.prompt_tokens
            progress.completion_tokens += result.usage.completion_tokens
            progress.cost_usd += result.cost_usd
        failures = progress.failures_by_kind
        for key in asked or ():
            result = outcomes.get(key)
            if result is None or is_transient(result):
                kind = "not_processed" if result is None else (result.error_kind or "error")
                progress.calls_failed += 1
                failures[kind] = failures.get(kind, 0) + 1
        for result in outcomes.values():
            fatal = fatal_message(self.judge, result)
            if fatal is not None:
                raise RunAborted(fatal)

    def _complete(self, pending: list[Item], outcomes: dict[bytes, CallResult]) -> list[Item]:
        """Consume every item whose calls are answered; return those to ask again."""
        retry = []
        progress = self.progress
        for item in pending:
            missing = []
            for n in item.missing:
                result = outcomes.get(item.keys[n])
                if result is None or is_transient(result):
                    missing.append(n)
                    if result is not None:  # kept for the record, never as the item's outcome
                        self.writer.submit_nowait([failure_item(self.run_key, item.cell.cell_no, item.doc_index, result)])
                else:
                    item.results[n] = result
            item.missing = missing
            if missing:
                item.failures += 1
                progress.items_retried += 1
                retry.append(item)
            else:
                self.output.consume(item.cell.cell_no, item.doc_index, self.output.judge(item))
        return retry

    # -- resume ----------------------------------------------------------------------
    async def _resume(self) -> None:
        """Fetch the batches an interrupted run submitted and recorded."""
        records = recorded_for(self.cache.store, self.judge, self.spec.adapter, self.spec.model)
        if not records:
            return
        self.progress.batches_resumed += len(records)
        self._records.update((record.batch_id, key) for key, record in records.items())
        outcomes, finished, _ = await self._wait_and_fetch([record.batch_id for record in records.values()])
        await self._commit(outcomes, finished)

    # -- failures --------------------------------------------------------------------
    async def _control(self, operation: str, call: Any, *, batch_id: str | None = None) -> Any:
        """A batch API call; None when it gave up on a transient failure
        (one failure of the judge). A failure no retry fixes stops the run,
        but a batch the provider does not know (`not_found` on its status:
        an old record, another account) is taken as failed: its record goes
        and its entries are asked again."""
        try:
            return await call
        except Exception as exc:
            kind = getattr(exc, "kind", None)  # adapters' BatchApiError (the engine does not import adapters)
            if kind is None:
                raise
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
            if getattr(exc, "retryable", False):
                self._judge_failed(kind, f"batch {operation}: {exc}")
                return None
            raise RunAborted(
                f"judge {self.judge!r}: batch {operation} failed ({kind}): {str(exc)[:300]}; "
                "fix the judge's config (results so far are kept; submitted batches are recorded and fetched on the next run)"
            ) from None

    def _judge_failed(self, kind: str, text: str) -> None:
        self.progress.calls_failed += 1
        self.progress.failures_by_kind[kind] = self.progress.failures_by_kind.get(kind, 0) + 1
        self.health.failed(CallResult(status="error", text=text, error_kind=kind, finished_at=time.time()))


def _lighten(pending: list[Item]) -> None:
    """Release what a submitted item no longer needs while its batch is out
    (a wave may hold tens of thousands): its requests (rebuilt if it must be
    asked again) and its texts (its row needs only the pair's ids)."""
    for item in pending:
        item.requests = ()
        item.pair = msgspec.structs.replace(item.pair, original="", perturbed="", needle_before="", needle_after="")


def _unique_requests(pending: list[Item]) -> dict[bytes, CallRequest]:
    """The wave's distinct requests by key (identical requests are asked once)."""
    requests: dict[bytes, CallRequest] = {}
    for item in pending:
        for n in item.missing:
            requests.setdefault(item.keys[n], item.requests[n])
    return requests
