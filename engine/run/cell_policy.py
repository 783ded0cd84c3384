"""The scheduling policy: which cell gets a judge's next document.

- Fair: the next item goes to the unconverged cell of that judge with the
  fewest documents issued (a heap of (issued, cell_no)).
- Windows: each cell has a small window of outstanding documents (issued,
  not yet consumed), widened to the documents its rule needs for sure
  (min_docs) and, while few cells are left, to spread the judge's
  concurrency over them. A cell without room is parked until a
  consumption (or the widening) gives it room again.
- Lazy: an item (pair, render, key) is built only when it is issued.
- Blocks: a measured cascade's cell (engine.run.panel) issues a block's
  first document only once every earlier one is consumed, so the flag it
  decides for that block sees all of them, whatever the timing.
- Retries first: an item whose call failed transiently waits in the
  judge's retry heap until its backoff is over, then goes before any new
  document (its cell does not move past it meanwhile: it stays
  outstanding).

Synchronous and on the event loop; it knows nothing of calls, the cache or
the store (engine.run.dispatcher, engine.run.ordered_output).
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from engine.run.design import Cell, Design, Item
from engine.run.results import CellState
from engine.stopping.rules import StoppingRule


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
        "gate",
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
        self.buffer: dict[int, Any] = {}  # judged, waiting for their turn
        self.done = False
        self.reason = ""
        self.rows = 0
        self.failed = 0
        self.parked = False
        self.exhausted = False
        self.consumed_to = 0  # one past the last consumed document index
        self.gate = 0  # >0: documents per block of a measured cascade (Design.gate)

    @classmethod
    def fresh(cls, design: Design, cell: Cell) -> CellRun:
        run = cls(cell, design.new_rule(cell), design.doc_limit(cell), design.doc_cap(cell), design.min_docs(cell))
        run.gate = design.gate(cell)
        return run

    def held(self) -> bool:
        """Its next document opens a block while earlier ones are outstanding."""
        return self.gate > 0 and bool(self.outstanding) and self.outstanding[0] < self.next_doc - self.next_doc % self.gate

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


class CellPolicy:
    """Per judge: the heap of cells with room, their windows, and the retry heap.

    `end_cell(run, reason)` is called when a cell runs out of documents with
    nothing outstanding (the output stage records the end)."""

    def __init__(self, design: Design, runs: list[CellRun], end_cell: Callable[[CellRun, str], None], retry_delay: Callable[[int], float]) -> None:
        self.design = design
        self.runs = runs
        self._end_cell = end_cell
        self._retry_delay = retry_delay
        self._by_judge: dict[str, list[CellRun]] = {name: [] for name in design.judges}
        for run in runs:
            self._by_judge[run.cell.judge].append(run)
        self._heaps: dict[str, list[tuple[int, int]]] = {}
        self._active: dict[str, int] = {}
        self._window: dict[str, int] = {}
        self._window_basis: dict[str, int] = {}
        # per judge: items whose call failed transiently, (due, seq, item), a heap
        self.retries: dict[str, list[tuple[float, int, Item]]] = {}
        self._retry_seq = 0

    # -- setup -----------------------------------------------------------------
    def start(self, judge: str) -> bool:
        """Prepare the judge's heap; False when none of its cells is open."""
        pending = [run for run in self._by_judge[judge] if not run.done]
        if not pending:
            return False
        self._active[judge] = len(pending)
        self._set_window(judge)
        heap = self._heaps[judge] = [(run.issued, run.cell.cell_no) for run in pending]
        heapq.heapify(heap)
        self.retries[judge] = []
        return True

    def active(self, judge: str) -> int:
        """The judge's cells still open."""
        return self._active[judge]

    def pending(self, judge: str) -> int:
        """Documents of the judge issued and not yet consumed."""
        return sum(len(run.outstanding) for run in self._by_judge[judge] if not run.done)

    def _set_window(self, judge: str) -> None:
        active = max(1, self._active[judge])
        concurrency = self.design.judges[judge].concurrency
        self._window[judge] = max(self.design.config.window, math.ceil(2 * concurrency / active))
        self._window_basis[judge] = active

    def room(self, run: CellRun) -> bool:
        if run.held():
            return False
        needed = run.rule.n
        allowed = max(self._window[run.cell.judge], run.min_docs - needed)
        # Never more outstanding than the cell can still consume (fixed n, max_docs).
        allowed = min(allowed, max(1, run.cap - needed))
        return len(run.outstanding) < allowed

    # -- issuing -----------------------------------------------------------------
    def next_retry(self, judge: str, *, any_due: bool = False) -> Item | None:
        """A failed item whose backoff is over (the earliest, if `any_due`)."""
        retries = self.retries[judge]
        if retries and (any_due or retries[0][0] <= time.monotonic()):
            return heapq.heappop(retries)[2]
        return None

    def retry_due_in(self, judge: str) -> float | None:
        retries = self.retries[judge]
        return None if not retries else max(0.0, retries[0][0] - time.monotonic())

    def issue(self, judge: str) -> Item | None:
        """The next document of the judge's least-advanced open cell with
        room, as an item; None when no cell has room now."""
        heap = self._heaps[judge]
        runs = self.runs
        while heap:
            _, cell_no = heapq.heappop(heap)
            run = runs[cell_no]
            if run.done:
                continue
            item = self.issue_in(run)
            if item is None:
                if not run.done and not run.exhausted:  # held at a block's start: a consumption unparks it
                    run.parked = True
                continue
            if self.room(run):
                heapq.heappush(heap, (run.issued, cell_no))
            else:
                run.parked = True
            return item
        return None

    def issue_in(self, run: CellRun) -> Item | None:
        """The cell's next document as an item (it becomes outstanding); None
        when its documents ran out (the cell ends once nothing is outstanding).
        The synchronous workers reach it through `issue`; a batch judge
        (engine.run.batch.judge) calls it for the documents its wave planned."""
        item = None
        design = self.design
        while item is None and run.next_doc < run.limit:
            if run.held():
                return None
            item = design.item(run.cell, run.next_doc)
            run.next_doc += 1
        if item is None:
            run.exhausted = True
            if not run.outstanding:
                self._end_cell(run, "exhausted")
            return None
        run.issued += 1
        run.outstanding.append(item.doc_index)
        return item

    def retry_later(self, judge: str, item: Item, failed: list[int]) -> None:
        """Queue an item whose calls `failed` transiently (it stays outstanding)."""
        for n in failed:
            item.results[n] = None
        item.missing = failed
        item.failures += 1
        self._retry_seq += 1
        due = time.monotonic() + self._retry_delay(item.failures)
        heapq.heappush(self.retries[judge], (due, self._retry_seq, item))

    # -- feedback from the output stage ---------------------------------------------
    def consumed(self, run: CellRun) -> bool:
        """A consumption may have given the cell room: True when it was unparked."""
        if run.parked and not run.done and self.room(run):
            run.parked = False
            heapq.heappush(self._heaps[run.cell.judge], (run.issued, run.cell.cell_no))
            return True
        return False

    def cell_ended(self, run: CellRun) -> None:
        judge = run.cell.judge
        self._active[judge] -= 1
        active = self._active[judge]
        if active and active * 2 <= self._window_basis[judge]:
            # Few cells left: widen their windows to keep the judge's concurrency busy.
            self._set_window(judge)
            heap = self._heaps[judge]
            for other in self._by_judge[judge]:
                if other.parked and not other.done and self.room(other):
                    other.parked = False
                    heapq.heappush(heap, (other.issued, other.cell.cell_no))
