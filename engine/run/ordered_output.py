"""The output stage: judged items are committed, then consumed in document order.

- Verdict and row: an item's answers become a verdict (the prompt's
  parser) and its result row as soon as they are complete, so the item
  itself is released.
- Committed before counted: an item whose answers came from the network
  (or from a twin in flight) counts only once they are committed: it is
  consumed in the commit's callback, on the loop (the group-commit writer
  keeps submissions in order, so an answer shared from another item is
  stored first).
- In order: each cell consumes completions strictly in document-index
  order (out-of-order ones wait in the cell's buffer); rows are stored for
  the consumed prefix only, so the stopping point and the data do not
  depend on timing. Completions past the stopping point are dropped (their
  calls stay cached).
- A cell's end state is written with (or after) its last rows.

It decides nothing about which document comes next (engine.run.cell_policy) and
makes no call (engine.run.dispatcher).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from engine.cache.call_cache import GroupCommitWriter
from engine.run.cell_policy import CellRun
from engine.run.counters import Progress
from engine.run.design import Design, Item
from engine.run.dispatcher import Write
from engine.run.resume import state_write
from engine.run.results import ROWS_DB, encode_row, make_row, row_key

# (row write, ok?, score): an item's outcome, waiting for its turn
Judged = tuple[Write, bool, "float | None"]
Release = Callable[[tuple[bytes, ...]], None]  # answers committed: forget them in flight


class CellEvents(Protocol):
    """What the policy hears from the output stage."""

    def consumed(self, run: CellRun) -> bool: ...

    def cell_ended(self, run: CellRun) -> None: ...


class OrderedOutput:
    def __init__(
        self,
        design: Design,
        runs: list[CellRun],
        writer: GroupCommitWriter,
        *,
        run_id: str,
        prompt_versions: dict[str, str],
        progress: Progress,
        events: CellEvents,
        wake: Callable[[str], None],
    ) -> None:
        self.design = design
        self.runs = runs
        self.writer = writer
        self.run_id = run_id
        self._run_key = bytes.fromhex(run_id)
        self.prompt_versions = prompt_versions
        self.progress = progress
        self.events = events  # the policy
        self.wake = wake  # called with the judge when a cell got room or ended

    # -- an item's outcome -----------------------------------------------------------
    def judge(self, item: Item) -> Judged:
        """The item's verdict as (row write, ok?, score)."""
        cell = item.cell
        verdict = self.design.prompts[cell.prompt].verdict(tuple(item.results))
        ok = verdict.status == "ok" and verdict.score is not None
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
        return (ROWS_DB, row_key(self._run_key, cell.cell_no, item.doc_index), encode_row(row)), ok, verdict.score

    async def complete(self, item: Item, writes: list[Write], shared: bool, release: Release) -> None:
        """Commit the item's answers, then consume it (`release(keys)` runs first)."""
        judged = self.judge(item)  # the row, built now: the item itself is released
        if writes or shared:
            # Until the commit lands a twin request finds the answer in flight, not in the cache.
            keys = tuple(k for _, k, _ in writes)
            await self.writer.submit(writes, callback=partial(self._committed, release, keys, item.cell.cell_no, item.doc_index, judged))
        else:
            self.consume(item.cell.cell_no, item.doc_index, judged)

    def _committed(self, release: Release, keys: tuple[bytes, ...], cell_no: int, doc_index: int, judged: Judged) -> None:
        release(keys)
        self.consume(cell_no, doc_index, judged)

    # -- in document order -------------------------------------------------------------
    def consume(self, cell_no: int, doc_index: int, judged: Judged) -> None:
        """Consume what is now in order for the cell (on the loop, synchronous)."""
        run = self.runs[cell_no]
        progress = self.progress
        progress.items_done += 1
        was_done = run.done
        run.buffer[doc_index] = judged
        outstanding = run.outstanding
        buffer = run.buffer
        writes: list[Write] = []
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
            writes.append(state_write(self._run_key, run))  # committed with (or after) the cell's last rows
            self.writer.submit_nowait(writes)
            self._ended(run)
            return
        if writes:
            self.writer.submit_nowait(writes)
        if run.parked and self.events.consumed(run):
            self.wake(run.cell.judge)

    def end(self, run: CellRun, reason: str) -> None:
        """End a cell that has nothing outstanding (its documents ran out)."""
        run.done, run.reason = True, reason
        self.writer.submit_nowait([state_write(self._run_key, run)])
        self._ended(run)

    def _ended(self, run: CellRun) -> None:
        self.progress.cells_done += 1
        self.events.cell_ended(run)
        self.wake(run.cell.judge)
