"""engine.run.resume, the one resume path, on an in-memory corpus and a real
LMDB store: ended cells from their states, open cells by replaying their
stored rows into a fresh rule (which then continues exactly as an
uninterrupted one), stored transient failures dropped to be asked again."""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np
import pytest

from engine.contracts import Verdict
from engine.run.design import Design
from engine.run.resume import drop_stale, ended_without_state, restore_runs, state_write
from engine.run.results import ROWS_DB, cell_rows, encode_row, load_cell_states, make_row, row_key
from engine.cache.store import Store
from tests.memory_corpus import MemoryCorpus
from tests.scheduler_harness import scripted_design

RUN_KEY = bytes.fromhex("99887766554433aa")


def store_rows(store: Store, design: Design, cell_no: int, outcomes: list[tuple[str, float | None, str]]) -> None:
    """Rows for a cell's first documents: (status, score, error_kind) each."""
    cell = design.cells[cell_no]
    writes = []
    for doc_index, (status, score, kind) in enumerate(outcomes):
        item = design.item(cell, doc_index)
        assert item is not None
        verdict = Verdict(status=status, score=score, raw_score=score, scale="0-100", detail=kind)  # type: ignore[arg-type]
        row = make_row(run_id=RUN_KEY.hex(), judge=cell.judge, adapter="scripted", model="m", prompt_id="bands",
                       prompt_version="v", cell=cell, doc_index=doc_index, pair=item.pair, verdict=verdict,
                       results=[], keys=item.keys, cached=False)
        if kind:
            row = msgspec.structs.replace(row, error_kind=kind)
        writes.append((row_key(RUN_KEY, cell.cell_no, doc_index), encode_row(row)))
    store.put_many_raw(ROWS_DB, writes)


@pytest.fixture
def store(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = Store(tmp_path / "store")
    yield s
    s.close()


def test_open_cells_replay_their_rows_and_ended_cells_keep_their_state(store: Store, tmp_path: Path) -> None:
    design = scripted_design(tmp_path, stopping='kind = "fixed"\nn = 4', corpus=MemoryCorpus(short_every=0))
    store_rows(store, design, 0, [("ok", 70.0, ""), ("refused", None, "content_filter"), ("ok", 75.0, "")])
    store_rows(store, design, 1, [("ok", 60.0, "")] * 4)
    ended = restore_runs(design, store, RUN_KEY)
    assert [r.cell.cell_no for r in ended_without_state(store, RUN_KEY, ended.runs)] == [1]  # ended during replay
    store.put_many_raw("runs", [state_write(RUN_KEY, ended.runs[1])[1:]])

    restored = restore_runs(design, store, RUN_KEY)
    open_run, ended_run = restored.runs[0], restored.runs[1]
    assert (open_run.rule.n, open_run.rows, open_run.failed, open_run.next_doc, open_run.done) == (2, 3, 1, 3, False)
    assert open_run.rule.mean == 72.5
    assert (ended_run.done, ended_run.reason, ended_run.rows, ended_run.rule.n) == (True, "n_reached", 4, 0)  # not replayed
    assert (restored.cells_reused, restored.rows_reused, restored.stale) == (1, 7, [])
    assert ended_without_state(store, RUN_KEY, restored.runs) == []


def test_a_stored_transient_failure_is_dropped_and_asked_again(store: Store, tmp_path: Path) -> None:
    design = scripted_design(tmp_path, stopping='kind = "fixed"\nn = 4', corpus=MemoryCorpus(short_every=0))
    # written by an older version: a timeout stored as the outcome, the cell moved on past it
    store_rows(store, design, 0, [("ok", 70.0, ""), ("error", None, "timeout"), ("ok", 71.0, ""), ("ok", 72.0, ""), ("ok", 73.0, "")])
    store_rows(store, design, 2, [("ok", 50.0, ""), ("error", None, "context_length"), ("ok", 51.0, "")])  # about the item: kept
    restored = restore_runs(design, store, RUN_KEY)
    run = restored.runs[0]
    assert restored.stale == [(0, 1)]
    assert (run.rule.n, run.next_doc, run.done) == (1, 1, False)  # resumes at the failed document
    assert restored.runs[2].failed == 1 and restored.runs[2].next_doc == 3
    drop_stale(store, RUN_KEY, restored.stale)
    assert [r.doc_index for r in cell_rows(store, RUN_KEY, 0)] == [0]
    assert [r.doc_index for r in cell_rows(store, RUN_KEY, 2)] == [0, 1, 2]


def test_an_ended_cell_with_a_stored_transient_failure_is_reopened(store: Store, tmp_path: Path) -> None:
    design = scripted_design(tmp_path, stopping='kind = "fixed"\nn = 2', corpus=MemoryCorpus(short_every=0))
    store_rows(store, design, 0, [("ok", 70.0, ""), ("error", None, "server"), ("ok", 71.0, "")])
    run = restore_runs(design, store, RUN_KEY).runs[0]
    run.done, run.reason, run.rows, run.failed, run.consumed_to = True, "n_reached", 3, 1, 3
    store.put_many_raw("runs", [state_write(RUN_KEY, run)[1:]])
    restored = restore_runs(design, store, RUN_KEY)
    assert restored.stale == [(0, 1)] and not restored.runs[0].done and restored.cells_reused == 0
    drop_stale(store, RUN_KEY, restored.stale)
    assert 0 not in load_cell_states(store, RUN_KEY)  # the end state goes with the dropped rows


RESUMABLE = [
    'kind = "paper"',
    'kind = "fixed"\nn = 250',
    'kind = "ci"\nepsilon = 3.0\nmethod = "hedged"',
    'kind = "ci"\nepsilon = 3.0\nmethod = "eb"',
]


@pytest.mark.parametrize("stopping", RESUMABLE, ids=["paper", "fixed", "ci-hedged", "ci-eb"])
def test_a_rule_replayed_from_stored_rows_continues_exactly(stopping: str, store: Store, tmp_path: Path) -> None:
    """Moved from the rules' own state save/restore (removed): the kept path
    replays the stored prefix, then continues as an uninterrupted rule."""
    rng = np.random.default_rng([4, 12])
    scores = (rng.beta(2.0, 3.0, size=3000) * 100.0).tolist()
    design = scripted_design(tmp_path, stopping=stopping, corpus=MemoryCorpus(documents=400, short_every=0))
    straight = design.new_rule(design.cells[0])
    stop = next(n for n, score in enumerate(scores, 1) if (straight.update(score), straight.done)[1])
    cut = 95  # the paper rule's window of means is full here, the CSs still wide
    assert stop > cut + 1

    store_rows(store, design, 0, [("ok", score, "") for score in scores[:cut]])
    run = restore_runs(design, store, RUN_KEY).runs[0]
    assert run.rule.n == cut and not run.done and run.next_doc == cut
    resumed = run.rule
    more = next(n for n, score in enumerate(scores[cut:], 1) if (resumed.update(score), resumed.done)[1])
    assert cut + more == stop
    assert (resumed.reason, resumed.mean, resumed.n) == (straight.reason, straight.mean, straight.n)
    if stopping.startswith('kind = "ci"'):
        assert resumed.interval() == straight.interval()  # type: ignore[attr-defined]
