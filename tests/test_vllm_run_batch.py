"""The `vllm run-batch` executor (adapters/vllm_run_batch.py) through the
whole run: each wave exported, run by `python -m
vllm.entrypoints.openai.run_batch` over the tiny Gemma (dummy weights,
greedy, guided), imported, until every cell has stopped. A 3-wave `ci`
design gives the in-process engine's cells, stops and scores, and a final
in-process run makes no call. (One in-process engine start, three
run_batch starts: the one vLLM test of this module.)

A shard that fails (its process, or too many of its calls) stops the run
with a message naming it, the wave's other answers stored: shown with a
stand-in for run_batch that answers each line from the fake provider
server, as an engine would, and fails where it is told to."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import msgspec
import pytest
from experiments import judge_table, write_experiment
from reliability_fixtures import cached_calls
from vllm_fixtures import ENGINE_OPTIONS, experiment_config, require_vllm, restore_env, set_engine_env

from adapters.executors import RunBatch
from adapters.vllm_run_batch import RunBatchExecutor
from engine.stopping.spec import StoppingSpec
from simulation.tiny_gemma import build_tiny_gemma

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"

# Waves of 2, then up to 8, then up to 12 documents a cell (engine.run.batch.wave_planner);
# the tiny model's constant score converges the rule at 11.
CI = {"kind": "ci", "epsilon": 25.0, "alpha": 0.2, "min_docs": 2, "max_docs": 12}


def rows(summary) -> list[tuple]:  # type: ignore[no-untyped-def]
    lines = open(summary.results_jsonl).read().splitlines()
    return [(r["needle"], r["i"], r["doc_id"], r["status"], r["score"], r["raw_text"]) for r in map(json.loads, lines)]


# four engine starts (one in-process, one run_batch per wave): minutes on a loaded 2-core box
@pytest.mark.vllm
@pytest.mark.slow
@pytest.mark.timeout(1500)
async def test_run_batch_waves_reach_the_in_process_runs_stops(tmp_path, corpus_slice_path):  # type: ignore[no-untyped-def]
    require_vllm()
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


# A stand-in for `python -m vllm.entrypoints.openai.run_batch -i IN -o OUT`: each
# line's body POSTed to the fake server, its answer written in run_batch's output
# shape. STANDIN_FAIL = "calls-001.jsonl:exit" fails that shard's process in wave 1,
# "calls-001.jsonl:errors:6" answers its first 6 lines with an engine error (500).
STANDIN = r"""
import json, os, sys, urllib.request
source, target = sys.argv[sys.argv.index("-i") + 1], sys.argv[sys.argv.index("-o") + 1]
name, _, how = os.environ.get("STANDIN_FAIL", "").partition(":")
failing = os.path.basename(source) == name and "wave-0001" in source
if failing and how == "exit":
    sys.exit(1)
errors = int(how.split(":")[1]) if failing and how.startswith("errors") else 0
out = []
for n, line in enumerate(open(source).read().splitlines()):
    entry = json.loads(line)
    if n < errors:
        response = {"status_code": 500, "request_id": "r", "body": {"error": {"message": "engine step failed"}}}
    else:
        request = urllib.request.Request(os.environ["STANDIN_URL"] + "/v1/chat/completions", data=json.dumps(entry["body"]).encode(),
                                         headers={"Content-Type": "application/json", "Authorization": "Bearer test-key"})
        with urllib.request.urlopen(request) as reply:
            response = {"status_code": 200, "request_id": "r", "body": json.loads(reply.read())}
    out.append(json.dumps({"id": f"r{n}", "custom_id": entry["custom_id"], "response": response, "error": None}) + "\n")
open(target, "w").write("".join(out))
"""


class StandIn(RunBatch):
    def create(self, spec, run):  # type: ignore[no-untyped-def]
        executor = super().create(spec, run)
        script = Path(run.store).parent / "standin.py"
        script.write_text(STANDIN)

        class Executor(RunBatchExecutor):
            def command(self, folder: Path, shard_input: str, output: str) -> list[str]:
                return [sys.executable, str(script), "-i", str(folder / shard_input), "-o", str(folder / (output + ".running"))]

        executor.__class__ = Executor
        return executor


DESIGN = ('seed = 3\nneedles = ["none", "neg"]\nhays = ["orig"]\npositions = [[0, 0], [2, 2]]\nprompts = ["bands"]\n'
          'stopping = { kind = "fixed", n = 5 }\n' + judge_table("tiny", "vllm", "{model}", concurrency=8))


@pytest.fixture
def standin_config(tmp_path, server, prepared_store, corpus_slice_path, corpus_settings, monkeypatch):  # type: ignore[no-untyped-def]
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")  # a model folder for the config check: nothing loads it
    monkeypatch.setenv("STANDIN_URL", server.url)
    return write_experiment(tmp_path / "run", prepared_store, corpus_slice_path, corpus_settings, DESIGN.replace("{model}", str(tmp_path / "model")))


@pytest.mark.parametrize("how, why", [("exit", "run_batch exited with 1"), ("errors:6", "6 of 10 calls failed or unanswered (6 server)")])
def test_a_failing_shard_stops_the_run_with_the_waves_other_answers_stored(standin_config, monkeypatch, how, why):  # type: ignore[no-untyped-def]
    from engine.run.judge_health import RunAborted
    from engine.run.runner import run_experiment

    monkeypatch.setenv("STANDIN_FAIL", f"calls-001.jsonl:{how}")
    with pytest.raises(RunAborted) as stopped:
        run_experiment(standin_config, executor=StandIn(shards=2))
    message = str(stopped.value)
    assert message.startswith("judge 'tiny': 1 run_batch shard(s) of wave 1 failed beyond the limit of 50%: ")
    assert "wave-0001/calls-001.jsonl: " in message and why in message and "calls-000" not in message
    assert cached_calls(Path(standin_config.store)) == 10 + (4 if how == "errors:6" else 0)  # shard 0's answers, and shard 1's good lines
    monkeypatch.delenv("STANDIN_FAIL")
    resumed = run_experiment(standin_config, executor=StandIn(shards=2))  # the same config again: it resumes
    assert resumed.rows == 20 and cached_calls(Path(standin_config.store)) == 20


def test_errors_under_the_shard_limit_are_asked_again(standin_config, monkeypatch):  # type: ignore[no-untyped-def]
    from engine.run.runner import run_experiment

    monkeypatch.setenv("STANDIN_FAIL", "calls-001.jsonl:errors:4")
    summary = run_experiment(standin_config, executor=StandIn(shards=2))  # 4 of 10: under the limit
    assert summary.rows == 20 and summary.batch_waves == 2 and cached_calls(Path(standin_config.store)) == 20


def test_max_tokens_beyond_max_model_len_is_one_line_before_anything_runs(tmp_path, prepared_store, corpus_slice_path, corpus_settings, capsys):  # type: ignore[no-untyped-def]
    from engine.cli import main as cli

    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "config.json").write_text("{}")
    design = DESIGN.replace("{model}", str(tmp_path / "model")).replace('prompts = ["bands"]', 'prompts = ["bands", "triples"]')
    config = write_experiment(tmp_path / "run", prepared_store, corpus_slice_path, corpus_settings,
                              design + "options = { max_model_len = 2048 }\n")
    assert cli(["run", str(config.source), "--executor", "run-batch", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "prompt 'triples' asks decoding.max_tokens = 4096, more than options.max_model_len = 2048" in err
    assert str(config.source) in err and not (Path(config.store) / "waves").exists()  # no wave written, no engine started
