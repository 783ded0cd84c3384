"""In-process vLLM judge backend (adapter "vllm").

vLLM's async engine (AsyncLLM) runs inside the scheduler's event loop: every
`complete` call is one engine request, so with hundreds of calls in flight
the engine's continuous batching stays full, without an HTTP hop. The
engine core and its workers are child processes; `aclose` shuts them down
and reaps anything left behind.

Settings come from the judge spec: `model` (a Hugging Face id or a local
folder), `revision`, and `options` (see OPTION_TYPES). Chat formatting uses
the model's own chat template; when the template has no system role (Gemma),
system text is folded into the first user turn. Decoding follows the
request: max_tokens, temperature, top_p, stop, seed, and guided decoding
from `guided_regex` / `json_schema`. The answer is returned raw: the prompt
layer parses it.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import time
import uuid
from pathlib import Path
from typing import Any, NamedTuple

import anyio

from adapters.child_processes import own_children, reap_processes, with_descendants
from engine.contracts import (
    Backend,
    AdapterConfigError,
    CallRequest,
    CallResult,
    Capabilities,
    Decoding,
    JudgeSpec,
    Message,
    Usage,
)

# option name -> (accepted types, what is expected); anything else is rejected.
OPTION_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "dtype": ((str,), "'auto', 'bfloat16', 'float16' or 'float32'"),
    "max_model_len": ((int,), "a positive int (context length in tokens)"),
    "gpu_memory_utilization": ((float, int), "a number in (0, 1]"),
    "tensor_parallel_size": ((int,), "a positive int (number of GPUs)"),
    "pipeline_parallel_size": ((int,), "a positive int (pipeline stages, each on tensor_parallel_size GPUs)"),
    "data_parallel_size": ((int,), "a positive int (engine replicas, each on tensor_parallel_size GPUs)"),
    "enable_prefix_caching": ((bool,), "true or false (default true: the rubric prefix is shared)"),
    "seed": ((int,), "an int (engine seed)"),
    "load_format": ((str,), "a vLLM load format, e.g. 'auto', 'safetensors', 'dummy'"),
    "enforce_eager": ((bool,), "true or false (skip graph compilation: faster start)"),
    "max_num_seqs": ((int,), "a positive int (max sequences per engine step)"),
    "max_num_batched_tokens": ((int,), "a positive int (token budget per engine step)"),
    "quantization": ((str,), "a vLLM quantization method, e.g. 'fp8', 'awq'"),
    "kv_cache_dtype": ((str,), "'auto' or 'fp8'"),
    "download_dir": ((str,), "a folder for downloaded weights"),
    "tokenizer": ((str,), "a tokenizer id or folder (default: the model's)"),
    "trust_remote_code": ((bool,), "true or false"),
    "language_model_only": ((bool,), "true or false (multimodal Gemma 3 4B/12B/27B: skip the vision tower)"),
    "distributed_executor_backend": ((str,), "'mp', 'uni' or 'ray' (vLLM's executor; 'uni' runs the one worker inside the engine process: one process start less; on CPU only with VLLM_ENABLE_V1_MULTIPROCESSING=0)"),
}
_POSITIVE_INTS = {"max_model_len", "tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size", "max_num_seqs", "max_num_batched_tokens"}
DEFAULT_OPTIONS: dict[str, Any] = {"enable_prefix_caching": True, "seed": 0}

CAPABILITIES = Capabilities(seed=True, guided_decoding=True, batch_api=False, prompt_caching=True)


class VllmStartupError(AdapterConfigError):
    """The vLLM engine could not be started for a judge (model, memory, options)."""


def validate_options(spec: JudgeSpec) -> dict[str, Any]:
    """The judge's vLLM options merged over the defaults; unknown keys or bad values raise."""
    where = f"judge {spec.name!r} (adapter vllm): options"
    unknown = sorted(set(spec.options) - set(OPTION_TYPES))
    if unknown:
        raise AdapterConfigError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; expected some of {', '.join(OPTION_TYPES)}")
    options = {**DEFAULT_OPTIONS, **spec.options}
    for key, value in options.items():
        types, expected = OPTION_TYPES[key]
        # bool is an int subclass: never accept true/false for a number
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise AdapterConfigError(f"{where}.{key} = {value!r}: expected {expected}")
        if key in _POSITIVE_INTS and value < 1:
            raise AdapterConfigError(f"{where}.{key} = {value!r}: expected {expected}")
        if key == "gpu_memory_utilization" and not 0 < value <= 1:
            raise AdapterConfigError(f"{where}.{key} = {value!r}: expected {expected}")
        if key == "distributed_executor_backend" and value not in ("mp", "uni", "ray"):
            raise AdapterConfigError(f"{where}.{key} = {value!r}: expected {expected}")
    return options


