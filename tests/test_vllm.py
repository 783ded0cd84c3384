"""The in-process vLLM backend (adapters/vllm.py) on a real vLLM engine on CPU:
a tiny Gemma-3-architecture model with random weights (load_format="dummy")
built by simulation/tiny_gemma.py. One engine is shared by the module; the last
engine test closes it and checks that no engine process is left.
"""

from __future__ import annotations

import json
import re

import anyio
import pytest
from vllm_fixtures import (
    ENGINE_ENV,
    ENGINE_OPTIONS,
    MAX_MODEL_LEN,
    experiment_config,
    judge_request,
    parse_score,
    require_vllm,
    restore_env,
    set_engine_env,
)

from engine.registry import create_adapter
from simulation.tiny_gemma import SPECIAL_TOKENS, build_tiny_gemma
from adapters.vllm import (
    VllmAdapter,
    VllmStartupError,
    chat_token_ids,
    fold_system,
    template_takes_system,
    validate_options,
)
from engine.contracts import Adapter, AdapterConfigError, JudgeSpec, Message

pytestmark = pytest.mark.anyio

STARTUP = {"ticks": 0, "seconds": 0.0}  # filled by the `adapter` fixture


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"  # vLLM's AsyncLLM is asyncio-only


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    return build_tiny_gemma(tmp_path_factory.mktemp("tiny_gemma"))


def spec_for(model, **options) -> JudgeSpec:
    return JudgeSpec(name="tiny", adapter="vllm", model=str(model), concurrency=256, options={**ENGINE_OPTIONS, **options})


@pytest.fixture(scope="module")
async def adapter(tiny_model):
    require_vllm()
    previous = set_engine_env()
    judge = create_adapter(spec_for(tiny_model))
    try:
        # count event-loop ticks while the engine loads (it must not block the loop)
        async with anyio.create_task_group() as tg:

            async def tick() -> None:
                while True:
                    await anyio.sleep(0.1)
                    STARTUP["ticks"] += 1

            tg.start_soon(tick)
            started = anyio.current_time()
            await judge.start()
            STARTUP["seconds"] = anyio.current_time() - started
            tg.cancel_scope.cancel()
        yield judge
    finally:
        await judge.aclose()
        restore_env(previous)


# -- no engine needed ----------------------------------------------------------


def test_tiny_model_folder(tiny_model):
    config = json.loads((tiny_model / "config.json").read_text())
    assert config["architectures"] == ["Gemma3ForCausalLM"]
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tiny_model / "tokenizer.json"))
    assert config["vocab_size"] == tokenizer.get_vocab_size()
    assert [tokenizer.token_to_id(t) for t in SPECIAL_TOKENS] == list(range(len(SPECIAL_TOKENS)))
    text = "The Treaty of Paris was signed in 1783, ending the war."
    assert tokenizer.decode(tokenizer.encode(text).ids) == text
    # trained on the corpus: common words are single tokens, not bytes
    assert len(tokenizer.encode(text).ids) < len(text) / 2
    assert "chat_template" in json.loads((tiny_model / "tokenizer_config.json").read_text())


def test_unknown_and_bad_options_are_named(tiny_model):
    with pytest.raises(AdapterConfigError, match="'max_len'"):
        create_adapter(spec_for(tiny_model, max_len=10))
    with pytest.raises(AdapterConfigError, match=r"options\.gpu_memory_utilization = 1\.5"):
        create_adapter(spec_for(tiny_model, gpu_memory_utilization=1.5))
    with pytest.raises(AdapterConfigError, match=r"options\.tensor_parallel_size = True"):
        create_adapter(spec_for(tiny_model, tensor_parallel_size=True))
    with pytest.raises(AdapterConfigError, match=r"options\.distributed_executor_backend = 'threads': expected 'mp', 'uni' or 'ray'"):
        create_adapter(spec_for(tiny_model, distributed_executor_backend="threads"))
    assert validate_options(spec_for(tiny_model))["enable_prefix_caching"] is True


