"""The reliability harness shared by tests/test_reliability*.py and
benchmarks/bench_reliability.py: real processes only.

- `FakeServerProcess`: `needlejudge fake-server` in its own process on
  127.0.0.1 (port 0), configured and counted over its /_fake/* routes.
- `experiment_toml`: an experiment config whose judge is the fake server.
- `RunProcess`: `needlejudge run CONFIG` in its own process (own session, so
  a signal reaches only what the test means), with its children (the LMDB
  commit process) discoverable for sampling and for waiting on.
- `store_rows` / `science`: what a store or a results.jsonl holds, reduced to
  the scientific columns (cell, document, status, score): timestamps,
  latencies and the `cached` flag differ between two correct runs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import urllib.request
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from experiments import SESSION_MODEL, SESSION_NER_SCAN_RADIUS

ROOT = Path(__file__).resolve().parents[1]
FAKE_KEY_ENV = "NJ_RELIABILITY_KEY"
CELL_COLUMNS = ("judge", "prompt_id", "needle", "hay", "i", "j", "replicate", "order", "control")
SCIENCE_COLUMNS = (*CELL_COLUMNS, "doc_id", "doc_index", "status", "score")


def child_env(**extra: str) -> dict[str, str]:
    """The environment of a child process: this checkout's code first."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault(FAKE_KEY_ENV, "reliability-test-key")
    env.update(extra)
    return env


# ---------------------------------------------------------------------------
# The fake provider server, in its own process


