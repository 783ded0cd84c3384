"""A judge that fails ends the run in one clear line (issue 33), as a user
sees it: `needlejudge run` in its own process WITH its live progress display
(not --quiet), against the fake provider server in its own process, on a
real store.

- Every failure that stops a run (a key revoked after some answers, an
  unknown model, a proxy's HTML page or an empty body with status 200, a
  closed port, a hung server) ends with exactly one line after the panel,
  naming the judge and what to do; exit code 3 (README, "Exit codes"); no
  traceback; nothing already committed is lost.
- A judge that never answered ends the run within seconds, not after
  `max_outage_s`; one that answered and then went down is waited for.
- A hung server is shown as "not answering" in the display within the
  judge's `timeout_s`; the ETA is shown only when finite.
- A graceful stop does not wait when nothing is in flight, and never says
  that calls which timed out were committed.
"""

from __future__ import annotations

import re
import signal
import socket
import time
from pathlib import Path

import pytest
from reliability_fixtures import RunProcess, committed_rows, fresh_experiment, server_fixture

JUDGE_FAILED = 3  # the exit code of a run a judge stopped (README, "Exit codes")
server = server_fixture("fixed:0.01")


@pytest.fixture
def experiment(server, prepared_store, corpus_slice_path, corpus_settings, tmp_path: Path):  # type: ignore[no-untyped-def]
    """Write a config over a fresh copy of the prepared store; `failures` adds a [failures] table."""

    def make(*, url: str | None = None, failures: str = "", **design) -> Path:  # type: ignore[no-untyped-def]
        return fresh_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings.min_chars_per_sentence,
                                url or server.url, extra=f"\n[failures]\n{failures}\n" if failures else "", **design)

    return make


def shown(config: Path, *, timeout: float = 120.0, terminal: bool = False) -> tuple[int, str, float]:
    """Run with the progress display on: (exit code, stderr, seconds)."""
    started = time.monotonic()
    code, _, err = RunProcess(config, quiet=False, terminal=terminal).wait(timeout)
    return code, err, time.monotonic() - started


def the_line(err: str) -> str:
    """What follows the progress panel: exactly one line, and no traceback anywhere."""
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    borders = [n for n, line in enumerate(lines) if line.lstrip().startswith("╰")]
    assert borders, f"no progress panel drawn:\n{err}"  # the display was on
    after = lines[borders[-1] + 1 :]
    assert len(after) == 1, "\n".join(after)
    return after[0]


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_a_key_revoked_mid_run_ends_in_one_line_and_keeps_every_answer(server, experiment) -> None:  # type: ignore[no-untyped-def]
    server.configure(faults=[{"kind": "http_error", "status": 401, "after": 40}])
    config = experiment()
    code, err, _ = shown(config)
    line = the_line(err)
    assert code == JUDGE_FAILED, err
    assert line.startswith("needlejudge run: error: judge 'sim': the provider rejected the call (auth)"), line
    assert "fix the judge's config" in line and "Incorrect API key" in line, line
    assert err.count("HTTP 401") == 2, err  # the adapter's warning once (not once per call in flight), and the line
    kept = committed_rows(config.parent / "store")
    assert kept > 0
    server.configure(faults=[])  # a new key: the resume finishes and every row kept is still there
    code, err, _ = shown(config)
    assert code == 0, err
    assert "Traceback" not in err and committed_rows(config.parent / "store") >= kept


def test_an_unknown_model_ends_in_one_line(server, experiment) -> None:  # type: ignore[no-untyped-def]
    server.configure(faults=[])
    code, err, _ = shown(experiment(model="missing-judge"))
    line = the_line(err)
    assert code == JUDGE_FAILED, err
    assert "judge 'sim': the provider rejected the call (not_found)" in line and "model_not_found" in line, line


@pytest.mark.parametrize("kind", ["html", "empty"])
def test_a_200_that_is_not_an_answer_ends_the_run_within_seconds(kind: str, server, experiment) -> None:  # type: ignore[no-untyped-def]
    server.configure(faults=[{"kind": kind, "after": 0}])
    code, err, seconds = shown(experiment())
    line = the_line(err)
    assert code == JUDGE_FAILED, err
    assert "judge 'sim' never answered" in line and "malformed" in line, line
    if kind == "html":
        assert "<!DOCTYPE html>" in line or "<html>" in line, line  # the page itself, for the user to recognise
    assert seconds < 30, seconds  # not max_outage_s (300 s) of probing