def _looks_like_local_path(model: str) -> bool:
    return model.startswith(("/", "./", "../", "~")) or os.path.exists(model)


def check_model(spec: JudgeSpec) -> None:
    """Fail early and clearly on a local model folder that is not there."""
    if not spec.model.strip():
        raise AdapterConfigError(f"judge {spec.name!r} (adapter vllm): model is empty; expected a Hugging Face id or a model folder")
    if _looks_like_local_path(spec.model):
        folder = Path(spec.model).expanduser()
        if not folder.is_dir():
            raise AdapterConfigError(f"judge {spec.name!r} (adapter vllm): model folder {str(folder)!r} does not exist")
        if not (folder / "config.json").is_file():
            raise AdapterConfigError(
                f"judge {spec.name!r} (adapter vllm): model folder {str(folder)!r} has no config.json; expected a Hugging Face model folder"
            )


def fold_system(messages: tuple[Message, ...]) -> list[dict[str, str]]:
    """Chat turns for templates without a system role: system text goes first in the first user turn."""
    system = "\n\n".join(m.content for m in messages if m.role == "system")
    turns = [{"role": m.role, "content": m.content} for m in messages if m.role != "system"]
    if system:
        if turns and turns[0]["role"] == "user":
            turns[0] = {"role": "user", "content": f"{system}\n\n{turns[0]['content']}"}
        else:
            turns.insert(0, {"role": "user", "content": system})
    return turns


def template_takes_system(tokenizer: Any) -> bool:
    """Whether the chat template renders a system turn (Gemma 2's raises, some drop it)."""
    probe = "needlejudge-system-probe"
    try:
        text = tokenizer.apply_chat_template(
            [{"role": "system", "content": probe}, {"role": "user", "content": "hello"}],
            tokenize=False,
            add_generation_prompt=True,
        )
    except Exception:
        return False
    return probe in text


def chat_token_ids(tokenizer: Any, messages: tuple[Message, ...], *, fold: bool) -> list[int]:
    """Messages through the tokenizer's chat template (system folded in when `fold`), as token ids."""
    turns = fold_system(messages) if fold else [{"role": m.role, "content": m.content} for m in messages]
    text = tokenizer.apply_chat_template(turns, tokenize=False, add_generation_prompt=True)
    # The template writes <bos> itself.
    return list(tokenizer.encode(text, add_special_tokens=False))


def sampling_fields(decoding: Decoding, max_tokens: int) -> dict[str, Any]:
    """A request's sampling settings as plain values (SamplingParams' keyword
    arguments; `structured_outputs` as StructuredOutputsParams' keyword
    arguments, a JSON schema as the text vLLM makes of a dict): the same
    for the in-process engine and ray.data.llm's rows (adapters/ray_vllm.py)."""
    if decoding.guided_regex and decoding.json_schema:
        raise ValueError("decoding has both guided_regex and json_schema; expected at most one")
    structured: dict[str, Any] | None = None
    if decoding.guided_regex:
        structured = {"regex": decoding.guided_regex}
    elif decoding.json_schema:
        structured = {"json": json.dumps(json.loads(decoding.json_schema))}
    elif decoding.response_format == "json":
        structured = {"json_object": True}
    return {
        "temperature": decoding.temperature,
        "top_p": decoding.top_p,
        "max_tokens": max_tokens,
        "seed": decoding.seed,
        "stop": list(decoding.stop) or None,
        "structured_outputs": structured,
    }


def sampling_params(decoding: Decoding, max_tokens: int) -> Any:
    """vLLM SamplingParams for one request (final output only)."""
    from vllm import SamplingParams
    from vllm.sampling_params import RequestOutputKind, StructuredOutputsParams

    fields = sampling_fields(decoding, max_tokens)
    structured = fields.pop("structured_outputs")
    return SamplingParams(
        **fields,
        structured_outputs=StructuredOutputsParams(**structured) if structured else None,
        output_kind=RequestOutputKind.FINAL_ONLY,
    )


class Prepared(NamedTuple):
    """A request ready for the engine: its prompt's token ids and output budget."""

    prompt_ids: list[int]
    max_tokens: int
    params: Any  # vllm.SamplingParams


class Refused(NamedTuple):
    """A request the engine is not asked: the error it is answered with."""

    error_kind: str
    text: str
    prompt_tokens: int = 0


