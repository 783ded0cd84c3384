"""The group-commit writer's thread: it takes the submissions the event loop
hands over, commits them in transactions of at most `max_batch` items
through the commit process, and reports each transaction back to the loop.

The loop side (staging, the gather window, bounded room, flushes) is
engine.cache.call_cache.GroupCommitWriter; this is the part that runs off the loop.
The thread only ships each batch to the commit process (engine.cache.commit_process)
and blocks on its reply with the GIL released.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from engine.cache.commit_process import CommitProcess

Item = tuple[str, bytes, bytes]  # (database, key, value)


class Submission:
    """Items to commit in one transaction, and who waits for them: an event
    (`commit`) or a callback to run on the loop after the commit (`submit`).
    `bounded`: it counts against the writer's `max_pending` (a follow-up
    made with `submit_nowait` does not)."""

    __slots__ = ("items", "done", "error", "callback", "bounded")

    def __init__(
        self, items: list[Item], done: anyio.Event | None, callback: Callable[[], None] | None, bounded: bool = True
    ) -> None:
        self.items = items
        self.done = done
        self.error: BaseException | None = None
        self.callback = callback
        self.bounded = bounded


# (submissions of one transaction, the error or None, the last transaction of the handover)
Report = Callable[[list[Submission], BaseException | None, bool], None]

_STOP = object()
_START = object()


def transactions(submissions: list[Submission], max_items: int) -> list[list[Submission]]:
    """Whole submissions in runs of at most `max_items` items (a bigger one alone)."""
    runs: list[list[Submission]] = []
    run: list[Submission] = []
    size = 0
    for submission in submissions:
        if run and size + len(submission.items) > max_items:
            runs.append(run)
            run, size = [], 0
        run.append(submission)
        size += len(submission.items)
    if run:
        runs.append(run)
    return runs


class CommitThread:
    """One thread committing handed-over submissions through a commit process
    it starts on demand (`start_process`, else on its first write: a finished
    re-run needs none). `open_process(store_path)` makes that process."""

    def __init__(self, store_path: Path, max_batch: int, open_process: Callable[[Path], CommitProcess]) -> None:
        self.store_path = store_path
        self.max_batch = max_batch
        self._open_process = open_process
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        # the loop hands a list of submissions over with no call in between
        self.hand_over: Callable[[list[Submission]], None] = self._queue.put
        self._thread: threading.Thread | None = None
        self.process: CommitProcess | None = None  # started on demand
        self.commits = 0  # transactions committed
        self.items_committed = 0

    def start(self, loop: asyncio.AbstractEventLoop, report: Report) -> None:
        """Start the thread; `report` runs on `loop` after each transaction."""
        self._thread = threading.Thread(target=self._run, args=(loop, report), name="needlejudge-commit", daemon=True)
        self._thread.start()

    def start_process(self) -> None:
        """Start the commit process in the thread, without waiting for it."""
        self._queue.put(_START)

    def close(self) -> None:
        """Blocking: stop the thread after what it was handed, then the commit process."""
        self._queue.put(_STOP)
        if self._thread is not None:
            self._thread.join()
        if self.process is not None:
            self.process.close()

    def _run(self, loop: asyncio.AbstractEventLoop, report: Report) -> None:
        q = self._queue
        while True:
            staged = q.get()
            if staged is _STOP:
                return
            if staged is _START:
                if self.process is None:
                    try:
                        self.process = self._open_process(self.store_path)
                    except Exception:  # the first commit tries again and reports the cause
                        pass
                continue
            chunks = transactions(staged, self.max_batch)
            for n, chunk in enumerate(chunks, 1):
                error: BaseException | None = None
                try:
                    if self.process is None:
                        self.process = self._open_process(self.store_path)
                    items = [item for submission in chunk for item in submission.items]
                    self.process.commit(items)  # grows the map itself
                    self.commits += 1
                    self.items_committed += len(items)
                except BaseException as exc:  # reported to every waiter on the loop
                    error = exc
                try:
                    loop.call_soon_threadsafe(report, chunk, error, n == len(chunks))
                except RuntimeError:  # loop closed: nobody is waiting any more
                    return
