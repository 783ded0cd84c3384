"""The Ray executor (adapters/ray_executor.py, `needlejudge run --executor
ray`) on a local Ray instance, against the fake provider server over real
HTTP: each wave of an API judge as a Ray Data job whose answers stream back
to the driver, which alone writes the cache. Results equal the plain run's;
the account's rate limit holds for the whole cluster; an actor killed
mid-wave loses nothing and pays at most its calls in flight twice.

Skipped without Ray (`pip install "needlejudge[ray]"`)."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from experiments import FAKE_KEY_ENV, SMALL_CI, small_fake_design, write_experiment

ray = pytest.importorskip("ray", reason='the Ray executor needs pip install "needlejudge[ray]"')
pytest.importorskip("ray.data")

from adapters.executors import RayData  # noqa: E402
from engine.config import load_config  # noqa: E402
from engine.run.runner import run_experiment  # noqa: E402

CONCURRENCY = 4
FIXED = 'kind = "fixed"\nn = 12'


@pytest.fixture(scope="module")
def local_ray():  # type: ignore[no-untyped-def]
    """One local Ray instance for the module (its start is most of the cost);
    its workers take the key from the environment it starts with."""
    os.environ[FAKE_KEY_ENV] = "test-key"
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield
    ray.shutdown()


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FAKE_KEY_ENV, "test-key")


def config_in(folder: Path, server, fixtures, *, stopping: str = SMALL_CI, extra: str = ""):  # type: ignore[no-untyped-def]
    prepared_store, corpus_slice_path, corpus_settings = fixtures
    body = small_fake_design(server.url, stopping, concurrency=CONCURRENCY, extra=extra)
    write_experiment(folder, prepared_store, corpus_slice_path, corpus_settings, body)
    return load_config(folder / "exp.toml")


def rows(summary) -> list[tuple]:  # type: ignore[no-untyped-def]
    lines = Path(summary.results_jsonl).read_text().splitlines()
    return [(r["needle"], r["i"], r["doc_id"], r["status"], r["score"], r["raw_text"]) for r in map(json.loads, lines)]


@pytest.fixture
def fixtures(prepared_store, corpus_slice_path, corpus_settings):  # type: ignore[no-untyped-def]
    return prepared_store, corpus_slice_path, corpus_settings


def test_waves_as_ray_jobs_give_the_plain_runs_results(tmp_path, server, local_ray, fixtures):  # type: ignore[no-untyped-def]
    plain = run_experiment(config_in(tmp_path / "plain", server, fixtures))
    config = config_in(tmp_path / "ray", server, fixtures)
    server.reset()
    waved = run_experiment(config, executor=RayData(address="local", workers=2))
    assert waved.batch_waves >= 2 and waved.calls_network == server.stats()["requests"] > 0
    assert server.stats()["repeated_completions"] == 0
    assert rows(waved) == rows(plain) and waved.stop_reasons == plain.stop_reasons
    again = run_experiment(config)  # the plain workers: every answer is cached
    assert again.calls_network == 0 and rows(again) == rows(plain)


def test_the_rate_limit_is_held_once_for_the_cluster(tmp_path, server, local_ray, fixtures):  # type: ignore[no-untyped-def]
    # The server admits 10 calls/s; the judge's rpm (8/s) fits under it, but two
    # actors each holding that rate would send 16/s and draw 429s.
    server.configure(rpm=600.0)
    try:
        config = config_in(tmp_path, server, fixtures, stopping=FIXED, extra="rpm = 480")
        started = time.monotonic()
        summary = run_experiment(config, executor=RayData(address="local", workers=2))
        stats = server.stats()
    finally:
        server.configure(rpm=None)
    assert summary.rows == 48 and stats["by_status"].get("429", 0) == 0, stats["by_status"]
    first, last = stats["first_request_at"], stats["last_request_at"]
    assert last - first >= (48 - 8) / 8 * 0.9  # after the first second's burst, 8 calls a second
    assert time.monotonic() - started > last - first


def _map_workers() -> list[int]:
    import psutil

    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or ())
        if "MapWorker" in cmdline and "HttpStage" in cmdline:
            found.append(process.info["pid"])
    return found


def test_an_actor_killed_mid_wave_loses_nothing_and_pays_its_calls_in_flight_at_most_twice(tmp_path, server, local_ray, fixtures):  # type: ignore[no-untyped-def]
    plain = run_experiment(config_in(tmp_path / "plain", server, fixtures, stopping=FIXED))
    server.configure(latency={"kind": "fixed", "value_s": 0.25})
    try:
        config = config_in(tmp_path / "ray", server, fixtures, stopping=FIXED)
        done: list[object] = []
        runner = threading.Thread(target=lambda: done.append(run_experiment(config, executor=RayData(address="local", workers=2))))
        runner.start()
        deadline = time.monotonic() + 120
        while server.stats()["requests"] < 2 * CONCURRENCY and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _map_workers()
        assert workers, "no Ray Data actor of the HTTP stage running"
        os.kill(workers[0], signal.SIGKILL)
        killed_at = server.stats()["requests"]
        runner.join(timeout=300)
        stats = server.stats()
    finally:
        server.configure(latency={"kind": "zero"})
    assert done, "the run did not finish"
    summary = done[0]
    assert stats["requests"] > killed_at  # the wave went on after the kill
    assert rows(summary) == rows(plain)  # nothing lost
    # a retried block holds the killed actor's calls in flight: CONCURRENCY at most
    assert stats["repeated_completions"] <= CONCURRENCY, stats["repeated"]
    assert summary.calls_network <= summary.rows + CONCURRENCY