def prepare(tokenizer: Any, request: CallRequest, *, fold: bool, max_model_len: int) -> Prepared | Refused:
    """Render a request as the engine gets it (chat template, the output
    budget clamped to what fits, as vLLM's server does), or the error about
    the item it is answered with instead (in-process and on Ray alike)."""
    try:
        prompt_ids = chat_token_ids(tokenizer, request.messages, fold=fold)
    except Exception as exc:
        return Refused("bad_request", f"chat template failed: {type(exc).__name__}: {exc}")
    n_prompt = len(prompt_ids)
    if n_prompt >= max_model_len:
        return Refused(
            "context_length",
            f"prompt has {n_prompt} tokens; max_model_len is {max_model_len} and at least one output token must fit",
            n_prompt,
        )
    max_tokens = min(request.decoding.max_tokens, max_model_len - n_prompt)
    try:
        params = sampling_params(request.decoding, max_tokens)
    except Exception as exc:
        return Refused("bad_request", f"bad decoding settings: {type(exc).__name__}: {exc}")
    return Prepared(prompt_ids, max_tokens, params)


def _already_shut_down(timeout: float | None = None) -> None:
    """A shut-down engine's shutdown (see VllmAdapter.aclose)."""


class VllmAdapter:
    """A judge served by an in-process vLLM AsyncLLM engine."""

    capabilities = CAPABILITIES

    def __init__(self, spec: JudgeSpec) -> None:
        check_model(spec)
        self.spec = spec
        self.options = validate_options(spec)
        self._engine: Any = None
        self._start_lock = anyio.Lock()
        self._closed = False
        self._start_error: VllmStartupError | None = None
        self._engine_pids: set[int] = set()
        self._ids = itertools.count()
        self._id_prefix = f"nj-{uuid.uuid4().hex[:8]}"
        self._fold_system = False
        self.max_model_len = 0
        self.model_version = ""

    # -- lifecycle -----------------------------------------------------------
    async def start(self) -> None:
        """Start the engine (idempotent).

        Loading takes seconds to minutes, so it runs in a worker thread: other
        judges in the same run keep working meanwhile. vLLM's async client binds
        its queues and sockets to the event loop lazily, on first use.
        """
        async with self._start_lock:
            if self._closed:
                raise RuntimeError(f"judge {self.spec.name!r}: the vLLM adapter is closed")
            if self._start_error is not None:
                raise self._start_error  # every waiting call fails at once, no reload per call
            if self._engine is None:
                try:
                    await anyio.to_thread.run_sync(self._start_engine)
                except VllmStartupError as exc:
                    self._start_error = exc
                    raise

    def _engine_args(self) -> Any:
        from vllm.engine.arg_utils import AsyncEngineArgs

        revision = self.spec.revision or None
        return AsyncEngineArgs(
            model=self.spec.model,
            revision=revision,
            tokenizer_revision=revision,
            disable_log_stats=True,
            enable_log_requests=False,
            **self.options,
        )

    def _start_engine(self) -> None:
        import vllm
        from vllm.usage.usage_lib import UsageContext
        from vllm.v1.engine.async_llm import AsyncLLM

        name, model = self.spec.name, self.spec.model
        try:
            # Resolves the model's config in this process, so a missing or
            # unreachable model fails here with its real error.
            vllm_config = self._engine_args().create_engine_config(UsageContext.ENGINE_CONTEXT)
        except Exception as exc:
            raise VllmStartupError(
                f"judge {name!r} (adapter vllm): cannot load model {model!r}"
                f"{' at revision ' + repr(self.spec.revision) if self.spec.revision else ''}: {type(exc).__name__}: {exc}. "
                "Expected a Hugging Face model id available here (downloadable, or in the HF cache) or a local model folder."
            ) from exc
        before = own_children()
        try:
            engine = AsyncLLM.from_vllm_config(vllm_config, disable_log_stats=True, enable_log_requests=False)
        except Exception as exc:
            reap_processes(own_children() - before, timeout_s=5)
            text = f"{type(exc).__name__}: {exc}"
            hint = (
                "Out of memory is the usual cause (see the engine log above): lower gpu_memory_utilization "
                "or max_model_len, use a smaller dtype or quantization, or raise tensor_parallel_size."
            )
            if "memory" in text.lower():
                hint = "Out of memory: lower gpu_memory_utilization or max_model_len, or raise tensor_parallel_size."
            raise VllmStartupError(f"judge {name!r} (adapter vllm): the vLLM engine for {model!r} failed to start: {text}. {hint}") from exc
        self._engine = engine
        self._engine_pids = own_children() - before
        self.max_model_len = int(vllm_config.model_config.max_model_len)
        revision = f"@{self.spec.revision}" if self.spec.revision else ""
        self.model_version = f"{model}{revision} (vllm {vllm.__version__})"
        self._fold_system = not template_takes_system(engine.tokenizer)

    async def aclose(self) -> None:
        """Shut the engine down and reap its processes (idempotent)."""
        async with self._start_lock:
            self._closed = True
            engine, self._engine = self._engine, None
            if engine is None:
                return
            pids = with_descendants(self._engine_pids)
            with anyio.CancelScope(shield=True):
                # Synchronous: the engine client's sockets belong to this loop's thread.
                engine.shutdown()
                # AsyncLLM.__del__ calls shutdown() again. The object can live until
                # interpreter exit (an import error vLLM keeps, e.g. torchcodec's,
                # holds a traceback whose frames hold the engine), and a shutdown
                # run then, without its module globals, prints a traceback under
                # the user's finished run.
                engine.shutdown = _already_shut_down
                await anyio.to_thread.run_sync(reap_processes, pids)

    def unfinished_requests(self) -> int:
        """Requests the engine holds right now (0 before start and after close)."""
        return 0 if self._engine is None else int(self._engine.get_num_unfinished_requests())

    def engine_pids(self) -> set[int]:
        """The engine's processes (engine core, workers) while it runs."""
        return with_descendants(self._engine_pids) if self._engine is not None else set()

    async def __aenter__(self) -> VllmAdapter:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    # -- calls ---------------------------------------------------------------
    def prompt_token_ids(self, messages: tuple[Message, ...]) -> list[int]:
        """The request's messages through the model's chat template, as token ids."""
        return chat_token_ids(self._engine.tokenizer, messages, fold=self._fold_system)

    def _result(self, status: str, text: str, started: float, t0: float, *, error_kind: str = "", **fields: Any) -> CallResult:
        return CallResult(
            status=status,
            text=text,
            error_kind=error_kind,
            model_version=self.model_version,
            started_at=started,
            finished_at=time.time(),
            latency_s=time.perf_counter() - t0,
            **fields,
        )

    async def complete(self, request: CallRequest) -> CallResult:
        from vllm.exceptions import VLLMValidationError
        from vllm.inputs import TokensPrompt
        from vllm.v1.engine.exceptions import EngineDeadError

        if self._engine is None and not self._closed:
            await self.start()
        # stamped once the engine is up: its start-up (seconds to minutes) is no
        # call's latency, and a span of calls (benchmarks' calls/s) must not hold it
        started, t0 = time.time(), time.perf_counter()
        engine = self._engine
        if engine is None:
            return self._result("error", "the vLLM engine is shut down", started, t0, error_kind="closed")
        prepared = prepare(engine.tokenizer, request, fold=self._fold_system, max_model_len=self.max_model_len)
        if isinstance(prepared, Refused):
            usage = Usage(prompt_tokens=prepared.prompt_tokens)
            return self._result("error", prepared.text, started, t0, error_kind=prepared.error_kind, usage=usage)
        prompt_ids, n_prompt, params = prepared.prompt_ids, len(prepared.prompt_ids), prepared.params

        request_id = f"{self._id_prefix}-{next(self._ids)}"
        final = None
        try:
            async with contextlib.aclosing(engine.generate(TokensPrompt(prompt_token_ids=prompt_ids), params, request_id)) as outputs:
                async for output in outputs:
                    final = output
        except anyio.get_cancelled_exc_class():
            # anyio re-delivers cancellation at every await in a cancelled
            # scope, which could interrupt vLLM's own abort: abort shielded.
            with anyio.CancelScope(shield=True):
                await engine.abort(request_id)
            raise
        except VLLMValidationError as exc:
            kind = "context_length" if "maximum model length" in str(exc) or "context length" in str(exc) else "bad_request"
            return self._result("error", f"{type(exc).__name__}: {exc}", started, t0, error_kind=kind, usage=Usage(prompt_tokens=n_prompt))
        except EngineDeadError as exc:
            return self._result("error", f"vLLM engine died: {exc}", started, t0, error_kind="engine_dead")
        except Exception as exc:
            cause = exc.__cause__ or exc
            return self._result("error", f"{type(cause).__name__}: {cause}", started, t0, error_kind="server")

        if final is None or not final.outputs:
            return self._result("error", "the engine returned no output", started, t0, error_kind="server")
        choice = final.outputs[0]
        usage = Usage(
            prompt_tokens=len(final.prompt_token_ids or prompt_ids),
            completion_tokens=len(choice.token_ids),
            cached_tokens=int(final.num_cached_tokens or 0),
        )
        finish = str(choice.finish_reason or "")
        if finish == "abort":
            return self._result("error", choice.text, started, t0, error_kind="aborted", usage=usage, finish_reason=finish)
        return self._result("ok", choice.text, started, t0, usage=usage, finish_reason=finish)


def create(spec: JudgeSpec) -> VllmAdapter:
    """Registry factory. The engine starts on the first call, or on `await adapter.start()`."""
    return VllmAdapter(spec)


VLLM = Backend(capabilities=lambda spec: CAPABILITIES, create=create, billed=False)