class FakeServerProcess:
    def __init__(self, *, latency: str = "zero", seed: int = 0, faults: Iterable[str] = ()) -> None:
        self.args = ["--port", "0", "--latency", latency, "--seed", str(seed)]
        for fault in faults:
            self.args += ["--fault", fault]
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> FakeServerProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.cli", "fake-server", *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            env=child_env(),
            start_new_session=True,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # "fake provider server listening on http://127.0.0.1:PORT"
        match = re.search(r"http://127\.0\.0\.1:\d+", line)
        if not match:
            self.__exit__()
            raise RuntimeError(f"fake server did not start: {line!r}")
        self.url = match.group(0)
        return self

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def _call(self, path: str, body: dict | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method="GET" if body is None else "POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def stats(self) -> dict[str, Any]:
        return self._call("/_fake/stats")

    def configure(self, **changes: Any) -> dict[str, Any]:
        """Replace config fields (faults, rpm, latency...); counters are reset."""
        return self._call("/_fake/config", changes)

    def reset(self) -> None:
        self._call("/_fake/reset", {})

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc is not None and self.proc.stdout is not None:
            self.proc.stdout.close()


def server_fixture(latency: str) -> Any:
    """A module-scoped pytest fixture: the fake server process with this latency."""
    import pytest

    @pytest.fixture(scope="module")
    def server() -> Any:
        with FakeServerProcess(latency=latency) as running:
            yield running

    return server


def settled_stats(server: FakeServerProcess, timeout: float = 10.0) -> dict[str, Any]:
    """The server's counters once every request it received is answered (a
    killed client's requests still complete, and count, on the server)."""
    deadline = time.monotonic() + timeout
    while True:
        stats = server.stats()
        if stats["requests"] == sum(stats["by_status"].values()) or time.monotonic() > deadline:
            return stats
        time.sleep(0.02)


def paid_twice(stats: dict[str, Any]) -> int:
    """Completed answers the server gave more than once for the same request body."""
    return sum(n - 1 for n in stats["repeated"].values())


# ---------------------------------------------------------------------------
# Experiment configs


def experiment_toml(
    *,
    store: Path,
    output: Path,
    url: str,
    corpus: Path,
    min_chars: float,
    needles: str = '["none", "neg", "con"]',
    hays: str = '["orig", "rand"]',
    positions: str = "positions = [[0, 0], [1, 2], [2, 2], [3, 1]]",
    n: int = 6,
    checks: tuple[int, int, int] = (3, 4, 4),
    concurrency: int = 8,
    timeout_s: float = 10.0,
    max_attempts: int = 4,
    max_retry_time_s: float = 60.0,
    model: str = "sim-judge",
    options: str = "backoff_base_s = 0.01, backoff_cap_s = 0.2",
    replicates: int = 1,
    judges: int = 1,
) -> str:
    """A fixed-n design judged by `judges` simulated judges on the fake server."""
    text = textwrap.dedent(
        f"""
        store = "{store}"
        output = "{output}"
        seed = 5
        needles = {needles}
        hays = {hays}
        {positions}
        replicates = {replicates}
        [corpus]
        inputs = ["{corpus}"]
        [corpus.settings]
        min_chars_per_sentence = {min_chars}
        model = "{SESSION_MODEL}"
        ner_scan_radius = {SESSION_NER_SCAN_RADIUS}
        [stopping]
        kind = "fixed"
        n = {n}
        [checks]
        order_swap = {checks[0]}
        null_edit = {checks[1]}
        negative = {checks[2]}
        """
    )
    for number in range(judges):
        suffix = f"-{number}" if judges > 1 else ""
        text += textwrap.dedent(
            f"""
            [[judges]]
            name = "sim{suffix}"
            adapter = "openai-compatible"
            model = "{model}{suffix}"
            base_url = "{url}/v1"
            api_key_env = "{FAKE_KEY_ENV}"
            concurrency = {concurrency}
            timeout_s = {timeout_s}
            max_attempts = {max_attempts}
            max_retry_time_s = {max_retry_time_s}
            options = {{ {options} }}
            """
        )
    return text


def copy_store(source: Any, target: Path) -> Path:
    """A fresh store holding only the prepared corpus of `source` (an open
    Store, or the path of one), by LMDB copy."""
    from engine.cache.store import Store

    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    if isinstance(source, Store):
        source.env.copy(str(target))
    else:
        with Store(source) as store:
            store.env.copy(str(target))
    with Store(target) as copy, copy.env.begin(write=True) as txn:
        for db in ("results", "rows", "runs"):
            txn.drop(copy.db(db), delete=False)
    return target


# ---------------------------------------------------------------------------
# `needlejudge run` in its own process


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class RunProcess:
    def __init__(self, config: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.cli", "run", str(config), "--quiet", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env or child_env(),
            start_new_session=True,
            # as from a terminal: a shell's background job would inherit SIGINT ignored
            preexec_fn=_default_sigint,
        )
        self.children_seen: set[int] = set()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def children(self) -> list[int]:
        found = []
        try:
            for task in os.listdir(f"/proc/{self.pid}/task"):
                with open(f"/proc/{self.pid}/task/{task}/children") as fh:
                    found += [int(p) for p in fh.read().split()]
        except OSError:
            pass
        self.children_seen.update(found)
        return found

    def signal(self, signum: int) -> None:
        self.children()  # remember the commit process, to wait for it after a kill
        os.kill(self.pid, signum)

    def wait(self, timeout: float = 300.0) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        # an orphaned commit process finishes its batch and exits when its pipe closes
        for pid in self.children_seen:
            wait_gone(pid, 30.0)
        return self.proc.returncode, out, err

    def kill_all(self) -> None:
        for pid in [self.pid, *self.children()]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().split(")")[-1].split()[0] == "Z":
                    return True  # a zombie: exited (its parent is gone or has not reaped it)
        except OSError:
            return True
        time.sleep(0.02)
    return False


def run_to_end(config: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 600.0) -> tuple[int, str, str]:
    return RunProcess(config, *args, env=env).wait(timeout)


def wait_for_requests(server: FakeServerProcess, target: int, run: RunProcess, timeout: float = 120.0) -> bool:
    """Wait until the server has received `target` requests; False if the run ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.stats()["requests"] >= target:
            return True
        if run.proc.poll() is not None:
            return False
        time.sleep(0.005)
    raise TimeoutError(f"the server did not reach {target} requests in {timeout} s")


# ---------------------------------------------------------------------------
# What a run left behind


def store_records(store_path: Path) -> dict[bytes, dict[str, Any]]:
    """Every stored result row (all runs), keyed by its row key."""
    import msgspec

    from engine.contracts import ResultRow
    from engine.run.results import ROWS_DB
    from engine.cache.store import Store

    decode = msgspec.msgpack.Decoder(ResultRow).decode
    with Store(store_path) as store:
        return {key: msgspec.to_builtins(decode(raw)) for key, raw in store.items_raw(ROWS_DB)}


def store_rows(store_path: Path) -> dict[bytes, tuple]:
    """Every stored result row (all runs), keyed by its row key, on the science columns."""
    return {key: tuple(row[c] for c in SCIENCE_COLUMNS) for key, row in store_records(store_path).items()}


def committed_count(store_path: Path, db: str) -> int:
    """Entries committed to one of the store's databases."""
    from engine.cache.store import Store

    with Store(store_path) as store:
        return store.count(db)


def cached_calls(store_path: Path) -> int:
    """Call answers committed to the store's cache."""
    from engine.cache.call_cache import RESULTS_DB

    return committed_count(store_path, RESULTS_DB)


def committed_rows(store_path: Path) -> int:
    """Result rows committed to the store (all runs)."""
    from engine.run.results import ROWS_DB

    return committed_count(store_path, ROWS_DB)


def results(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def science(path: Path) -> list[tuple]:
    """results.jsonl on the science columns, in file order (cell, then document)."""
    return [tuple(row[c] for c in SCIENCE_COLUMNS) for row in results(path)]


def score_parses(row: dict[str, Any]) -> bool:
    """The row's score is what its prompt reads from its raw text."""
    from engine.contracts import CallResult
    from engine.prompts import load_prompt

    prompt = load_prompt(row["prompt_id"])
    verdict = prompt.verdict((CallResult(status="ok", text=row["raw_text"]),))
    return verdict.status == "ok" and verdict.score == row["score"]


def proc_status(pid: int, field: str) -> int | None:
    """A kB field of /proc/PID/status (RssAnon, VmHWM...), None once gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def open_fds(pid: int) -> int | None:
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None
