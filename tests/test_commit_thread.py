"""engine.cache.commit_thread: transactions of whole submissions, committed by the
thread through a real commit process and reported back on the loop."""

from __future__ import annotations

import asyncio
from pathlib import Path

import anyio

from engine.cache.commit_process import CommitProcess
from engine.cache.commit_thread import CommitThread, Submission, transactions
from engine.cache.store import Store


def submission(size: int, tag: int = 0) -> Submission:
    return Submission([("rows", bytes([tag, k]) * 16, b"x") for k in range(size)], None, None)


def test_transactions_keep_submissions_whole_and_bounded() -> None:
    sizes = [3, 3, 3, 4, 15, 1, 10, 1]
    submissions = [submission(n, tag) for tag, n in enumerate(sizes)]
    runs = transactions(submissions, max_items=10)
    # 3+3+3 (a fourth would make 13); 4; 15 alone (bigger than a transaction); 1; 10; 1
    assert [[len(s.items) for s in run] for run in runs] == [[3, 3, 3], [4], [15], [1], [10], [1]]
    assert [s for run in runs for s in run] == submissions  # each once, in order
    assert transactions([], max_items=10) == []


def test_the_thread_commits_a_handover_and_reports_each_transaction_on_the_loop(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    handed = [submission(3, tag) for tag in range(7)] + [submission(12, 99)]
    reports: list[tuple[list[int], BaseException | None, bool, int]] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        done = anyio.Event()
        thread = CommitThread(store.path, 9, CommitProcess)

        def report(chunk: list[Submission], error: BaseException | None, last: bool) -> None:
            assert asyncio.get_running_loop() is loop  # on the loop, not in the thread
            # every submission of the chunk is readable when its report runs
            readable = sum(store.get_raw("rows", key) is not None for s in chunk for _, key, _ in s.items)
            reports.append(([len(s.items) for s in chunk], error, last, readable))
            if last:
                done.set()

        thread.start(loop, report)
        thread.start_process()
        thread.hand_over(handed)
        await done.wait()
        await anyio.to_thread.run_sync(thread.close)
        assert (thread.commits, thread.items_committed) == (4, 33)

    anyio.run(main)
    assert reports == [([3, 3, 3], None, False, 9), ([3, 3, 3], None, False, 9), ([3], None, False, 3), ([12], None, True, 12)]
    assert store.count("rows") == 33
    store.close()


def test_a_failed_transaction_is_reported_with_its_error_and_the_next_one_still_commits(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    bad = Submission([("no-such-db", b"k" * 32, b"v")], None, None)
    reports: list[tuple[int, str | None, bool]] = []

    async def main() -> None:
        done = anyio.Event()
        thread = CommitThread(store.path, 1, CommitProcess)

        def report(chunk: list[Submission], error: BaseException | None, last: bool) -> None:
            reports.append((len(chunk), None if error is None else type(error).__name__, last))
            if last:
                done.set()

        thread.start(asyncio.get_running_loop(), report)
        thread.hand_over([bad, submission(1)])
        await done.wait()
        await anyio.to_thread.run_sync(thread.close)
        assert thread.commits == 1

    anyio.run(main)
    assert reports == [(1, "CommitProcessError", False), (1, None, True)]
    assert store.count("rows") == 1
    store.close()
