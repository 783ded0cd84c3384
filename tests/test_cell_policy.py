"""engine.run.cell_policy on an in-memory corpus: which cell gets the next
document, windows, skipped documents, exhausted cells, retries."""

from __future__ import annotations

import time
from pathlib import Path

from engine.run.cell_policy import CellPolicy, CellRun
from memory_corpus import MemoryCorpus
from scheduler_harness import scripted_design


def policy_for(design, delay: float = 0.0):  # type: ignore[no-untyped-def]
    runs = [CellRun.fresh(design, cell) for cell in design.cells]
    ended: list[tuple[int, str]] = []

    def end(run: CellRun, reason: str) -> None:
        run.done, run.reason = True, reason
        ended.append((run.cell.cell_no, reason))

    policy = CellPolicy(design, runs, end, lambda failures: delay * failures)
    assert policy.start("sim")
    return policy, runs, ended


def consume_all(policy: CellPolicy, run: CellRun) -> None:
    """What the output stage does: consume every outstanding document."""
    while run.outstanding:
        run.outstanding.popleft()
        run.rule.update(50.0) if not run.rule.done else None
    policy.consumed(run)


def test_the_least_advanced_cell_gets_the_next_document(tmp_path: Path) -> None:
    design = scripted_design(tmp_path, window=1, concurrency=1)
    policy, runs, _ = policy_for(design)
    order = []
    for _ in range(3 * len(runs)):
        item = policy.issue("sim")
        if item is None:  # every cell has its one document outstanding
            for run in runs:
                consume_all(policy, run)
            item = policy.issue("sim")
        assert item is not None
        order.append(item.cell.cell_no)
    issued = [order.count(run.cell.cell_no) for run in runs]
    assert max(issued) - min(issued) <= 1 and sum(issued) == 3 * len(runs)
    # each round of issues visits every cell once
    assert sorted(order[: len(runs)]) == list(range(len(runs)))


def test_a_cell_never_has_more_outstanding_than_its_window(tmp_path: Path) -> None:
    design = scripted_design(tmp_path, stopping='kind = "paper"\nmin_docs = 3\nwindow = 2', window=3, concurrency=1)
    policy, runs, _ = policy_for(design)
    while policy.issue("sim") is not None:
        pass
    # window max(3, ceil(2 * 1 / 8)) = 3; min_docs 3 - 0 consumed = 3
    assert all(len(run.outstanding) == 3 and run.parked for run in runs)
    run = runs[0]
    run.outstanding.popleft()
    run.rule.update(50.0)
    assert policy.consumed(run) and not run.parked  # room again: back in the heap
    item = policy.issue("sim")
    assert item is not None and item.cell.cell_no == 0 and len(run.outstanding) == 3


def test_documents_without_a_pair_are_skipped_and_a_cell_that_runs_out_ends(tmp_path: Path) -> None:
    # 7 documents, every 3rd too short for position (1, 2): those are skipped
    corpus = MemoryCorpus(documents=7, short_every=3)
    design = scripted_design(tmp_path, stopping='kind = "fixed"\nn = 100', window=50, corpus=corpus, cell_documents="all")
    policy, runs, ended = policy_for(design)
    issued: dict[int, list[str]] = {}
    while (item := policy.issue("sim")) is not None:
        issued.setdefault(item.cell.cell_no, []).append(item.pair.doc_id)
    short = {run.cell.cell_no for run in runs if (run.cell.i, run.cell.j) == (1, 2)}
    for run in runs:
        docs = issued[run.cell.cell_no]
        if run.cell.cell_no in short:
            # rand hay also skips a document whose donor is too short
            assert len(docs) == 5 if run.cell.hay == "orig" else 0 < len(docs) <= 5
            assert all(doc not in ("doc-002", "doc-005") for doc in docs)
            assert run.exhausted  # found out while documents were outstanding: the output stage ends it
        else:
            assert len(docs) == 7 and run.parked  # its window is the 7 documents it can still consume
        assert run.next_doc == run.limit == 7
        consume_all(policy, run)
    assert policy.issue("sim") is None
    # a cell that runs out with nothing outstanding is ended by the policy
    assert sorted(ended) == [(n, "exhausted") for n in range(len(runs)) if n not in short]


def test_a_failed_item_waits_for_its_backoff_then_goes_first(tmp_path: Path) -> None:
    design = scripted_design(tmp_path)
    policy, runs, _ = policy_for(design, delay=0.05)
    item = policy.issue("sim")
    assert item is not None
    item.results = [None]
    policy.retry_later("sim", item, [0])
    assert item.missing == [0] and item.failures == 1
    assert item.doc_index in runs[item.cell.cell_no].outstanding  # its cell does not move past it
    assert policy.next_retry("sim") is None  # not due yet
    assert 0.0 < (policy.retry_due_in("sim") or 0.0) <= 0.05
    time.sleep(0.06)
    assert policy.next_retry("sim") is item
    policy.retry_later("sim", item, [0])
    assert policy.next_retry("sim") is None and policy.next_retry("sim", any_due=True) is item  # a probe takes it at once


def test_few_cells_left_widen_their_windows(tmp_path: Path) -> None:
    design = scripted_design(tmp_path, stopping='kind = "ci"\nepsilon = 5.0', window=1, concurrency=8)  # min_docs 1
    policy, runs, _ = policy_for(design)
    # 8 cells, concurrency 8: window max(1, ceil(16 / 8)) = 2
    assert all(policy.room(run) for run in runs)
    run = runs[0]
    run.outstanding.extend([0, 1])
    assert not policy.room(run)
    for other in runs[1:5]:  # half the cells end: windows widen to ceil(16 / 4) = 4
        other.done = True
        policy.cell_ended(other)
    assert policy.active("sim") == 4 and policy.room(run)


def test_a_gated_cell_opens_a_block_only_once_its_earlier_documents_are_consumed(tmp_path: Path) -> None:
    # a measured cascade's cell (Design.gate): blocks of 4 documents; every 3rd document has no pair
    corpus = MemoryCorpus(documents=12, short_every=3)
    design = scripted_design(tmp_path, stopping='kind = "fixed"\nn = 100', window=50, corpus=corpus, cell_documents="all")
    policy, runs, _ = policy_for(design)
    for run in runs:
        run.gate = 4
    gated = runs[0]
    blocks_seen = []
    while True:
        while (item := policy.issue("sim")) is not None:
            if item.cell.cell_no == 0:
                # nothing of an earlier block is outstanding when a block's document is issued
                assert all(d // 4 == item.doc_index // 4 for d in gated.outstanding), (item.doc_index, list(gated.outstanding))
                blocks_seen.append(item.doc_index // 4)
        if gated.exhausted or gated.done:
            break
        assert gated.parked and gated.outstanding  # held at the block's start, not ended
        consume_all(policy, gated)
    assert sorted(set(blocks_seen)) == [0, 1, 2] and len(blocks_seen) > 4
