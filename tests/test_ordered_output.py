"""engine.run.ordered_output on an in-memory corpus and a real LMDB store:
committed before counted, consumed in document order, dropped past the
stopping point, end states."""

from __future__ import annotations

from pathlib import Path

import anyio

from engine.cache.call_cache import RESULTS_DB, GroupCommitWriter, encode_result
from engine.run.cell_policy import CellRun
from engine.contracts import CallResult
from engine.run.counters import Progress
from engine.run.ordered_output import OrderedOutput
from engine.run.results import iter_rows, load_cell_states
from engine.cache.store import Store
from tests.memory_corpus import MemoryCorpus
from tests.scheduler_harness import scripted_design

RUN_ID = "1122334455667788"


class Events:
    """The policy's side, recorded."""

    def __init__(self) -> None:
        self.consumed_runs: list[int] = []
        self.ended: list[int] = []

    def consumed(self, run: CellRun) -> bool:
        self.consumed_runs.append(run.cell.cell_no)
        return False

    def cell_ended(self, run: CellRun) -> None:
        self.ended.append(run.cell.cell_no)


def answered(item, score: int):  # type: ignore[no-untyped-def]
    item.results = [CallResult(status="ok", text=f"Score: {score}")]
    return item


def run_output(tmp_path: Path, body, stopping: str = 'kind = "fixed"\nn = 3'):  # type: ignore[no-untyped-def]
    store = Store(tmp_path / "store")
    design = scripted_design(tmp_path, stopping=stopping, corpus=MemoryCorpus(short_every=0))  # every document has pairs
    runs = [CellRun.fresh(design, cell) for cell in design.cells]
    events, woken, progress = Events(), [], Progress()

    async def main() -> None:
        async with GroupCommitWriter(store) as writer:
            output = OrderedOutput(design, runs, writer, run_id=RUN_ID, prompt_versions={"bands": "v"},
                                   progress=progress, events=events, wake=woken.append)
            await body(design, runs, output, store)
            await writer.flush()

    anyio.run(main)
    return store, runs, events, woken, progress


def test_completions_are_consumed_in_document_order_only(tmp_path: Path) -> None:
    async def body(design, runs, output, store):  # type: ignore[no-untyped-def]
        run = runs[0]
        items = [answered(design.item(run.cell, d), 60 + d) for d in range(3)]
        run.outstanding.extend(item.doc_index for item in items)
        for item in (items[2], items[1]):  # out of order: both wait in the buffer
            output.consume(0, item.doc_index, output.judge(item))
        assert run.rule.n == 0 and sorted(run.buffer) == [1, 2]
        output.consume(0, 0, output.judge(items[0]))  # now all three, in order
        assert run.rule.n == 3 and run.done and run.reason == "n_reached"

    store, runs, events, woken, progress = run_output(tmp_path, body)
    rows = list(iter_rows(store, bytes.fromhex(RUN_ID)))
    assert [(r.doc_index, r.score) for r in rows] == [(0, 60.0), (1, 61.0), (2, 62.0)]
    assert load_cell_states(store, bytes.fromhex(RUN_ID))[0].reason == "n_reached"  # the end state, with its rows
    assert events.ended == [0] and woken == ["sim"]
    assert progress.rows_written == 3 and progress.cells_done == 1
    store.close()


def test_completions_past_the_stopping_point_are_dropped(tmp_path: Path) -> None:
    async def body(design, runs, output, store):  # type: ignore[no-untyped-def]
        run = runs[1]
        items = [answered(design.item(run.cell, d), 50) for d in range(5)]
        run.outstanding.extend(item.doc_index for item in items)
        for item in reversed(items):
            output.consume(1, item.doc_index, output.judge(item))

    store, runs, events, _, progress = run_output(tmp_path, body)
    assert [r.doc_index for r in iter_rows(store, bytes.fromhex(RUN_ID))] == [0, 1, 2]
    assert progress.items_dropped == 2 and not runs[1].outstanding
    store.close()


def test_an_unparseable_answer_is_a_failed_row_and_the_cell_moves_on(tmp_path: Path) -> None:
    async def body(design, runs, output, store):  # type: ignore[no-untyped-def]
        run = runs[0]
        items = [answered(design.item(run.cell, d), 70) for d in range(4)]
        items[1].results = [CallResult(status="ok", text="I cannot say.")]
        run.outstanding.extend(item.doc_index for item in items)
        for item in items:
            output.consume(0, item.doc_index, output.judge(item))

    store, runs, _, _, progress = run_output(tmp_path, body)
    rows = list(iter_rows(store, bytes.fromhex(RUN_ID)))
    assert [(r.doc_index, r.status, r.score) for r in rows] == [(0, "ok", 70.0), (1, "unparseable", None), (2, "ok", 70.0), (3, "ok", 70.0)]
    assert runs[0].failed == 1 and progress.failed_items == 1 and runs[0].done
    store.close()


def test_an_item_counts_only_after_its_answers_are_committed(tmp_path: Path) -> None:
    seen: list[bool] = []
    released: list[tuple[bytes, ...]] = []

    async def body(design, runs, output, store):  # type: ignore[no-untyped-def]
        run = runs[0]
        item = answered(design.item(run.cell, 0), 80)
        run.outstanding.append(0)
        consume = output.consume

        def checked(cell_no, doc_index, judged):  # type: ignore[no-untyped-def]
            seen.append(store.get_raw(RESULTS_DB, item.keys[0]) is not None)
            consume(cell_no, doc_index, judged)

        output.consume = checked
        writes = [(RESULTS_DB, item.keys[0], encode_result(item.results[0]))]
        await output.complete(item, writes, False, released.append)
        assert run.rule.n == 0  # not yet: the commit has not landed
        await output.writer.flush()
        assert run.rule.n == 1

    store, _, _, _, _ = run_output(tmp_path, body)
    assert seen == [True] and len(released) == 1
    store.close()
