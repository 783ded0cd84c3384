"""The dispatcher: runs an item's calls.

- Cache first: `lookup` fills an item's answers from the call cache (and
  the item errors an import recorded for the run); only the calls it lacks
  go out.
- Never pay twice: a request already in flight for another item (identical
  pairs of different cells) is not sent again; the item waits for that
  call's answer. The answer stays findable here until its commit landed,
  and in the cache from then on, so an item whose dispatch was put off
  after its lookup is looked up again (`recheck`) before it goes out.
- Each call is counted (calls, tokens, cost) and judged by the failure
  policy (engine.run.judge_health): a fatal failure raises RunAborted; a
  transient one is recorded beside the run (never as the item's outcome)
  and reported back, so the item is asked again.

It decides nothing about cells or document order (engine.run.cell_policy,
engine.run.ordered_output).
"""

from __future__ import annotations

from functools import partial

import anyio

from engine.cache.call_cache import RESULTS_DB, CallCache, GroupCommitWriter, encode_result, is_cacheable
from engine.contracts import Adapter, CallResult
from engine.run.counters import Progress
from engine.run.design import Item
from engine.run.item_errors import with_terminal
from engine.run.judge_health import JudgeHealth, RunAborted, fatal_message, is_transient
from engine.run.results import failure_item

Write = tuple[str, bytes, bytes]


class SharedCall:
    """A call in flight that identical requests of other items wait for."""

    __slots__ = ("done", "finished", "result")

    def __init__(self) -> None:
        self.done: anyio.Event | None = None  # made only when a twin waits (rare)
        self.finished = False
        self.result: CallResult | None = None

    async def wait(self) -> None:
        if self.finished:  # answered, its commit not yet landed
            return
        if self.done is None:
            self.done = anyio.Event()
        await self.done.wait()

    def finish(self, result: CallResult | None) -> None:
        self.result = result
        self.finished = True
        if self.done is not None:
            self.done.set()


# What one dispatch produced: the answers to commit with the item, whether it
# used a twin's answer, and the calls that failed transiently (a plain tuple:
# one per item, on the hot path).
Dispatched = tuple[list[Write], bool, list[int]]


class Dispatcher:
    def __init__(
        self,
        cache: CallCache,
        writer: GroupCommitWriter,
        adapters: dict[str, Adapter],
        health: dict[str, JudgeHealth],
        progress: Progress,
        run_key: bytes,
    ) -> None:
        self.cache = cache
        self.writer = writer
        self.adapters = adapters
        self.health = health
        self.progress = progress
        self._run_key = run_key
        self._in_flight: dict[bytes, SharedCall] = {}
        # item errors a `calls import` recorded for this run (engine.run.batch.store): outcomes, like answers
        self.terminal: dict[bytes, CallResult] = {}

    def lookup(self, item: Item) -> bool:
        """Fill the item's answers from the cache (or the run's recorded item
        errors); True when calls are missing."""
        hits = with_terminal(self.cache.get_many(item.keys), item.keys, self.terminal)
        item.results = hits
        missing = [n for n, hit in enumerate(hits) if hit is None]
        self.progress.calls_cached += len(hits) - len(missing)
        if missing:
            item.missing = missing
            return True
        return False

    def recheck(self, item: Item) -> bool:
        """Look up again an item set aside since its lookup (held by the
        prefix gate, or waiting for a retry): an identical call of another
        item may have been answered and committed meanwhile, and is then in
        the cache only, no longer in flight. True when calls are still missing."""
        missing = item.missing
        hits = self.cache.get_many([item.keys[n] for n in missing])
        left = [n for n, hit in zip(missing, hits) if hit is None]
        if len(left) < len(missing):
            for n, hit in zip(missing, hits):
                if hit is not None:
                    item.results[n] = hit
            self.progress.calls_cached += len(missing) - len(left)
            item.missing = left
        return bool(left)

    async def dispatch(self, judge: str, item: Item, *, probe: bool = False) -> Dispatched | None:
        """Make the item's missing calls. None when a shared call raised (the
        run is failing). Answers of an item with failed calls are committed
        here (they are answers); the item is not. While the judge is down no
        call goes out but one `probe` (its item's first call): the item's
        other calls wait, unsent, with it for its retry."""
        progress = self.progress
        in_flight = self._in_flight
        adapter = self.adapters[judge]
        health = self.health[judge]
        writes: list[Write] = []
        shared = False
        failed: list[int] = []
        may_probe = probe
        skip = item.skip
        waited = False  # since the item's lookup: answers of other items may have been committed meanwhile
        for n in item.missing:
            if skip is not None and skip(n, item.results):  # a cascade panel's first member settled the item
                continue
            if health.down:
                if not may_probe:
                    failed.append(n)
                    continue
                may_probe = False
            key = item.keys[n]
            twin = in_flight.get(key)
            if twin is None and waited:
                hit = self.cache.get(key)
                if hit is not None:  # answered and committed for another item while this one waited
                    item.results[n] = hit
                    progress.calls_cached += 1
                    continue
            if twin is not None:
                waited = True
                await twin.wait()
                result = twin.result
                if result is None:
                    return None
                if is_transient(result):
                    failed.append(n)
                    continue
                item.results[n] = result
                progress.calls_cached += 1
                shared = True
                if is_cacheable(result):
                    # committed again with this item (same key, same bytes), so the
                    # item never counts before the answer it used is stored
                    writes.append((RESULTS_DB, key, encode_result(result)))
                continue
            call = in_flight[key] = SharedCall()
            waited = True
            progress.in_flight += 1
            health.sent()
            result = None
            try:
                result = await adapter.complete(item.requests[n])
            finally:
                progress.in_flight -= 1
                health.returned(result)
                call.finish(result)
                if result is None or not is_cacheable(result):
                    del in_flight[key]
            if self._account(judge, item, result):
                failed.append(n)
                continue
            if result.attempts:
                item.cached = False  # a call made for it (a row's `cached`)
            item.results[n] = result
            if is_cacheable(result):
                writes.append((RESULTS_DB, key, encode_result(result)))
        if failed and writes:
            await self.writer.submit(writes, callback=partial(self.release, tuple(k for _, k, _ in writes)))
        return writes, shared, failed

    def release(self, keys: tuple[bytes, ...]) -> None:
        """Answers committed: twins find them in the cache from now on."""
        for key in keys:
            self._in_flight.pop(key, None)

    def _account(self, judge: str, item: Item, result: CallResult) -> bool:
        """Count the call; True when it failed transiently (the item stays pending)."""
        self.progress.count_answer(result)
        health = self.health[judge]
        if result.status != "error" or not is_transient(result):
            if health.consecutive or not health.answered_once:
                health.answered()
            return False
        fatal = fatal_message(judge, result)
        if fatal is not None:
            raise RunAborted(fatal)
        self.progress.count_failure(result.error_kind or "error")
        health.failed(result)
        # kept for the record (raw text, error class), never as the item's outcome
        self.writer.submit_nowait([failure_item(self._run_key, item.cell.cell_no, item.doc_index, result)])
        return True
