"""engine.cache.run_lock: one process owns a run — checked with real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cache.run_lock import LockFile, RunLocked, hold_run, run_lock_path

ROOT = Path(__file__).resolve().parents[1]
HOLDER = """
import sys, time
from engine.cache.run_lock import LockFile
lock = LockFile(sys.argv[1], "test run")
lock.acquire()
print("locked", flush=True)
time.sleep(60)
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _holder(path: Path) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, "-c", HOLDER, str(path)], stdout=subprocess.PIPE, text=True, env=_env())
    assert process.stdout is not None and process.stdout.readline().strip() == "locked"
    return process


def test_a_held_lock_names_its_owner_and_a_killed_owner_leaves_no_stale_lock(tmp_path: Path) -> None:
    path = tmp_path / "run-x.lock"
    holder = _holder(path)
    try:
        with pytest.raises(RunLocked, match=rf"test run is already running in process {holder.pid} \(lock .*run-x.lock\)"):
            LockFile(path, "test run").acquire()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    assert path.exists()  # the file stays; the OS dropped the lock with its owner
    with LockFile(path, "test run"):
        assert path.read_text().strip() == str(os.getpid())
    with LockFile(path, "test run"):  # released on exit: taken again
        pass


def test_hold_run_locks_the_experiment_and_the_output_folder(tmp_path: Path) -> None:
    holder = _holder(tmp_path / "out" / ".needlejudge.lock")
    try:
        with pytest.raises(RunLocked, match=f"a run exporting to .*out is already running in process {holder.pid}"):
            hold_run(tmp_path / "store", tmp_path / "out", "abcd")
        # the experiment's own lock was released again when the output lock failed
        with LockFile(run_lock_path(tmp_path / "store", "abcd"), "x"):
            pass
        with hold_run(tmp_path / "store", None, "abcd"):  # a run that does not export
            with pytest.raises(RunLocked, match="run abcd"):
                hold_run(tmp_path / "store", None, "abcd")
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()


SLOW_JUDGE = """
[[judges]]
name = "sim"
adapter = "openai-compatible"
model = "local-sim"
base_url = "{url}/v1"
concurrency = 4
"""


def test_a_second_run_of_the_same_experiment_is_refused_while_the_first_runs(
    tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings  # type: ignore[no-untyped-def]
) -> None:
    from simulation.fake_config import FakeConfig, Latency
    from simulation.fake_server import serve_in_thread
    from tests.test_run import make_experiment

    with serve_in_thread(FakeConfig(latency=Latency(kind="fixed", value_s=0.15))) as server:
        config = make_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, judges=SLOW_JUDGE.format(url=server.url))
        command = [sys.executable, "-m", "engine.cli", "run", str(config.source), "--quiet"]
        first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(), cwd=tmp_path)
        deadline = time.monotonic() + 60
        while not server.stats()["requests"]:  # the first run holds its lock and is calling
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        second = subprocess.run(command, capture_output=True, text=True, env=_env(), cwd=tmp_path, timeout=120)
        assert first.poll() is None  # still running when the second gave up
        out, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
        assert second.returncode == 2
        assert f"is already running in process {first.pid}" in second.stderr
        assert "Traceback" not in second.stderr
        stats = server.stats()
        assert stats["repeated_completions"] == 0  # no call paid twice
        rows = (Path(config.output) / "results.jsonl").read_text().splitlines()
        assert f"{len(rows):,} rows" in out and stats["requests"] == stats["completed"] >= len(rows) // 2