def test_data_parallel_size_reaches_the_engine_args(tiny_model):
    judge = create_adapter(spec_for(tiny_model, data_parallel_size=8, tensor_parallel_size=2))
    args = judge._engine_args()  # built, not started: no GPU here
    assert (args.data_parallel_size, args.tensor_parallel_size) == (8, 2)
    assert create_adapter(spec_for(tiny_model))._engine_args().data_parallel_size == 1
    for bad in (0, -2, True, 2.0, "8"):
        with pytest.raises(AdapterConfigError, match=rf"options\.data_parallel_size = {re.escape(repr(bad))}: expected a positive int"):
            create_adapter(spec_for(tiny_model, data_parallel_size=bad))


def test_missing_model_folder(tmp_path):
    with pytest.raises(AdapterConfigError, match="does not exist"):
        create_adapter(spec_for(tmp_path / "nowhere"))
    with pytest.raises(AdapterConfigError, match="no config.json"):
        create_adapter(spec_for(tmp_path))


def test_fold_system_into_first_user_turn():
    messages = (Message("system", "Be terse."), Message("user", "Rate this."), Message("assistant", "50"), Message("user", "Again."))
    assert fold_system(messages) == [
        {"role": "user", "content": "Be terse.\n\nRate this."},
        {"role": "assistant", "content": "50"},
        {"role": "user", "content": "Again."},
    ]
    assert fold_system((Message("user", "Hi"),)) == [{"role": "user", "content": "Hi"}]


# Gemma 2's template has no system role and refuses one.
NO_SYSTEM_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}"
    "{% if m['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
    "{{ '<start_of_turn>' ~ ('model' if m['role'] == 'assistant' else m['role']) ~ '\\n' ~ m['content'] ~ '<end_of_turn>\\n' }}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<start_of_turn>model\\n' }}{% endif %}"
)


def test_chat_formatting_folds_system_for_templates_without_it(tiny_model):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model))
    assert template_takes_system(tokenizer)  # the tiny model's own (Gemma 3 style) template folds it itself
    messages = (Message("system", "Be strict."), Message("user", "Rate it."))
    own = tokenizer.decode(chat_token_ids(tokenizer, messages, fold=False))
    tokenizer.chat_template = NO_SYSTEM_TEMPLATE
    assert not template_takes_system(tokenizer)
    folded = tokenizer.decode(chat_token_ids(tokenizer, messages, fold=True))
    assert folded == own == "<bos><start_of_turn>user\nBe strict.\n\nRate it.<end_of_turn>\n<start_of_turn>model\n"


# -- real engine -----------------------------------------------------------------


@pytest.mark.vllm
@pytest.mark.slow
async def test_missing_hub_model_is_a_clear_startup_error(monkeypatch):
    require_vllm()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    judge = create_adapter(JudgeSpec(name="ghost", adapter="vllm", model="needlejudge-tests/no-such-model"))
    with pytest.raises(VllmStartupError, match="cannot load model 'needlejudge-tests/no-such-model'"):
        await judge.start()
    # calls waiting for the engine fail with the same error, without another load attempt
    with pytest.raises(VllmStartupError, match="no-such-model"):
        await judge.complete(judge_request("needlejudge-tests/no-such-model", "x"))
    await judge.aclose()


@pytest.mark.vllm
@pytest.mark.slow
async def test_out_of_memory_at_start_is_a_clear_error_and_leaves_no_process(monkeypatch, tiny_model):
    require_vllm()
    from adapters.child_processes import own_children

    # vLLM's CPU worker checks the requested KV cache against free memory (the CPU twin of a GPU OOM)
    for key, value in ENGINE_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "100000")
    before = own_children()
    judge = create_adapter(spec_for(tiny_model))
    with pytest.raises(VllmStartupError, match="failed to start.*gpu_memory_utilization"):
        await judge.start()
    assert own_children() - before == set()
    await judge.aclose()