def test_a_closed_port_ends_the_run_within_seconds_naming_the_url(experiment) -> None:  # type: ignore[no-untyped-def]
    port = closed_port()
    code, err, seconds = shown(experiment(url=f"http://127.0.0.1:{port}"))
    line = the_line(err)
    assert code == JUDGE_FAILED, err
    assert "judge 'sim' never answered" in line and f"127.0.0.1:{port}" in line and "base_url" in line, line
    assert seconds < 30, seconds


def test_a_judge_that_answered_then_went_down_is_waited_for(server, experiment) -> None:  # type: ignore[no-untyped-def]
    server.configure(faults=[{"kind": "server_error", "after": 30}])
    config = experiment(max_attempts=2, failures="max_outage_s = 3\nprobe_cap_s = 0.5\nconsecutive_failures = 5")
    code, err, seconds = shown(config)
    line = the_line(err)
    assert code == JUDGE_FAILED, err
    assert "judge 'sim' is failing" in line and "did not recover within 3 s" in line and "resume" in line, line
    assert seconds >= 3
    probes_after_outage = server.stats()["by_outcome"]["server_error"]
    assert probes_after_outage > 5 * 2  # the calls that took it down (x2 attempts), then the probes


def test_a_hung_server_is_shown_not_answering_within_timeout_s(server, experiment) -> None:  # type: ignore[no-untyped-def]
    server.configure(faults=[{"kind": "hang", "after": 0, "hang_s": 60}])
    config = experiment(timeout_s=3.0, max_attempts=1)
    code, err, _ = shown(config, terminal=True)  # every refresh of the panel lands on stderr
    assert "Traceback" not in err, err
    frames = [frame for frame in re.split(r"(?=╭)", err) if "not answering" in frame]
    assert frames, err[-3000:]
    first = re.search(r"(\d+):(\d\d) elapsed", frames[0])
    assert first is not None and int(first.group(1)) * 60 + int(first.group(2)) < 3, frames[0]
    assert "ETA" not in frames[0]  # nothing judged yet: no rate, no ETA
    assert code == JUDGE_FAILED and "never answered" in err.strip().splitlines()[-1], err[-2000:]


def test_a_graceful_stop_while_the_judge_is_down_does_not_wait(server, experiment) -> None:  # type: ignore[no-untyped-def]
    server.configure(faults=[{"kind": "server_error", "after": 30}])
    config = experiment(max_attempts=1, failures="max_outage_s = 120\nprobe_cap_s = 60\nconsecutive_failures = 3",
                        timeout_s=30.0)
    run = RunProcess(config, quiet=False)
    deadline = time.monotonic() + 60
    while server.stats()["by_outcome"].get("server_error", 0) < 3 + 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # down (3 failures), then probed: waiting 2+ s for its next probe, nothing in flight
    time.sleep(0.5)
    sent = time.monotonic()
    run.signal(signal.SIGTERM)
    code, _, err = run.wait(60)
    assert time.monotonic() - sent < 5  # not the drain bound (the judge's timeout_s, 30 s)
    line = the_line(err)
    assert code == 128 + signal.SIGTERM, err
    assert "no call was in flight" in line and "resume with" in line, line


def test_a_graceful_stop_never_says_calls_that_timed_out_were_committed(server, experiment) -> None:  # type: ignore[no-untyped-def]
    server.configure(faults=[{"kind": "hang", "after": 20, "hang_s": 60}])
    config = experiment(max_attempts=1, timeout_s=2.0, concurrency=4)
    run = RunProcess(config, quiet=False)
    deadline = time.monotonic() + 60
    while server.stats()["by_outcome"].get("hang", 0) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)  # every worker waits on a hung call
    run.signal(signal.SIGTERM)
    code, _, err = run.wait(60)
    line = the_line(err)
    assert code == 128 + signal.SIGTERM, err
    assert "were committed" not in line and "without an answer" in line, line
