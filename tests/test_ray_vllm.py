"""A vllm judge through the Ray executor (adapters/ray_vllm.py,
`needlejudge run --executor ray`): each wave a Ray Data job through
ray.data.llm's vLLM processor on a local Ray instance (tiny Gemma, dummy
weights, greedy, guided), answers streamed back to the driver, which alone
writes the cache. Same rows as the in-process engine's run of the same
design (scores, raw texts, finish reasons, token counts); a final plain run
makes no call. One in-process engine start and one engine actor's start.

A prompt that does not fit, and an engine error about one row, are
answered as the in-process adapter answers them (no engine needed).

Skipped without Ray (`pip install "needlejudge[ray]"`: ray[data] alone,
never ray[llm] here) or vLLM."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from vllm_fixtures import ENGINE_OPTIONS, experiment_config, judge_request, require_vllm, restore_env, set_engine_env

from engine.cache.call_cache import CallCache
from engine.cache.store import Store
from simulation.tiny_gemma import build_tiny_gemma

ray = pytest.importorskip("ray", reason='the Ray executor needs pip install "needlejudge[ray]"')
pytest.importorskip("ray.data.llm")

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.timeout(900)]


def rows(summary) -> list[tuple]:  # type: ignore[no-untyped-def]
    lines = open(summary.results_jsonl).read().splitlines()
    return [
        (r["needle"], r["i"], r["doc_id"], r["status"], r["score"], r["raw_text"], r["prompt_tokens"], r["completion_tokens"])
        for r in map(json.loads, lines)
    ]


def answers(summary, store: Path) -> dict[str, tuple]:  # type: ignore[no-untyped-def]
    """Each call's cached answer as the adapter returned it (text, finish reason, tokens, model version)."""
    keys = [key for line in open(summary.results_jsonl).read().splitlines() for key in json.loads(line)["cache_keys"]]
    with Store(store, readonly=True) as opened:
        hits = CallCache(opened).get_many([bytes.fromhex(key) for key in keys])
    return {key: (hit.status, hit.text, hit.finish_reason, hit.usage.prompt_tokens, hit.usage.completion_tokens, hit.model_version)
            for key, hit in zip(keys, hits)}


@pytest.mark.skipif(
    os.environ.get("NEEDLEJUDGE_SKIP_RAY_VLLM") == "1",
    reason="two vLLM engine starts (~3-5 min on 2 cores): .ci/run skips it to stay under 15 minutes; run it with scripts/test",
)
def test_tiny_gemma_through_ray_data_llm_gives_the_in_process_runs_rows(tmp_path, corpus_slice_path):  # type: ignore[no-untyped-def]
    require_vllm()
    from adapters.executors import RayData
    from engine.run.runner import run_experiment

    model = build_tiny_gemma(tmp_path / "tiny")
    judge = {"name": "tiny", "adapter": "vllm", "model": str(model), "concurrency": 16, "options": ENGINE_OPTIONS}
    previous = set_engine_env()
    # more logical CPUs than this box's cores: the engine actor, its placement
    # bundle and the render / answer tasks each hold one share
    ray.init(num_cpus=8, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        plain = run_experiment(experiment_config(tmp_path / "plain", corpus_slice_path, judge))
        config = experiment_config(tmp_path / "ray", corpus_slice_path, judge)
        waved = run_experiment(config, executor=RayData(address="local", workers=1))
        again = run_experiment(config)  # in-process workers: every answer is cached
    finally:
        ray.shutdown()
        restore_env(previous)
    assert plain.rows == 20 and {r[3] for r in rows(plain)} == {"ok"}
    assert waved.batch_waves == 1 and waved.calls_network == plain.calls_network
    assert rows(waved) == rows(plain) and waved.stop_reasons == plain.stop_reasons
    assert again.calls_network == 0 and rows(again) == rows(plain)
    assert answers(waved, tmp_path / "ray" / "store") == answers(plain, tmp_path / "plain" / "store")


def test_what_the_engine_is_not_asked_or_fails_is_answered_as_in_process(tmp_path):  # type: ignore[no-untyped-def]
    require_vllm()
    import msgspec

    from adapters.ray_vllm import _renderer, answer, render_row
    from adapters.vllm import Refused, prepare
    from engine.contracts import JudgeSpec

    model = build_tiny_gemma(tmp_path / "tiny")
    spec = JudgeSpec(name="tiny", adapter="vllm", model=str(model), options={**ENGINE_OPTIONS, "max_model_len": 160})
    spec_bytes = msgspec.msgpack.encode(spec)
    request = judge_request(str(model), "A sentence of the document. " * 40)
    row = {"key": "k", "request": msgspec.msgpack.encode(request)}
    rendered = render_row(spec_bytes, dict(row))
    renderer = _renderer(spec_bytes)
    expected = prepare(renderer.tokenizer, request, fold=renderer.fold, max_model_len=160)
    assert isinstance(expected, Refused) and expected.error_kind == "context_length"
    # the engine gets a one-token placeholder, unguided; the answer is the in-process error
    assert len(rendered["tokenized_prompt"]) == 1 and rendered["budget"] == 1
    assert rendered["sampling_params"]["structured_outputs"] is None
    engine_output = {"generated_tokens": [7], "generated_text": "x", "num_input_tokens": 1, "__inference_error__": "", "time_taken_llm": 0.1}
    result = answer({**row, **rendered, **engine_output})
    assert (result.status, result.error_kind, result.text, result.usage.prompt_tokens) == ("error", "context_length", expected.text, expected.prompt_tokens)
    # an engine error about the row: classified as the in-process adapter classifies the engine's exceptions
    fits = render_row(spec_bytes, {"key": "k", "request": msgspec.msgpack.encode(judge_request(str(model), "Short."))})
    assert not fits["refused"] and fits["sampling_params"]["structured_outputs"] == {"regex": request.decoding.guided_regex}
    for error, kind in [("VLLMValidationError: the prompt is longer than the maximum model length", "context_length"),
                        ("VLLMValidationError: bad top_p", "bad_request"), ("RuntimeError: engine step failed", "server")]:
        failed = answer({**row, **fits, **engine_output, "__inference_error__": error})
        assert (failed.status, failed.error_kind, failed.text) == ("error", kind, error)


def test_replicas_parallel_sizes_and_a_local_instances_cpus() -> None:
    from adapters.ray_vllm import local_cpus, replicas_and_options
    from engine.contracts import JudgeSpec

    spec = JudgeSpec(name="g", adapter="vllm", model="m", options={"tensor_parallel_size": 2, "pipeline_parallel_size": 2})
    replicas, options = replicas_and_options(spec, 3)  # --ray-workers 3
    assert replicas == 3 and options["tensor_parallel_size"] == 2 and options["pipeline_parallel_size"] == 2
    assert local_cpus(spec, 3) == 3 * 4 + 1  # each replica's TP x PP bundles, and one for the render / answer tasks
    by_option = JudgeSpec(name="g", adapter="vllm", model="m", options={"data_parallel_size": 5})
    replicas, options = replicas_and_options(by_option, 3)
    assert replicas == 5 and "data_parallel_size" not in options  # the judge's own replica count wins, not an engine arg