@pytest.mark.vllm
@pytest.mark.slow
async def test_engine_start_leaves_the_event_loop_running(adapter: VllmAdapter):
    assert STARTUP["seconds"] > 2  # vLLM takes a while to load even the tiny model
    # a blocked loop would tick ~once; allow for a loaded machine
    assert STARTUP["ticks"] >= STARTUP["seconds"] / 0.1 / 4


@pytest.mark.vllm
@pytest.mark.slow
async def test_guided_decoding_gives_parseable_scores_under_load(adapter: VllmAdapter, tiny_model):
    assert isinstance(adapter, Adapter)
    assert adapter.capabilities.guided_decoding and adapter.capabilities.seed and adapter.capabilities.prompt_caching
    documents = [f"Article {n} describes the town's history and its river." for n in range(200)]
    results = [None] * len(documents)

    async def one(n: int) -> None:
        results[n] = await adapter.complete(judge_request(str(tiny_model), documents[n]))

    async with anyio.create_task_group() as tg:
        for n in range(len(documents)):
            tg.start_soon(one, n)
    for n, result in enumerate(results):
        assert result.status == "ok", result
        assert 0 <= parse_score(result.text) <= 100
        expected_prompt = adapter.prompt_token_ids(judge_request(str(tiny_model), documents[n]).messages)
        assert result.usage.prompt_tokens == len(expected_prompt)
        assert 1 <= result.usage.completion_tokens <= 8
        assert result.model_version == f"{tiny_model} (vllm {__import__('vllm').__version__})"
        assert result.finish_reason in {"stop", "length"}


@pytest.mark.vllm
@pytest.mark.slow
async def test_prefix_cache_serves_the_shared_rubric(adapter: VllmAdapter, tiny_model):
    # a rubric-sized shared prefix (~300 tokens), as in the real prompts
    rubric = " ".join(f"Rule {n}: judge the meaning of each sentence, never its wording." for n in range(20))
    first = judge_request(str(tiny_model), f"{rubric}\nFirst pair.")
    second = judge_request(str(tiny_model), f"{rubric}\nSecond pair.")
    cold = await adapter.complete(first)
    warm = await adapter.complete(second)
    assert cold.status == warm.status == "ok"
    assert cold.usage.prompt_tokens > 300
    # full KV blocks of the shared prefix come from the cache (block size <= prompt)
    assert 0 < warm.usage.cached_tokens < warm.usage.prompt_tokens


@pytest.mark.vllm
@pytest.mark.slow
async def test_chat_template_formats_turns(adapter: VllmAdapter, tiny_model):
    request = judge_request(str(tiny_model), "Some text.")
    text = adapter._engine.tokenizer.decode(adapter.prompt_token_ids(request.messages), skip_special_tokens=False)
    assert text.startswith("<bos><start_of_turn>user\nYou rate how similar two documents are, from 0 to 100.\n\nDocument 1:")
    assert text.endswith("<end_of_turn>\n<start_of_turn>model\n")
    assert "system" not in text


@pytest.mark.vllm
@pytest.mark.slow
async def test_json_schema_and_seeded_sampling(adapter: VllmAdapter, tiny_model):
    schema = {
        "type": "object",
        "properties": {"score": {"type": "integer", "minimum": 0, "maximum": 100}},
        "required": ["score"],
        "additionalProperties": False,
    }
    request = judge_request(
        str(tiny_model), "A short text.", guided_regex=None, json_schema=json.dumps(schema), response_format="json", max_tokens=40
    )
    result = await adapter.complete(request)
    assert result.status == "ok", result
    if result.finish_reason == "stop":
        assert set(json.loads(result.text)) == {"score"}
    # the same seed at temperature 1 reproduces the sample
    sampled = judge_request(str(tiny_model), "Another text.", temperature=1.0, seed=1234, guided_regex=None, max_tokens=12)
    first, second = await adapter.complete(sampled), await adapter.complete(sampled)
    assert first.status == second.status == "ok"
    assert first.text == second.text and first.usage.completion_tokens == 12


