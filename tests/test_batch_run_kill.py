"""A `needlejudge run` with a batch judge killed (SIGKILL) while its batches
are out, then run again: the recorded batches are fetched, not submitted
again (the fake server counts each entry it ran), and the results equal a
synchronous run's. Real process, real LMDB, real HTTP."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.run.batch.store import pending_batches
from engine.run.experiment import Experiment
from engine.run.results import iter_rows
from engine.run.runner import run_experiment
from engine.cache.store import Store
from experiments import write_experiment
from simulation.fake_config import BatchSim, FakeConfig

ROOT = Path(__file__).resolve().parents[1]

BODY = """
seed = 2
needles = ["neg", "con"]
hays = ["orig"]
positions = [[0, 0], [1, 1]]
prompts = ["bands"]
[checks]
order_swap = 0
null_edit = 0
negative = 0
[stopping]
kind = "fixed"
n = 4
[[judges]]
name = "j"
adapter = "openai"
model = "sim-kill"
base_url = "{url}/v1"
mode = "{mode}"
batch_poll_s = 0.05
timeout_s = 5.0
"""


def rows(config) -> list[tuple]:  # type: ignore[no-untyped-def]
    summary = run_experiment(config, quiet=True)
    with Store(config.store) as store:
        return [(r.needle, r.hay, r.i, r.j, r.doc_index, r.doc_id, r.status, r.score, r.raw_text) for r in iter_rows(store, bytes.fromhex(summary.run_id))]


@pytest.mark.usefixtures("keys")
def test_killed_batch_run_resumes_without_paying_twice(server, tmp_path: Path, prepared_store, corpus_slice_path, corpus_settings) -> None:
    fixtures = (prepared_store, corpus_slice_path, corpus_settings)
    server.set_config(FakeConfig(batch=BatchSim(delay_s=2.0)))
    config = write_experiment(tmp_path / "batch", *fixtures, BODY.format(url=server.url, mode="batch"))
    experiment = Experiment(config)
    run_key = bytes.fromhex(experiment.run_id)
    experiment.close()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen([sys.executable, "-m", "engine.cli", "run", str(config.source), "--quiet"], cwd=tmp_path, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        recorded = []
        while not recorded:
            assert child.poll() is None, "the run ended before its batch was recorded"
            assert time.monotonic() < deadline, "no batch recorded within 120 s"
            time.sleep(0.1)
            with Store(config.store) as store:
                recorded = pending_batches(store, run_key)
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert len(recorded) == 1 and server.stats()["batch"]["processed"] == {}  # killed while the batch was out
    resumed = rows(config)
    with Store(config.store) as store:
        assert pending_batches(store, run_key) == []
    paid = server.stats()["batch"]["processed"]
    assert set(paid.values()) == {1} and {k.hex() for k in recorded[0].keys} == set(paid)  # fetched, not submitted again
    sync = write_experiment(tmp_path / "sync", *fixtures, BODY.format(url=server.url, mode="sync"))
    assert resumed == rows(sync) and len(resumed) == 4 * 2 * 2
