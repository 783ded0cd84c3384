"""Server mode (adapters/vllm_server.py): a real vLLM OpenAI-compatible server
on 127.0.0.1 with the tiny Gemma-3 model, driven over plain aiohttp, through the
`openai-compatible` adapter with vLLM's structured-output extension, and by a
whole small experiment; then stopped with nothing left behind. One server is
shared by the module; the last test stops it.
"""

from __future__ import annotations

import json

import aiohttp
import anyio
import pytest
from vllm_fixtures import (
    ENGINE_ENV,
    ENGINE_OPTIONS,
    SCORE_REGEX,
    experiment_config,
    judge_request,
    parse_score,
    require_vllm,
)

from engine.registry import create_adapter
from simulation.tiny_gemma import build_tiny_gemma
from adapters.vllm_server import VllmServer, server_flags
from engine.contracts import AdapterConfigError, JudgeSpec

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_gemma(tmp_path_factory.mktemp("tiny_gemma_server"))


def vllm_spec(model) -> JudgeSpec:
    return JudgeSpec(name="tiny", adapter="vllm", model=str(model), concurrency=64, options=ENGINE_OPTIONS)


@pytest.fixture(scope="module")
def server(tiny_model):
    require_vllm()
    # without VLLM_ENABLE_V1_MULTIPROCESSING=0: with the worker inside the engine core, stop() left one of the
    # server's processes alive in 2 of 2 suite runs under load (session 20). The suspect, the server's own resource
    # tracker, is now reaped by stop(); until a loaded suite run shows that was the cause, this server keeps vLLM's
    # own "mp" workers, as it did before session 20
    env = {key: value for key, value in ENGINE_ENV.items() if key != "VLLM_ENABLE_V1_MULTIPROCESSING"}
    with VllmServer.for_spec(vllm_spec(tiny_model), env=env) as running:
        yield running


def test_engine_options_become_server_flags():
    assert server_flags({"dtype": "float32", "max_model_len": 512, "enable_prefix_caching": False, "enforce_eager": True}) == [
        "--dtype", "float32", "--max-model-len", "512", "--no-enable-prefix-caching", "--enforce-eager",
    ]  # fmt: skip


def test_bad_spec_is_rejected_before_any_process(tmp_path, tiny_model):
    with pytest.raises(AdapterConfigError, match="'max_len'"):
        VllmServer.for_spec(JudgeSpec(name="x", adapter="vllm", model=str(tiny_model), options={"max_len": 1}))
    with pytest.raises(AdapterConfigError, match="no config.json"):
        VllmServer.for_spec(JudgeSpec(name="x", adapter="vllm", model=str(tmp_path)))


@pytest.mark.vllm
@pytest.mark.slow
async def test_plain_http_chat_completion_with_structured_output(server: VllmServer, tiny_model):
    assert server.base_url.startswith("http://127.0.0.1:")
    async with aiohttp.ClientSession() as session:
        async with session.get(f"{server.base_url}/models") as reply:
            assert reply.status == 200
            assert [m["id"] for m in (await reply.json())["data"]] == [str(tiny_model)]
        body = {
            "model": str(tiny_model),
            "messages": [
                {"role": "system", "content": "Rate the similarity of two texts."},
                {"role": "user", "content": "Text A: a cat. Text B: a dog."},
            ],
            "max_tokens": 8,
            "temperature": 0,
            "structured_outputs": {"regex": SCORE_REGEX},
        }
        async with session.post(f"{server.base_url}/chat/completions", json=body) as reply:
            assert reply.status == 200, await reply.text()
            answer = await reply.json()
    assert 0 <= parse_score(answer["choices"][0]["message"]["content"]) <= 100
    assert answer["usage"]["prompt_tokens"] > 10


@pytest.mark.vllm
@pytest.mark.slow
async def test_openai_compatible_adapter_on_the_server(server: VllmServer, tiny_model):
    judge = create_adapter(server.compatible_spec(vllm_spec(tiny_model)))
    try:
        results = [None] * 64

        async def one(n: int) -> None:
            results[n] = await judge.complete(judge_request(str(tiny_model), f"Text number {n}.", adapter="openai-compatible"))

        async with anyio.create_task_group() as tg:
            for n in range(len(results)):
                tg.start_soon(one, n)
        assert all(r.status == "ok" for r in results), [r for r in results if r.status != "ok"][:2]
        assert all(0 <= parse_score(r.text) <= 100 and r.usage.prompt_tokens > 10 for r in results)
        too_long = await judge.complete(judge_request(str(tiny_model), "word " * 3000, adapter="openai-compatible"))
        # recorded as a context-length error (not a fatal bad request), as in-process
        assert too_long.status == "error" and too_long.error_kind == "context_length" and too_long.score is None
    finally:
        await judge.aclose()


@pytest.mark.vllm
@pytest.mark.slow
async def test_small_experiment_through_the_server(server: VllmServer, tiny_model, tmp_path, corpus_slice_path):
    from engine.run.runner import arun_experiment

    spec = server.compatible_spec(vllm_spec(tiny_model))
    judge = {"name": spec.name, "adapter": spec.adapter, "model": spec.model, "base_url": spec.base_url, "concurrency": 64, "options": spec.options}
    summary = await arun_experiment(experiment_config(tmp_path, corpus_slice_path, judge))
    rows = [json.loads(line) for line in open(summary.results_jsonl)]
    assert summary.cells == 4 and len(rows) == summary.rows == 20
    assert {r["status"] for r in rows} == {"ok"}, [r for r in rows if r["status"] != "ok"][:3]
    assert all(0 <= r["score"] <= 100 and r["prompt_tokens"] > 100 for r in rows)
    assert summary.calls_network == 20


@pytest.mark.vllm
@pytest.mark.slow
def test_stop_leaves_no_server_process(server: VllmServer):
    pids = server.pids()
    assert len(pids) >= 2, "server, engine core (and workers)"
    server.stop()
    psutil = pytest.importorskip("psutil")  # ships with vllm
    alive = [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == [], [" ".join(psutil.Process(pid).cmdline())[:200] for pid in alive]
