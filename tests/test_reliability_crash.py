"""Crash safety and graceful stops of `needlejudge run` (issue 15), as real
processes against the fake provider server in its own process.

- SIGKILL at seeded random moments (a random number of server requests into
  the run), resuming each time: no committed row is ever lost or changed,
  the final results equal an uninterrupted run's on the science columns,
  and a resume pays again only for answers the kill lost (in flight, or
  answered but not yet committed): never for a committed one.
- SIGINT / SIGTERM: the run takes no new item, lets the calls in flight
  finish and commits them, says how to resume, exits 128 + the signal; the
  resume pays nothing twice. A second signal cancels at once, saying how
  many calls in flight it abandoned.

benchmarks/bench_reliability.py runs the same with 20 kills.
"""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

import pytest
from reliability_fixtures import (
    RunProcess,
    cached_calls,
    committed_rows,
    copy_store,
    experiment_toml,
    paid_twice,
    run_to_end,
    science,
    server_fixture,
    settled_stats,
    store_rows,
    wait_for_requests,
)

CONCURRENCY = 8


server = server_fixture("fixed:0.03")
# calls that take long enough for a second signal to land during the drain
slow_server = server_fixture("fixed:3")


def make_config(folder: Path, prepared_store, corpus_slice_path, corpus_settings, server, **fields) -> Path:  # type: ignore[no-untyped-def]
    store = copy_store(prepared_store, folder / "store")
    text = experiment_toml(store=store, output=folder / "out", url=server.url, corpus=corpus_slice_path,
                           min_chars=corpus_settings.min_chars_per_sentence, concurrency=CONCURRENCY, **fields)
    path = folder / "exp.toml"
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def reference(tmp_path_factory, prepared_store, corpus_slice_path, corpus_settings, server):  # type: ignore[no-untyped-def]
    """The uninterrupted run: its results and how many calls it made."""
    config = make_config(tmp_path_factory.mktemp("reference"), prepared_store, corpus_slice_path, corpus_settings, server)
    server.reset()
    code, out, err = run_to_end(config)
    assert code == 0, err
    stats = server.stats()
    assert stats["requests"] == stats["completed"] > 100 and paid_twice(stats) == 0
    return science(config.parent / "out" / "results.jsonl"), stats["requests"]


