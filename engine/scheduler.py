"""The async scheduler: streams a design's items through judges at full speed.

One event loop, one anyio task group. Per judge: a fixed pool of
`JudgeSpec.concurrency` worker tasks, each making one call at a time (the
pool size is the judge's in-flight bound). A worker takes its next item
itself, synchronously (no hand-off between tasks: a call costs no extra
trip through the event loop), and waits only when no cell of its judge has
room for another document.

- Lazy: a worker builds one item at a time (pair, render, key); the
  design is never materialised.
- Fair: the next item goes to the unconverged cell of that judge with the
  fewest documents issued (a heap); each cell has a small window of
  outstanding documents (issued, not yet consumed), widened to the
  documents its rule needs for sure (min_docs) and, while few cells are
  left, to spread the judge's concurrency over them.
- Cache first: an item whose calls are all cached completes on the spot.
  Fresh answers are committed (group commit) before the item counts: it
  completes in the commit's callback on the loop, and the worker is free
  for its next call meanwhile.
- Ordered: each cell consumes completions strictly in document-index order
  (out-of-order completions wait in a per-cell buffer); rows are stored
  only for the consumed prefix, so the stopping point and the data do not
  depend on timing. Completions past the stopping point are dropped (their
  calls stay cached).
- Failures never change the data (engine.judge_health): a refused /
  unparseable document, or an error about its content, is recorded as a
  row and the cell moves to the next document; a transient failure
  (transport, timeout, rate limit, 5xx, circuit breaker) leaves the item
  pending: it is asked again after a backoff (the cell does not move past
  it) and, should the run stop first, on the next run. The failed call is
  recorded beside the run (`results.failure_key`), never as the item's row.
- Resumable: a cell's stored rows are replayed into a fresh rule at start;
  ended cells are skipped from their stored state. A stored row of a
  transient error (written by versions before this rule) is dropped with
  the rows after it, so the re-run asks it again.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque
from functools import partial
from typing import Any

import anyio
import msgspec

from engine.cache import RESULTS_DB, CallCache, GroupCommitWriter, encode_result, is_cacheable
from engine.contracts import Adapter, CallResult, ConfigError
from engine.design import Cell, Design, Item
from engine.judge_health import ITEM_ERROR_KINDS, FailurePolicy, JudgeHealth, RunAborted, fatal_message, is_transient
from engine.results import (
    ROWS_DB,
    RUNS_DB,
    CellState,
    cell_rows,
    cell_state_key,
    drop_rows_from,
    encode_row,
    failure_item,
    load_cell_states,
    make_row,
    row_key,
)
from engine.stopping import StoppingRule

__all__ = ["FailurePolicy", "Progress", "RunAborted", "Scheduler"]


class Progress:
    """Counters the display reads (plain attributes, updated on the loop)."""

    def __init__(self) -> None:
        self.started = time.monotonic()
        self.items_done = 0
        self.calls_network = 0
        self.calls_cached = 0
        self.in_flight = 0
        self.cells_total = 0
        self.cells_done = 0
        self.cells_reused = 0
        self.rows_written = 0
        self.rows_reused = 0
        self.items_dropped = 0  # completions past a cell's stopping point
        self.failed_items = 0  # consumed as refused / unparseable / item errors
        self.calls_failed = 0  # transient failures (the item stays pending)
        self.failures_by_kind: dict[str, int] = {}
        self.items_retried = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost_usd = 0.0
        self.planned_items = 0  # upper bound of items still to consume at start

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started


class _SharedCall:
    """A call in flight that identical requests of other cells wait for."""

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


# `_take` returns this after answering a run of items from the cache: the worker
# lets the loop (and the commit writer) catch up before taking more.
_YIELD = object()
CACHED_ITEMS_PER_YIELD = 64


class CellRun:
    """A cell's live state."""

    __slots__ = (
        "cell",
        "rule",
        "limit",
        "cap",
        "min_docs",
        "next_doc",
        "issued",
        "outstanding",
        "buffer",
        "done",
        "reason",
        "rows",
        "failed",
        "parked",
        "exhausted",
        "consumed_to",
    )

    def __init__(self, cell: Cell, rule: StoppingRule, limit: int, cap: int, min_docs: int) -> None:
        self.cell = cell
        self.rule = rule
        self.limit = limit  # documents in the cell's order
        self.cap = cap  # upper bound of documents consumed
        self.min_docs = min_docs
        self.next_doc = 0  # next document index to try
        self.issued = 0  # items issued (including replayed rows)
        self.outstanding: deque[int] = deque()  # doc indices issued, not consumed, in order
        self.buffer: dict[int, tuple[Any, bool, float | None]] = {}  # judged, waiting for their turn
        self.done = False
        self.reason = ""
        self.rows = 0
        self.failed = 0
        self.parked = False
        self.exhausted = False
        self.consumed_to = 0  # one past the last consumed document index

    def state(self) -> CellState:
        mean = self.rule.mean if self.rule.n else None
        return CellState(
            cell_no=self.cell.cell_no,
            label=self.cell.label(),
            reason=self.reason,
            n=self.rule.n,
            mean=mean,
            rows=self.rows,
            failed=self.failed,
            next_doc=self.consumed_to,
        )


