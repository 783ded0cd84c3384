"""A batch judge (`mode = "batch"`): its items asked through the provider's
batch API, in waves, over the same cells, items and output stage as the
synchronous workers (engine.run.scheduler).

One wave:

1. Plan: each live cell of the judge gets its next documents
   (engine.run.batch.wave_planner, from its stopping rule's state); items whose calls
   failed transiently or were not processed in an earlier wave go again.
2. Items: built by the same policy and design as synchronous items; the
   call cache answers what it can (such an item is consumed on the spot,
   no call); identical requests become one entry.
3. Submit, wait, commit (engine.run.batch.calls): entries (`custom_id` = the
   request key in hex) in batches recorded in the store before they are
   waited on; their answers go into the call cache under the keys a
   synchronous call uses (the two are interchangeable), in the transaction
   that deletes the batches' records.
4. Consume: the answered items go through the output stage, in document
   order, to the stopping rules.

Entry failures are those of a synchronous call (engine.run.judge_health): an
answer about the item (refusal, context length) is its outcome; a transient
one, or an entry the provider did not process (expired, cancelled), is
asked again in the next wave, for those items only; a fatal one (bad
credentials, bad request) stops the run. A batch that failed as a whole,
or a batch API call that gave up, counts as one failure of the judge under
its failure policy: after `consecutive_failures` in a row the judge is down
and the run ends after `max_outage_s` (resumable). Nothing becomes a score.

Waves need not go to a provider: an executor (engine.run.executor) hands
a judge's waves to files (`needlejudge calls export`), `vllm run-batch`
processes or a Ray Data job through the same `BatchAdapter` protocol. An
item error a `calls import` recorded (engine.run.batch.store, terminal
records) answers its call like the cache does: the item's outcome.

Resume: batches recorded by an interrupted run are polled and fetched
first (their answers land in the cache), so no entry is paid twice; that
includes batches of an earlier config of the experiment (another run id),
when the judge's name, adapter and model are the same. A kill between a
batch's creation and its record's commit (milliseconds) loses its id: the
one window in which an entry can be paid twice.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import msgspec

from engine.run.batch.calls import BatchCalls
from engine.cache.call_cache import CallCache, GroupCommitWriter
from engine.run.cell_policy import CellPolicy
from engine.contracts import BatchAdapter, CallRequest, CallResult, JudgeSpec
from engine.run.counters import Progress
from engine.run.design import Item
from engine.run.judge_health import JudgeHealth, is_transient
from engine.run.ordered_output import OrderedOutput
from engine.run.results import failure_item
from engine.run.item_errors import with_terminal
from engine.run.batch.wave_planner import wave_size


class BatchJudge:
    """Runs one batch judge's waves until its cells end (or a stop)."""

    def __init__(
        self,
        spec: JudgeSpec,
        adapter: BatchAdapter,
        *,
        retry_delay: Callable[[int], float],
        policy: CellPolicy,
        output: OrderedOutput,
        cache: CallCache,
        writer: GroupCommitWriter,
        health: JudgeHealth,
        progress: Progress,
        run_key: bytes,
        stopped: Callable[[], bool],
        terminal: dict[bytes, CallResult] | None = None,
    ) -> None:
        self.calls = BatchCalls(
            spec, adapter, writer=writer, store=cache.store, health=health, progress=progress, run_key=run_key, stopped=stopped
        )
        self.judge = spec.name
        self.retry_delay = retry_delay
        self.policy = policy
        self.output = output
        self.cache = cache
        self.runs = [run for run in policy.runs if run.cell.judge == spec.name]
        self.waves = 0
        self.terminal = terminal if terminal is not None else {}  # item errors an import recorded (engine.run.batch.store)

    # -- main --------------------------------------------------------------------
    async def run(self) -> None:
        calls = self.calls
        await calls.resume()
        retry: list[Item] = []
        while not self.calls.stopped():
            issued = sum(run.issued for run in self.runs)
            pending = self._ask_cache(retry) + self._issue_wave()
            if not pending:
                if all(run.done for run in self.runs) or issued == sum(run.issued for run in self.runs):
                    return  # finished (or nothing left to ask: the cells end as their documents run out)
                # the wave was answered from the cache: let the writer catch up, plan the next
                await self.calls.writer.wait_for_room()
                await anyio.lowlevel.checkpoint()
                continue
            requests = _unique_requests(pending)
            self.calls.progress.calls_cached += sum(len(item.missing) for item in pending) - len(requests)  # twins share an entry
            self.waves += 1
            self.calls.progress.batch_waves += 1
            batch_ids = await calls.submit(requests, self.waves)
            asked = list(requests)
            del requests
            _lighten(pending)
            outcomes, readable, complete = await calls.wait_and_fetch(batch_ids)
            if not complete:  # a stop while waiting: what was fetched is stored, the other records stay
                await calls.commit(outcomes, readable)
                return
            await calls.commit(outcomes, readable, asked)
            retry = self._complete(pending, outcomes)
            if retry and self.calls.health.down:
                await self.calls.health.pause_before_probe(len(retry))  # RunAborted once the outage is too long
            elif retry and not outcomes:  # nothing answered: back off before asking again
                with anyio.move_on_after(self.retry_delay(self.calls.health.consecutive)):
                    await calls.wake.wait()

    def request_stop(self) -> None:
        self.calls.request_stop()

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
        hits = self._answers(item.keys)
        item.results = hits
        item.missing = [n for n, hit in enumerate(hits) if hit is None]
        self.calls.progress.calls_cached += len(hits) - len(item.missing)
        return bool(item.missing)

    def _ask_cache(self, retry: list[Item]) -> list[Item]:
        """Items to ask again; those whose missing answers reached the cache meanwhile are consumed."""
        pending = []
        for item in retry:
            if self.policy.runs[item.cell.cell_no].done:
                continue  # its cell ended meanwhile: nothing to ask
            hits = self._answers([item.keys[n] for n in item.missing])
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

    def _answers(self, keys: list[bytes]) -> list[CallResult | None]:
        """The cache's answers, or the item errors an import recorded."""
        return with_terminal(self.cache.get_many(keys), keys, self.terminal)

    def _complete(self, pending: list[Item], outcomes: dict[bytes, CallResult]) -> list[Item]:
        """Consume every item whose calls are answered; return those to ask again."""
        retry = []
        progress = self.calls.progress
        claimed: set[bytes] = set()  # an entry answers its twins too: the first item it answers is the one it was made for
        for item in pending:
            missing = []
            for n in item.missing:
                result = outcomes.get(item.keys[n])
                if result is None or is_transient(result):
                    missing.append(n)
                    if result is not None:  # kept for the record, never as the item's outcome
                        self.calls.writer.submit_nowait([failure_item(self.calls.run_key, item.cell.cell_no, item.doc_index, result)])
                else:
                    item.results[n] = result
                    if item.keys[n] not in claimed:  # made for this item in this run's batch (a row's `cached`)
                        claimed.add(item.keys[n])
                        item.cached = False
            item.missing = missing
            if missing:
                item.failures += 1
                progress.items_retried += 1
                retry.append(item)
            else:
                self.output.consume(item.cell.cell_no, item.doc_index, self.output.judge(item))
        return retry


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
