"""engine.commit_process: the process that commits the group-commit writer's batches."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from engine.cache import RESULTS_DB, CommitError, GroupCommitWriter
from engine.commit_process import CommitProcess, CommitProcessError
from engine.store import Store


def test_a_batch_is_readable_here_once_commit_returns(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    process = CommitProcess(store.path)
    try:
        for n in range(20):
            process.commit([(RESULTS_DB, n.to_bytes(32, "big"), b"v%d" % n), ("rows", b"r" * 32, b"row%d" % n)])
            assert store.get_raw(RESULTS_DB, n.to_bytes(32, "big")) == b"v%d" % n
            assert store.get_raw("rows", b"r" * 32) == b"row%d" % n
    finally:
        assert process.close() == 0
    assert store.count(RESULTS_DB) == 20
    store.close()


def test_a_failed_batch_is_reported_with_its_cause_and_commits_nothing(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    process = CommitProcess(store.path)
    try:
        with pytest.raises(CommitProcessError, match="no-such-db"):
            process.commit([(RESULTS_DB, b"a" * 32, b"kept out"), ("no-such-db", b"k" * 32, b"v")])
        assert store.get_raw(RESULTS_DB, b"a" * 32) is None  # one transaction: all or nothing
        process.commit([(RESULTS_DB, b"b" * 32, b"next batch")])  # the process goes on
        assert store.get_raw(RESULTS_DB, b"b" * 32) == b"next batch"
    finally:
        assert process.close() == 0
    store.close()


def test_a_killed_commit_process_fails_the_waiting_commit_and_the_store_recovers(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    pids: list[int] = []

    async def main() -> None:
        async with GroupCommitWriter(store) as writer:
            await writer.commit([(RESULTS_DB, b"a" * 32, b"before")])
            assert writer._process is not None
            pids.append(writer._process.pid)
            os.kill(writer._process.pid, signal.SIGKILL)
            await writer.commit([(RESULTS_DB, b"b" * 32, b"after the kill")])

    with pytest.raises(CommitError, match=r"commit process \(pid \d+\) exited with code -9"):
        anyio.run(main)
    assert store.get_raw(RESULTS_DB, b"a" * 32) == b"before"
    assert store.get_raw(RESULTS_DB, b"b" * 32) is None  # never reported done, never stored

    async def again() -> None:  # a new writer (and commit process) goes on with the same store
        async with GroupCommitWriter(store) as writer:
            await writer.commit([(RESULTS_DB, b"c" * 32, b"next run")])

    anyio.run(again)
    assert store.get_raw(RESULTS_DB, b"c" * 32) == b"next run"
    store.close()


def test_the_commit_process_ignores_ctrl_c_and_exits_when_its_input_closes(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    process = CommitProcess(store.path)
    process.commit([(RESULTS_DB, b"a" * 32, b"1")])  # started and serving
    os.kill(process.pid, signal.SIGINT)  # what a Ctrl-C sends the whole process group
    time.sleep(0.2)
    process.commit([(RESULTS_DB, b"b" * 32, b"2")])  # the parent still gets its commits done
    assert store.get_raw(RESULTS_DB, b"b" * 32) == b"2"
    assert process.close(timeout=30) == 0
    store.close()


def test_a_writer_that_writes_nothing_starts_no_commit_process(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")

    async def main() -> GroupCommitWriter:
        async with GroupCommitWriter(store) as writer:
            await writer.flush()  # a finished run re-read: nothing to commit
        return writer

    assert anyio.run(main)._process is None
    store.close()


def test_the_commit_process_imports_this_engine_whatever_the_working_directory_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "my-project"
    (project / "engine").mkdir(parents=True)  # a user's own package of that name
    (project / "engine" / "__init__.py").write_text("raise ImportError('the wrong engine package')\n")
    monkeypatch.chdir(project)
    store = Store(tmp_path / "s")
    process = CommitProcess(store.path)
    try:
        process.commit([(RESULTS_DB, b"a" * 32, b"v")])
    finally:
        assert process.close() == 0
    assert store.get_raw(RESULTS_DB, b"a" * 32) == b"v"
    store.close()
