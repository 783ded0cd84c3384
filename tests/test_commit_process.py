"""engine.cache.commit_process: the process that commits the group-commit writer's batches."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import anyio
import pytest

from engine.cache.call_cache import RESULTS_DB, CommitError, GroupCommitWriter
from engine.cache.commit_process import CommitProcess, CommitProcessError
from engine.cache.store import Store


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
            assert writer.commit_process is not None
            pids.append(writer.commit_process.pid)
            os.kill(writer.commit_process.pid, signal.SIGKILL)
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

    assert anyio.run(main).commit_process is None
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


_PARENT = """
import signal, sys, time
from engine.cache.commit_process import CommitProcess
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # this parent survives a SIGTERM to its group
process = CommitProcess(sys.argv[1])
process.commit([("results", b"a" * 32, b"1")])
print(process.pid, flush=True)
time.sleep(300)
"""


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie is gone for our purposes
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _wait_gone(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not _pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["SIGTERM to the group", "SIGKILL to the parent"])
def test_only_its_parent_ends_the_commit_process_and_it_exits_when_the_parent_dies(how: str, tmp_path: Path) -> None:
    import subprocess
    import sys

    Store(tmp_path / "s").close()
    parent = subprocess.Popen([sys.executable, "-c", _PARENT, str(tmp_path / "s")], stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert os.getsid(child) == child != os.getsid(parent.pid)  # its own session, so its own process group
        if how == "SIGTERM to the group":
            os.killpg(parent.pid, signal.SIGTERM)  # what `kill -TERM -PGID` or a service manager sends
            assert not _wait_gone(child, 1.0)  # the signal did not reach it
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(30)
        assert _wait_gone(child, 30)  # it ends on the EOF of its input once its parent is gone
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait()
    store = Store(tmp_path / "s")
    assert store.get_raw(RESULTS_DB, b"a" * 32) == b"1"
    store.close()
