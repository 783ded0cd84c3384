"""Resuming a run: every cell's live state rebuilt from what the store holds.

The one resume path: a cell that ended is taken from its stored end state;
any other cell replays its stored rows (its consumed prefix, in document
order) into a fresh stopping rule, which continues exactly where the
interrupted run stopped. Nothing else is saved.

A stored row of a transient error (written by versions that recorded a
failed call as the item's outcome) is not replayed: the cell resumes at
that document, and the row and those after it are dropped (`drop_stale`),
so the re-run asks it again and the data end as a fault-free run's.
"""

from __future__ import annotations

import msgspec

from engine.run.cell_policy import CellRun
from engine.contracts import ResultRow
from engine.run.design import Design
from engine.run.judge_health import ITEM_ERROR_KINDS
from engine.run.results import RUNS_DB, cell_rows, cell_state_key, drop_rows_from, load_cell_states
from engine.cache.store import Store

_encode_state = msgspec.msgpack.Encoder().encode


class Restored(msgspec.Struct, kw_only=True):
    runs: list[CellRun]
    stale: list[tuple[int, int]]  # (cell_no, doc_index): stored rows to drop from
    cells_reused: int = 0  # ended in an earlier run
    rows_reused: int = 0


def _transient(row: ResultRow) -> bool:
    return row.status == "error" and row.error_kind not in ITEM_ERROR_KINDS


def restore_runs(design: Design, store: Store, run_key: bytes) -> Restored:
    """Every cell's run, continuing from the store (read only)."""
    states = load_cell_states(store, run_key)
    restored = Restored(runs=[], stale=[])
    for cell in design.cells:
        run = CellRun.fresh(design, cell)
        state = states.get(cell.cell_no)
        if state is not None and not (state.failed and _first_transient(store, run_key, cell.cell_no) is not None):
            run.done, run.reason = True, state.reason
            run.rows, run.failed = state.rows, state.failed
            run.next_doc = run.consumed_to = state.next_doc
            restored.cells_reused += 1
        else:
            for row in cell_rows(store, run_key, cell.cell_no):
                if _transient(row):
                    restored.stale.append((cell.cell_no, row.doc_index))
                    break
                run.rows += 1
                run.issued += 1
                run.next_doc = run.consumed_to = row.doc_index + 1
                design.replayed(cell, row.doc_index, row.members, row.member_scores)
                if row.status == "ok" and row.score is not None:
                    run.rule.update(row.score)
                else:
                    run.failed += 1
            if run.rule.done:
                run.done, run.reason = True, run.rule.reason
            elif run.next_doc >= run.limit:
                run.done, run.reason = True, "exhausted"
        restored.rows_reused += run.rows
        restored.runs.append(run)
    return restored


def _first_transient(store: Store, run_key: bytes, cell_no: int) -> int | None:
    for row in cell_rows(store, run_key, cell_no):
        if _transient(row):
            return row.doc_index
    return None


def drop_stale(store: Store, run_key: bytes, stale: list[tuple[int, int]]) -> None:
    for cell_no, doc_index in stale:
        drop_rows_from(store, run_key, cell_no, doc_index)


def state_write(run_key: bytes, run: CellRun) -> tuple[str, bytes, bytes]:
    """The store write recording how a cell ended."""
    return (RUNS_DB, cell_state_key(run_key, run.cell.cell_no), _encode_state(run.state()))


def ended_without_state(store: Store, run_key: bytes, runs: list[CellRun]) -> list[CellRun]:
    """Cells that ended during the replay but have no stored state yet."""
    return [run for run in runs if run.done and run.reason and store.get_raw(RUNS_DB, cell_state_key(run_key, run.cell.cell_no)) is None]