class Scheduler:
    def __init__(
        self,
        design: Design,
        *,
        cache: CallCache,
        writer: GroupCommitWriter,
        adapters: dict[str, Adapter],
        run_id: str,
        prompt_versions: dict[str, str],
        progress: Progress | None = None,
        failure_policy: FailurePolicy | None = None,
    ) -> None:
        self.design = design
        self.cache = cache
        self.writer = writer
        self.adapters = adapters
        self.run_id = run_id
        self._run_key = bytes.fromhex(run_id)
        self.prompt_versions = prompt_versions
        self.progress = progress or Progress()
        self.failure_policy = failure_policy or FailurePolicy()
        self.runs: list[CellRun] = []
        self._by_judge: dict[str, list[CellRun]] = {name: [] for name in design.judges}
        self._heaps: dict[str, list[tuple[int, int]]] = {}
        self._active: dict[str, int] = {}
        self._window: dict[str, int] = {}
        self._window_basis: dict[str, int] = {}
        self._wake: dict[str, anyio.Event] = {}
        self._health: dict[str, JudgeHealth] = {}
        # per judge: items whose call failed transiently, (due, seq, item), a heap
        self._retries: dict[str, list[tuple[float, int, Item]]] = {}
        self._retry_seq = 0
        self._stale: list[tuple[int, int]] = []  # (cell_no, doc_index): stored rows to drop from
        self._calls_in_flight: dict[bytes, _SharedCall] = {}
        self._state_encoder = msgspec.msgpack.Encoder()

    # -- setup -----------------------------------------------------------------
    def restore(self) -> None:
        """Build every cell's run, continuing from what the store holds."""
        store = self.cache.store
        states = load_cell_states(store, self._run_key)
        progress = self.progress
        for cell in self.design.cells:
            run = CellRun(
                cell,
                self.design.new_rule(cell),
                self.design.doc_limit(cell),
                self.design.doc_cap(cell),
                self.design.min_docs(cell),
            )
            state = states.get(cell.cell_no)
            if state is not None and not (state.failed and self._first_transient_row(cell.cell_no) is not None):
                run.done, run.reason = True, state.reason
                run.rows, run.failed = state.rows, state.failed
                run.next_doc = run.consumed_to = state.next_doc
                progress.cells_reused += 1
                progress.rows_reused += state.rows
            else:
                for row in cell_rows(store, self._run_key, cell.cell_no):
                    if row.status == "error" and row.error_kind not in ITEM_ERROR_KINDS:
                        # a transient failure stored as an outcome by an older version: pending again
                        self._stale.append((cell.cell_no, row.doc_index))
                        break
                    run.rows += 1
                    run.issued += 1
                    run.next_doc = run.consumed_to = row.doc_index + 1
                    if row.status == "ok" and row.score is not None:
                        run.rule.update(row.score)
                    else:
                        run.failed += 1
                progress.rows_reused += run.rows
                if run.rule.done:
                    run.done, run.reason = True, run.rule.reason
                elif run.next_doc >= run.limit:
                    run.done, run.reason = True, "exhausted"
            self.runs.append(run)
            self._by_judge[cell.judge].append(run)
        progress.cells_total = len(self.runs)
        progress.cells_done = sum(run.done for run in self.runs)
        progress.planned_items = sum(max(0, run.cap - run.rule.n) for run in self.runs if not run.done)

    def _first_transient_row(self, cell_no: int) -> int | None:
        for row in cell_rows(self.cache.store, self._run_key, cell_no):
            if row.status == "error" and row.error_kind not in ITEM_ERROR_KINDS:
                return row.doc_index
        return None

    def unfinished_ended_cells(self) -> list[CellRun]:
        """Cells that ended during restore (replayed) but have no stored state yet."""
        return [run for run in self.runs if run.done and run.reason and not self._has_state(run)]

    def _has_state(self, run: CellRun) -> bool:
        return self.cache.store.get_raw(RUNS_DB, cell_state_key(self._run_key, run.cell.cell_no)) is not None

    # -- main ------------------------------------------------------------------
    async def run(self) -> None:
        if not self.runs:
            self.restore()
        for cell_no, doc_index in self._stale:
            drop_rows_from(self.cache.store, self._run_key, cell_no, doc_index)
        self._stale.clear()
        # Cells that ended during replay get their state record now.
        ended = self.unfinished_ended_cells()
        if ended:
            await self.writer.submit([self._state_item(run) for run in ended])
        try:
            await self._run_judges()
        except BaseExceptionGroup as group:
            # Surface the reason a run stopped (bad credentials, persistent
            # failures, a bad prompt...) as itself, not inside a group.
            found = _first_of(group, ConfigError)
            if found is not None:
                raise found from None
            raise
        await self.writer.flush()

    async def _run_judges(self) -> None:
        async with anyio.create_task_group() as tg:
            for judge, runs in self._by_judge.items():
                pending = [run for run in runs if not run.done]
                if not pending:
                    continue
                spec = self.design.judges[judge]
                self._active[judge] = len(pending)
                self._set_window(judge, spec.concurrency)
                self._heaps[judge] = [(run.issued, run.cell.cell_no) for run in pending]
                heapq.heapify(self._heaps[judge])
                self._wake[judge] = anyio.Event()
                self._health[judge] = JudgeHealth(judge, self.failure_policy)
                self._retries[judge] = []
                # One call per worker at a time: the worker count is the in-flight bound.
                for _ in range(spec.concurrency):
                    tg.start_soon(self._work, judge)

    def _set_window(self, judge: str, concurrency: int) -> None:
        active = max(1, self._active[judge])
        self._window[judge] = max(self.design.config.window, math.ceil(2 * concurrency / active))
        self._window_basis[judge] = active

    def _room(self, run: CellRun) -> bool:
        needed = run.rule.n
        allowed = max(self._window[run.cell.judge], run.min_docs - needed)
        # Never more outstanding than the cell can still consume (fixed n, max_docs).
        allowed = min(allowed, max(1, run.cap - needed))
        return len(run.outstanding) < allowed

    # -- picking work ----------------------------------------------------------
    def _next_item(self, run: CellRun) -> Item | None:
        design = self.design
        while run.next_doc < run.limit:
            index = run.next_doc
            run.next_doc += 1
            item = design.item(run.cell, index)
            if item is not None:
                return item
        return None

    def _take(self, judge: str) -> Any:
        """The judge's next item that needs the network (synchronous).

        Items of the least-advanced cell with room come first; an item the
        cache answers completely is consumed on the spot. Returns None when
        no cell has room now, `_YIELD` after CACHED_ITEMS_PER_YIELD cached
        items."""
        retries = self._retries[judge]
        if retries and (retries[0][0] <= time.monotonic() or self._health[judge].down):
            return heapq.heappop(retries)[2]
        heap = self._heaps[judge]
        cache = self.cache
        progress = self.progress
        answered = 0
        while heap:
            _, cell_no = heapq.heappop(heap)
            run = self.runs[cell_no]
            if run.done:
                continue
            item = self._next_item(run)
            if item is None:
                run.exhausted = True
                if not run.outstanding:
                    self._finish(run, "exhausted")
                continue
            run.issued += 1
            run.outstanding.append(item.doc_index)
            if self._room(run):
                heapq.heappush(heap, (run.issued, cell_no))
            else:
                run.parked = True
            hits = cache.get_many(item.keys)
            missing = [n for n, hit in enumerate(hits) if hit is None]
            item.results = hits
            if missing:
                progress.calls_cached += len(hits) - len(missing)
                item.missing = missing
                return item
            item.cached = True
            progress.calls_cached += len(hits)
            self._consume(cell_no, item.doc_index, self._judge(item))
            answered += 1
            if answered == CACHED_ITEMS_PER_YIELD:
                return _YIELD
        return None

    # -- workers ---------------------------------------------------------------
    async def _work(self, judge: str) -> None:
        adapter = self.adapters[judge]
        health = self._health[judge]
        while True:
            if health.down:
                if health.probing:  # another worker probes: wait for the judge to come back
                    await health.wait_up()
                    continue
                health.probing = True
                try:
                    await health.pause_before_probe(self._pending(judge))
                    reset = getattr(adapter, "reset_circuit", None)
                    if reset is not None:
                        reset()
                    item = self._take(judge)
                    if item is None:  # nothing left to ask
                        health.answered()
                    elif item is not _YIELD:
                        await self._dispatch(judge, adapter, item)
                finally:
                    health.probing = False
                continue
            item = self._take(judge)
            if item is None:
                if self._active[judge] <= 0:
                    self._wake[judge].set()  # the judge is finished: release the idle workers
                    return
                await self._idle(judge)
                continue
            if item is _YIELD:
                await self.writer.wait_for_room()
                await anyio.lowlevel.checkpoint()
                continue
            await self._dispatch(judge, adapter, item)

    async def _idle(self, judge: str) -> None:
        """Wait for room in a cell, or for the next retry to be due."""
        wake = self._wake[judge]
        if wake.is_set():
            wake = self._wake[judge] = anyio.Event()
        retries = self._retries[judge]
        if not retries:
            await wake.wait()
            return
        with anyio.move_on_after(max(0.0, retries[0][0] - time.monotonic())):
            await wake.wait()

    def _pending(self, judge: str) -> int:
        return sum(len(run.outstanding) for run in self._by_judge[judge] if not run.done)

    async def _dispatch(self, judge: str, adapter: Adapter, item: Item) -> None:
        """Make the item's missing calls; commit and consume it, or queue it again."""
        progress = self.progress
        writer = self.writer
        in_flight = self._calls_in_flight
        to_commit: list[tuple[str, bytes, bytes]] = []
        shared = False
        failed: list[int] = []
        for n in item.missing:
            key = item.keys[n]
            twin = in_flight.get(key)
            if twin is not None:
                # The same request is already in flight for another cell
                # (e.g. identical pairs): share its answer, never pay twice.
                await twin.wait()
                if twin.result is None:  # the call raised: the run is failing
                    return
                if is_transient(twin.result):
                    failed.append(n)
                    continue
                item.results[n] = twin.result
                progress.calls_cached += 1
                shared = True
                if is_cacheable(twin.result):
                    # committed again with this item (same key, same bytes), so the
                    # item never counts before the answer it used is stored
                    to_commit.append((RESULTS_DB, key, encode_result(twin.result)))
                continue
            call = in_flight[key] = _SharedCall()
            progress.in_flight += 1
            result = None
            try:
                result = await adapter.complete(item.requests[n])
            finally:
                progress.in_flight -= 1
                call.finish(result)
                if result is None or not is_cacheable(result):
                    del in_flight[key]
            if self._account(judge, item, result):
                failed.append(n)
                continue
            item.results[n] = result
            if is_cacheable(result):
                to_commit.append((RESULTS_DB, key, encode_result(result)))
        if failed:
            # Pending: nothing is recorded as the item's outcome. The answers it
            # did get are stored now (they are answers), the rest asked again.
            if to_commit:
                await writer.submit(to_commit, callback=partial(self._release, tuple(k for _, k, _ in to_commit)))
            self._retry_later(judge, item, failed)
            return
        judged = self._judge(item)  # the row, built now: the item itself is released
        if to_commit or shared:
            # The item counts only once its answers are committed: it is
            # consumed in the commit callback (a shared answer's commit was
            # queued first; FIFO keeps the order). The worker moves on.
            # Until then a twin request finds the answer here, not in the cache.
            done = partial(self._committed, tuple(k for _, k, _ in to_commit), item.cell.cell_no, item.doc_index, judged)
            await writer.submit(to_commit, callback=done)
        else:
            self._consume(item.cell.cell_no, item.doc_index, judged)

    def _retry_later(self, judge: str, item: Item, failed: list[int]) -> None:
        for n in failed:
            item.results[n] = None
        item.missing = failed
        item.failures += 1
        self.progress.items_retried += 1
        self._retry_seq += 1
        due = time.monotonic() + self.failure_policy.retry_delay(item.failures)
        heapq.heappush(self._retries[judge], (due, self._retry_seq, item))

    def _release(self, keys: tuple[bytes, ...]) -> None:
        for key in keys:
            self._calls_in_flight.pop(key, None)

    def _committed(self, keys: tuple[bytes, ...], cell_no: int, doc_index: int, judged: Any) -> None:
        self._release(keys)
        self._consume(cell_no, doc_index, judged)

    def _account(self, judge: str, item: Item, result: CallResult) -> bool:
        """Count the call; True when it failed transiently (the item stays pending)."""
        progress = self.progress
        progress.calls_network += result.attempts > 0  # an open breaker answers without a call
        progress.prompt_tokens += result.usage.prompt_tokens
        progress.completion_tokens += result.usage.completion_tokens
        progress.cost_usd += result.cost_usd
        health = self._health[judge]
        if not is_transient(result):
            health.answered()
            return False
        fatal = fatal_message(judge, result)
        if fatal is not None:
            raise RunAborted(fatal)
        progress.calls_failed += 1
        kind = result.error_kind or "error"
        progress.failures_by_kind[kind] = progress.failures_by_kind.get(kind, 0) + 1
        health.failed(result)
        # kept for the record (raw text, error class), never as the item's outcome
        self.writer.submit_nowait([failure_item(self._run_key, item.cell.cell_no, item.doc_index, result)])
        return True

    # -- completion ------------------------------------------------------------
    def _judge(self, item: Item) -> tuple[tuple[str, bytes, bytes], bool, float | None]:
        """The item's verdict as (row write, ok?, score)."""
        run = self.runs[item.cell.cell_no]
        verdict = self.design.prompts[item.cell.prompt].verdict(tuple(item.results))
        ok = verdict.status == "ok" and verdict.score is not None
        return self._row_item(run, item, verdict), ok, verdict.score

    def _consume(self, cell_no: int, doc_index: int, judged: tuple[tuple[str, bytes, bytes], bool, float | None]) -> None:
        """Consume what is now in order for the cell (on the loop, synchronous)."""
        run = self.runs[cell_no]
        progress = self.progress
        progress.items_done += 1
        was_done = run.done
        run.buffer[doc_index] = judged
        outstanding = run.outstanding
        buffer = run.buffer
        writes: list[tuple[str, bytes, bytes]] = []
        while outstanding and outstanding[0] in buffer:
            index = outstanding.popleft()
            row_write, ok, score = buffer.pop(index)
            if run.done:
                progress.items_dropped += 1
                continue
            writes.append(row_write)
            run.rows += 1
            run.consumed_to = index + 1
            if ok:
                run.rule.update(score)  # type: ignore[arg-type]
                if run.rule.done:
                    run.done, run.reason = True, run.rule.reason
            else:
                run.failed += 1
                progress.failed_items += 1
        progress.rows_written += len(writes)
        if not run.done and run.exhausted and not outstanding:
            run.done, run.reason = True, "exhausted"
        if run.done and not was_done:
            writes.append(self._state_item(run))  # committed with (or after) the cell's last rows
            self.writer.submit_nowait(writes)
            self._cell_ended(run)
            return
        if writes:
            self.writer.submit_nowait(writes)
        if run.parked and not run.done and self._room(run):
            run.parked = False
            heapq.heappush(self._heaps[run.cell.judge], (run.issued, run.cell.cell_no))
            self._wake[run.cell.judge].set()

    def _finish(self, run: CellRun, reason: str) -> None:
        run.done, run.reason = True, reason
        self.writer.submit_nowait([self._state_item(run)])
        self._cell_ended(run)

    def _cell_ended(self, run: CellRun) -> None:
        judge = run.cell.judge
        self.progress.cells_done += 1
        self._active[judge] -= 1
        active = self._active[judge]
        if active and active * 2 <= self._window_basis[judge]:
            # Few cells left: widen their windows to keep the judge's concurrency busy.
            self._set_window(judge, self.design.judges[judge].concurrency)
            heap = self._heaps[judge]
            for other in self._by_judge[judge]:
                if other.parked and not other.done and self._room(other):
                    other.parked = False
                    heapq.heappush(heap, (other.issued, other.cell.cell_no))
        self._wake[judge].set()

    def _row_item(self, run: CellRun, item: Item, verdict: Any) -> tuple[str, bytes, bytes]:
        cell = run.cell
        judge = self.design.judges[cell.judge]
        row = make_row(
            run_id=self.run_id,
            judge=cell.judge,
            adapter=judge.adapter,
            model=judge.model,
            prompt_id=self.design.prompts[cell.prompt].id,
            prompt_version=self.prompt_versions[cell.prompt],
            cell=cell,
            doc_index=item.doc_index,
            pair=item.pair,
            verdict=verdict,
            results=item.results,
            keys=item.keys,
            cached=item.cached,
        )
        return (ROWS_DB, row_key(self._run_key, cell.cell_no, item.doc_index), encode_row(row))

    def _state_item(self, run: CellRun) -> tuple[str, bytes, bytes]:
        return (RUNS_DB, cell_state_key(self._run_key, run.cell.cell_no), self._state_encoder.encode(run.state()))


def _first_of(group: BaseExceptionGroup, kind: type[BaseException]) -> BaseException | None:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found = _first_of(exc, kind)
            if found is not None:
                return found
        elif isinstance(exc, kind):
            return exc
    return None
