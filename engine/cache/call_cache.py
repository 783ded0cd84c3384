"""The content-addressed call cache and its group-commit writer.

Key: `contracts.request_key(request)` (BLAKE2b-256 of the canonical request).
Value: the msgpack-encoded `CallResult`, in the store's "results" database.

What is cached: every *answer* a provider gave — status `ok` (with its raw
text; the prompt's parser decides later whether it is unparseable) and
`refused` (a content-filter refusal is the model's answer to that input).
Transient failures (`error`: timeouts, 5xx, rate limits, auth...) are never
cached, so a re-run retries them.

Writes go through ONE writer thread that commits whatever is queued in LMDB
transactions of up to `max_batch` items (group commit). A result is reported done only after the
transaction holding it committed: `GroupCommitWriter.commit()` returns then,
so a crash never loses a result the scheduler already counted. Reads happen
on the event loop (LMDB readers never block on the writer). The thread
(engine.cache.commit_thread) ships each batch to a commit process
(engine.cache.commit_process) that does the puts, so the event loop never fights
a writer for the GIL.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence

import anyio
import msgspec

from engine.cache.commit_process import CommitProcess
from engine.cache.commit_thread import CommitThread, Item, Submission
from engine.contracts import CallResult
from engine.cache.store import Store

RESULTS_DB = "results"
CACHEABLE_STATUSES = frozenset({"ok", "refused"})

_encode_result = msgspec.msgpack.Encoder().encode
_decode_result = msgspec.msgpack.Decoder(CallResult).decode


def is_cacheable(result: CallResult) -> bool:
    """Answers are cached; transient failures are not (a re-run retries them)."""
    return result.status in CACHEABLE_STATUSES


def encode_result(result: CallResult) -> bytes:
    return _encode_result(result)


def decode_result(raw: bytes) -> CallResult:
    return _decode_result(raw)


class CallCache:
    """Reads of the call cache (cheap, on the event loop)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._db = store.db(RESULTS_DB)

    def get(self, key: bytes) -> CallResult | None:
        with self.store.begin(db=self._db, buffers=True) as txn:
            raw = txn.get(key)
            return None if raw is None else _decode_result(raw)

    def get_many(self, keys: Sequence[bytes]) -> list[CallResult | None]:
        with self.store.begin(db=self._db, buffers=True) as txn:
            out: list[CallResult | None] = []
            for key in keys:
                raw = txn.get(key)
                out.append(None if raw is None else _decode_result(raw))
        return out

    def contains(self, key: bytes) -> bool:
        with self.store.begin(db=self._db, buffers=True) as txn:
            return txn.get(key) is not None

    def __len__(self) -> int:
        return self.store.count(RESULTS_DB)

    def items(self) -> Iterator[tuple[bytes, bytes]]:
        """(key, raw value) in key order."""
        return self.store.items_raw(RESULTS_DB)


# ---------------------------------------------------------------------------
# Group commit


class CommitError(RuntimeError):
    """The store could not commit a batch (disk full, store closed...)."""


# Submissions that may wait for a commit at most, by default and in all: a
# transaction per ~8,000 answers at the fastest judges, ~16 MB of rows held.
MAX_UNCOMMITTED = 8192