def test_sigkill_at_random_moments_loses_nothing_and_pays_little_twice(tmp_path: Path, reference, prepared_store, corpus_slice_path, corpus_settings, server) -> None:  # type: ignore[no-untyped-def]
    expected, calls = reference
    config = make_config(tmp_path, prepared_store, corpus_slice_path, corpus_settings, server)
    rng = random.Random(15)
    server.reset()
    kept: dict[bytes, tuple] = {}
    kills = lost = 0
    repeats_before = 0
    per_kill, uncommitted = [], []
    while kills < 3:
        run = RunProcess(config)
        stats = server.stats()
        target = stats["requests"] + rng.randint(5, max(6, (calls - stats["completed"]) // 3))
        if not wait_for_requests(server, target, run):
            break  # finished before the moment came
        run.signal(signal.SIGKILL)
        code, _, _ = run.wait()
        assert code == -signal.SIGKILL
        kills += 1
        # answers the server gave that the store does not hold: the most a resume can pay again
        uncommitted.append(settled_stats(server)["distinct_completed"] - cached_calls(config.parent / "store"))
        rows = store_rows(config.parent / "store")
        lost += sum(rows.get(key) != value for key, value in kept.items())
        kept = rows
        if kills > 1:  # the repeats paid by this run were caused by the previous kill
            repeated = paid_twice(server.stats())
            per_kill.append(repeated - repeats_before)
            repeats_before = repeated
    assert kills == 3
    code, out, err = run_to_end(config)
    assert code == 0, err
    stats = server.stats()
    per_kill.append(paid_twice(stats) - repeats_before)
    final = store_rows(config.parent / "store")
    lost += sum(final.get(key) != value for key, value in kept.items())
    assert lost == 0
    assert science(config.parent / "out" / "results.jsonl") == expected
    # a kill costs again only answers it lost: calls in flight and answers
    # still in the group commit (so it can exceed the judge's concurrency)
    assert all(0 <= paid <= lost_answers for paid, lost_answers in zip(per_kill, uncommitted)), (per_kill, uncommitted)
    # and that is bounded: the calls in flight plus the answers the writer may
    # hold uncommitted (engine.run.runner sizes it from the concurrency, + 8)
    assert max(per_kill) <= CONCURRENCY + (CONCURRENCY + 8), per_kill
    assert stats["distinct_completed"] == calls  # every call paid at least once, no other call made


FREE_JUDGE = '[[judges]]\nname = "seq"\nadapter = "baseline"\nmodel = "seqratio"\nconcurrency = 64\n'


def free_judge_config(folder: Path, prepared_store, corpus_slice_path, corpus_settings) -> Path:  # type: ignore[no-untyped-def]
    """A design judged only by an offline measure: the run may leave thousands
    of answers uncommitted (engine.run.runner.uncommitted_bound)."""
    store = copy_store(prepared_store, folder / "store")
    text = experiment_toml(store=store, output=folder / "out", url="http://127.0.0.1:9", corpus=corpus_slice_path,
                           min_chars=corpus_settings.min_chars_per_sentence, n=12, replicates=24,
                           positions="positions = [[0, 0], [1, 2], [2, 2], [3, 1], [4, 4], [0, 5], [6, 0], [2, 7]]")
    path = folder / "exp.toml"
    path.write_text(text[: text.index("[[judges]]")] + FREE_JUDGE)
    return path


def wait_for_rows(store: Path, run: RunProcess, timeout: float = 120.0) -> bool:
    """Wait until the store holds a committed row; False if the run ended first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if committed_rows(store):
            return True
        if run.proc.poll() is not None:
            return False
        time.sleep(0.01)
    raise TimeoutError(f"no row was committed to {store} in {timeout} s")


def test_sigkill_of_a_free_judge_run_with_many_answers_uncommitted_loses_no_committed_row(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings) -> None:  # type: ignore[no-untyped-def]
    reference = free_judge_config(tmp_path / "reference", prepared_store, corpus_slice_path, corpus_settings)
    code, _, err = run_to_end(reference)
    assert code == 0, err
    expected = science(reference.parent / "out" / "results.jsonl")
    config = free_judge_config(tmp_path / "killed", prepared_store, corpus_slice_path, corpus_settings)
    store = config.parent / "store"
    run = RunProcess(config)
    if not wait_for_rows(store, run):
        pytest.fail("the run finished before a row was committed: make the design larger")
    run.signal(signal.SIGKILL)
    code, _, _ = run.wait()
    assert code == -signal.SIGKILL
    kept = store_rows(store)
    assert 0 < len(kept) < len(expected), (len(kept), len(expected))
    code, _, err = run_to_end(config)
    assert code == 0, err
    final = store_rows(store)
    assert all(final.get(key) == value for key, value in kept.items())  # no committed row lost or changed
    assert science(config.parent / "out" / "results.jsonl") == expected


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_graceful_stop_commits_what_completed_and_says_how_to_resume(signum, tmp_path: Path, reference, prepared_store, corpus_slice_path, corpus_settings, server) -> None:  # type: ignore[no-untyped-def]
    expected, calls = reference
    config = make_config(tmp_path, prepared_store, corpus_slice_path, corpus_settings, server)
    server.reset()
    run = RunProcess(config)
    assert wait_for_requests(server, calls // 3, run)
    run.signal(signum)
    code, out, err = run.wait(60)
    assert code == 128 + signum  # 130 for SIGINT, 143 for SIGTERM
    assert "Traceback" not in err
    assert f"stopped by {signal.Signals(signum).name}" in err and f"resume with: needlejudge run {config}" in err, err
    assert "taking no new items; waiting up to 10 s" in err and "the calls in flight finished and were committed" in err, err
    stopped = settled_stats(server)
    cached = cached_calls(config.parent / "store")
    assert cached > 0 and len(store_rows(config.parent / "store")) > 0
    # the drain received every answer the server gave: none abandoned
    assert stopped["distinct_completed"] == cached, (stopped, cached)
    assert stopped["requests"] == stopped["completed"] < calls
    code, out, err = run_to_end(config)
    assert code == 0, err
    stats = server.stats()
    assert paid_twice(stats) == 0, stats["repeated"]
    assert stats["distinct_completed"] == calls
    assert science(config.parent / "out" / "results.jsonl") == expected


def test_a_second_signal_stops_at_once_and_says_what_it_abandoned(tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings, slow_server) -> None:  # type: ignore[no-untyped-def]
    config = make_config(tmp_path, prepared_store, corpus_slice_path, corpus_settings, slow_server)
    slow_server.reset()
    run = RunProcess(config)
    assert wait_for_requests(slow_server, CONCURRENCY, run)
    run.signal(signal.SIGINT)
    time.sleep(0.5)  # the calls take 3 s: the drain is still waiting for them
    run.signal(signal.SIGTERM)
    started = time.monotonic()
    code, out, err = run.wait(60)
    assert time.monotonic() - started < 2.5, err  # did not wait for the 3 s calls
    assert code == 128 + signal.SIGINT, err  # the first signal names the stop
    assert "Traceback" not in err
    assert "stopped by SIGINT" in err and f"resume with: needlejudge run {config}" in err, err
    # the calls abandoned: requests the server received whose answers the store lacks
    abandoned = settled_stats(slow_server)["distinct_completed"] - cached_calls(config.parent / "store")
    assert 0 < abandoned <= CONCURRENCY
    assert f"; {abandoned} call(s) still in flight were abandoned" in err, (abandoned, err)