@pytest.mark.vllm
@pytest.mark.slow
async def test_prompt_longer_than_context_is_an_error_result(adapter: VllmAdapter, tiny_model):
    long_document = "The river flows past the old mill and the church. " * 400
    result = await adapter.complete(judge_request(str(tiny_model), long_document))
    assert result.status == "error"
    assert result.error_kind == "context_length"
    assert result.score is None
    assert result.usage.prompt_tokens > MAX_MODEL_LEN
    assert str(MAX_MODEL_LEN) in result.text
    # and the engine still serves the next request
    assert (await adapter.complete(judge_request(str(tiny_model), "Short."))).status == "ok"


@pytest.mark.vllm
@pytest.mark.slow
async def test_cancellation_aborts_in_flight_requests(adapter: VllmAdapter, tiny_model):
    finished = []

    async def long_call(n: int) -> None:
        finished.append(await adapter.complete(judge_request(str(tiny_model), f"Text {n}.", guided_regex=None, max_tokens=1500)))

    in_flight_seen = 0
    async with anyio.create_task_group() as tg:
        for n in range(60):
            tg.start_soon(long_call, n)
        with anyio.fail_after(120):
            while adapter.unfinished_requests() + len(finished) < 60:
                await anyio.sleep(0.05)
        in_flight_seen = adapter.unfinished_requests()
        tg.cancel_scope.cancel()
    assert in_flight_seen > 0 and len(finished) < 60
    with anyio.fail_after(30):
        while adapter.unfinished_requests():
            await anyio.sleep(0.05)
    result = await adapter.complete(judge_request(str(tiny_model), "After the cancellation."))
    assert result.status == "ok" and parse_score(result.text) >= 0


@pytest.mark.vllm
@pytest.mark.slow
async def test_aclose_leaves_no_engine_process(adapter: VllmAdapter, tiny_model, monkeypatch):
    engine_pids = adapter.engine_pids()
    assert engine_pids, "the engine core runs in child processes"
    engine = adapter._engine
    await adapter.aclose()
    psutil = pytest.importorskip("psutil")  # ships with vllm
    alive = [pid for pid in engine_pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert alive == []
    # The closed engine's __del__ as it runs at interpreter exit, when module
    # globals are None: it must not raise (the user would see its traceback).
    from vllm.v1.engine import async_llm

    monkeypatch.setattr(async_llm, "shutdown_prometheus", None)
    engine.__del__()
    del engine
    result = await adapter.complete(judge_request(str(tiny_model), "After close."))
    assert result.status == "error" and result.error_kind == "closed"


# -- the whole engine on top ---------------------------------------------------


@pytest.mark.vllm
@pytest.mark.slow
async def test_small_experiment_through_the_in_process_backend(tmp_path, tiny_model, corpus_slice_path):
    require_vllm()
    from engine.run.runner import arun_experiment

    judge = {"name": "tiny", "adapter": "vllm", "model": str(tiny_model), "concurrency": 128, "options": ENGINE_OPTIONS}
    config = experiment_config(tmp_path, corpus_slice_path, judge)
    previous = set_engine_env()
    try:
        summary = await arun_experiment(config)
    finally:
        restore_env(previous)
    rows = [json.loads(line) for line in open(summary.results_jsonl)]
    assert summary.cells == 4 and len(rows) == summary.rows == 20
    assert {r["status"] for r in rows} == {"ok"}, [r for r in rows if r["status"] != "ok"][:3]
    assert all(0 <= r["score"] <= 100 and r["raw_text"].strip().isdigit() for r in rows)
    assert all(r["model_version"].startswith(str(tiny_model)) and r["prompt_tokens"] > 100 for r in rows)
    assert summary.calls_network == 20
    # a re-run is answered from the cache: no engine is even started
    again = await arun_experiment(config)
    assert again.calls_network == 0 and again.rows == 20
    rerun_rows = [json.loads(line) for line in open(again.results_jsonl)]
    assert sorted((r["doc_id"], r["needle"], r["i"], r["score"]) for r in rerun_rows) == sorted(
        (r["doc_id"], r["needle"], r["i"], r["score"]) for r in rows
    )