class GroupCommitWriter:
    """One writer thread; each wake-up commits everything queued, in
    transactions of at most `max_batch` items, through the commit process.

    Use as an async context manager on the event loop that awaits commits::

        async with GroupCommitWriter(store) as writer:
            await writer.commit([("results", key, raw)])   # returns once durable
            await writer.submit([("rows", key, raw)])      # fire-and-commit-later (bounded)

    `max_pending` bounds the `submit`/`commit` submissions queued but not
    yet committed: the loop side waits for room (no unbounded queue). A run
    submits each answer that way, so the bound is on answers a kill can lose
    (engine.run.runner.uncommitted_bound). Follow-ups made with `submit_nowait`
    from a commit callback (the rows of the answers just committed, a cell's
    state) cost nothing to lose and do not count against it; they are as
    many as the answers that cause them, and `max_outstanding` caps all
    submissions together. Submissions made during one loop iteration are
    handed to the thread together (one wake-up). Leaving the context flushes
    and joins the thread.
    """

    def __init__(
        self, store: Store, *, max_pending: int = MAX_UNCOMMITTED, max_outstanding: int = MAX_UNCOMMITTED, max_batch: int = 2048, gather_s: float = 0.05
    ) -> None:
        self.store = store
        # an idle writer waits this long for more background work (group commit):
        # each transaction costs CPU and an fdatasync whatever it holds
        self.gather_s = gather_s
        self.max_pending = max_pending
        self.max_outstanding = max_outstanding
        # max_batch = items per transaction: LMDB keeps a transaction's dirty
        # pages (a page per put) in the commit process's memory until it commits
        self._thread = CommitThread(store.path, max_batch, CommitProcess)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._failure: BaseException | None = None
        self._callback_error: BaseException | None = None
        self._outstanding = 0  # submissions handed over or staged, not yet committed
        self._bounded = 0  # of which counted against max_pending
        self._staged: list[Submission] = []  # handed to the thread when it is free
        self._handoff_scheduled = False  # a gather_s handoff is pending
        self._handoff_soon = False  # a next-iteration handoff is pending
        self._waiting_staged = 0  # staged submissions someone awaits (`commit`)
        self._writer_busy = False  # the thread holds a batch it has not reported back
        self._room: anyio.Event | None = None
        self._drained: anyio.Event | None = None
        self._failure_listeners: list[Callable[[], None]] = []

    @property
    def commits(self) -> int:
        """Transactions committed."""
        return self._thread.commits

    @property
    def items_committed(self) -> int:
        return self._thread.items_committed

    @property
    def commit_process(self) -> CommitProcess | None:
        """The commit process, once started (a writer that wrote nothing has none)."""
        return self._thread.process

    async def __aenter__(self) -> GroupCommitWriter:
        self._loop = asyncio.get_running_loop()
        self._thread.start(self._loop, self._committed)
        return self

    async def __aexit__(self, exc_type: object, *exc: object) -> None:
        # Shielded: even a cancelled run commits what it queued, then stops the thread.
        with anyio.CancelScope(shield=True):
            try:
                if self._outstanding:
                    self._drained = anyio.Event()
                    self._schedule_handoff()
                    await self._drained.wait()
            finally:
                await anyio.to_thread.run_sync(self._thread.close)
        if exc_type is None:
            self._raise_failure()

    def start_process(self) -> None:
        """Start the commit process now, in the writer thread, without waiting:
        for a run about to call the network, so that its first answers do not
        wait (uncommitted, lost to a kill) while the process starts. A writer
        never told to start it starts it on its first write."""
        self._thread.start_process()

    # -- loop side -----------------------------------------------------------
    async def commit(self, items: list[Item]) -> None:
        """Queue items and return once their transaction committed."""
        done = anyio.Event()
        submission = await self._enqueue(items, done, None)
        await done.wait()
        if submission.error is not None:
            raise CommitError(f"{self.store.path}: commit failed: {submission.error}") from submission.error

    async def submit(self, items: list[Item], callback: Callable[[], None] | None = None) -> None:
        """Queue items without waiting for the commit (`callback` runs on the
        loop after it). Waits only when `max_pending` submissions are queued."""
        await self._enqueue(items, None, callback)

    async def flush(self) -> None:
        """Wait until everything queued so far committed; raise if a batch failed."""
        if self._outstanding:
            self._drained = anyio.Event()
            self._schedule_handoff()
            await self._drained.wait()
        self._raise_failure()

    def on_failure(self, listener: Callable[[], None]) -> None:
        """Call `listener` (on the loop) when a commit first fails: those that
        wait for something else than the writer (a run's idle workers) learn
        of it, and `check` raises it."""
        self._failure_listeners.append(listener)

    def check(self) -> None:
        """Raise if a batch failed (what `submit` and `flush` raise)."""
        self._raise_failure()

    def _raise_failure(self) -> None:
        if self._callback_error is not None:
            error, self._callback_error = self._callback_error, None
            raise error
        if self._failure is not None:
            raise CommitError(f"{self.store.path}: commit failed: {self._failure}") from self._failure

    async def wait_for_room(self) -> None:
        """Wait while `max_pending` bounded submissions (or `max_outstanding` in all) are uncommitted."""
        while self._bounded >= self.max_pending or self._outstanding >= self.max_outstanding:
            if self._room is None:
                self._room = anyio.Event()
                self._schedule_handoff()  # someone waits: no gather delay
            await self._room.wait()
        self._raise_failure()

    def submit_nowait(self, items: list[Item], callback: Callable[[], None] | None = None) -> None:
        """Queue items without waiting for room: for follow-up writes made from
        a commit callback (the awaiting paths keep the total bounded)."""
        self._raise_failure()
        self._stage(Submission(items, None, callback, bounded=False))

    async def _enqueue(self, items: list[Item], done: anyio.Event | None, callback: Callable[[], None] | None) -> Submission:
        await self.wait_for_room()
        submission = Submission(items, done, callback)
        self._stage(submission)
        return submission

    def _stage(self, submission: Submission) -> None:
        self._outstanding += 1
        self._bounded += submission.bounded
        self._staged.append(submission)
        self._waiting_staged += submission.done is not None
        self._schedule_handoff()

    def _schedule_handoff(self) -> None:
        """Hand the staged submissions to the thread: on the next loop
        iteration when someone waits for them (`commit`, `flush`), else after
        `gather_s`, so that one transaction takes many background
        submissions. While the thread is committing, submissions pile up and
        go over together when it reports back (one wake-up per transaction)."""
        if self._writer_busy or not self._staged:
            return
        assert self._loop is not None
        if self._waiting_staged or self._drained is not None or self._room is not None:
            if not self._handoff_soon:
                self._handoff_soon = True
                self._loop.call_soon(self._handoff_now)
        elif not self._handoff_scheduled:
            self._handoff_scheduled = True
            self._loop.call_later(self.gather_s, self._handoff_later)

    def _handoff_now(self) -> None:
        self._handoff_soon = False
        self._handoff()

    def _handoff_later(self) -> None:
        self._handoff_scheduled = False
        self._handoff()

    def _handoff(self) -> None:
        if self._staged and not self._writer_busy:
            staged, self._staged = self._staged, []
            self._waiting_staged = 0
            self._writer_busy = True
            self._thread.hand_over(staged)

    def _committed(self, batch: list[Submission], error: BaseException | None, last: bool = True) -> None:
        if last:  # the thread is done with what it was handed
            self._writer_busy = False
            self._schedule_handoff()
        if error is not None and self._failure is None:
            self._failure = error
            for listener in self._failure_listeners:
                listener()
        for submission in batch:
            submission.error = error
            if submission.done is not None:
                submission.done.set()
            elif submission.callback is not None and error is None:
                try:
                    submission.callback()
                except BaseException as exc:  # re-raised on the loop side (next submit / flush)
                    if self._callback_error is None:
                        self._callback_error = exc
        self._outstanding -= len(batch)
        self._bounded -= sum(submission.bounded for submission in batch)
        if self._room is not None and self._bounded < self.max_pending and self._outstanding < self.max_outstanding:
            self._room.set()
            self._room = None
        if self._outstanding == 0 and self._drained is not None:
            self._drained.set()
            self._drained = None
