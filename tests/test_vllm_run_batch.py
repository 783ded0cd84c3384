"""The `vllm run-batch` executor (adapters/vllm_run_batch.py) through the
whole run: each wave exported, run by `python -m
vllm.entrypoints.openai.run_batch` over the tiny Gemma (dummy weights,
greedy, guided), imported, until every cell has stopped. A 3-wave `ci`
design gives the in-process engine's cells, stops and scores, and a final
in-process run makes no call. (One in-process engine start, three
run_batch starts: the one vLLM test of this module.)"""

from __future__ import annotations

import json

import msgspec
import pytest
from vllm_fixtures import ENGINE_OPTIONS, experiment_config, require_vllm, restore_env, set_engine_env

from engine.stopping.spec import StoppingSpec
from simulation.tiny_gemma import build_tiny_gemma

# four engine starts (one in-process, one run_batch per wave): minutes on a loaded 2-core box
pytestmark = [pytest.mark.anyio, pytest.mark.vllm, pytest.mark.slow, pytest.mark.timeout(1500)]


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"

# Waves of 2, then up to 8, then up to 12 documents a cell (engine.run.batch.wave_planner);
# the tiny model's constant score converges the rule at 11.
CI = {"kind": "ci", "epsilon": 25.0, "alpha": 0.2, "min_docs": 2, "max_docs": 12}


def rows(summary) -> list[tuple]:  # type: ignore[no-untyped-def]
    lines = open(summary.results_jsonl).read().splitlines()
    return [(r["needle"], r["i"], r["doc_id"], r["status"], r["score"], r["raw_text"]) for r in map(json.loads, lines)]


async def test_run_batch_waves_reach_the_in_process_runs_stops(tmp_path, corpus_slice_path):  # type: ignore[no-untyped-def]
    require_vllm()
    from adapters.executors import RunBatch
    from engine.run.runner import arun_experiment

    model = build_tiny_gemma(tmp_path / "tiny")
    judge = {"name": "tiny", "adapter": "vllm", "model": str(model), "concurrency": 64, "options": ENGINE_OPTIONS}

    def config(folder: str):  # type: ignore[no-untyped-def]
        base = experiment_config(tmp_path / folder, corpus_slice_path, judge)
        return msgspec.structs.replace(base, stopping=msgspec.convert(CI, StoppingSpec))

    previous = set_engine_env()
    try:
        plain = await arun_experiment(config("plain"))
        waved_config = config("waves")
        waved = await arun_experiment(waved_config, executor=RunBatch(shards=1))
        again = await arun_experiment(waved_config)  # in-process: every answer is cached
    finally:
        restore_env(previous)
    assert waved.batch_waves == 3 and waved.calls_network >= plain.rows
    assert plain.stop_reasons == waved.stop_reasons and "converged" in plain.stop_reasons
    assert rows(waved) == rows(plain)
    assert {r[3] for r in rows(plain)} == {"ok"}
    assert again.calls_network == 0 and rows(again) == rows(plain)
    waves = sorted((tmp_path / "waves" / "store" / "waves" / "tiny").glob("wave-*/results-000.jsonl"))
    assert len(waves) == 3  # what each run_batch process wrote, kept beside its calls
