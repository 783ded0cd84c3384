"""OpenAI Chat Completions, Azure OpenAI and any OpenAI-compatible server.

Three factories over one dialect:

- `create`: api.openai.com (or `base_url`), key from OPENAI_API_KEY;
- `create_azure`: `{endpoint}/openai/deployments/{deployment}/chat/completions
  ?api-version=...` with the `api-key` header, key from AZURE_OPENAI_API_KEY;
  options `deployment` (default: the model id), `api_version`, `endpoint`
  (default: base_url or AZURE_OPENAI_ENDPOINT);
- `create_compatible`: vLLM / llama.cpp / Ollama by `base_url`, key optional;
  guided decoding through vLLM's structured-output extension
  (`structured_outputs: {"regex"|"json": ...}`; option
  `structured_outputs: "legacy"` sends the older `guided_regex` /
  `guided_json` fields instead).

OpenAI's automatic prefix cache needs no request field: it relies on the
prompt layer rendering the stable instructions first.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from adapters.dialect import decode_json, MalformedResponse, Reply
from adapters.http import api_key_from_env, HttpAdapter, settings_from_options
from adapters.replicas import REPLICA_OPTIONS, compatible_base_urls, replica_pool
from engine.contracts import AdapterConfigError, Backend, Capabilities, CallRequest, JudgeSpec, Usage

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_AZURE_API_VERSION = "2024-10-21"


class _Message(msgspec.Struct):
    content: str | None = None
    refusal: str | None = None


class _Choice(msgspec.Struct):
    message: _Message = msgspec.field(default_factory=_Message)
    finish_reason: str | None = None


class _PromptDetails(msgspec.Struct):
    cached_tokens: int | None = 0


class _Usage(msgspec.Struct):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_tokens_details: _PromptDetails | None = None


class _Completion(msgspec.Struct):
    choices: list[_Choice]
    model: str = ""
    system_fingerprint: str | None = None
    usage: _Usage | None = None


class _ErrorDetail(msgspec.Struct):
    code: str | int | None = None
    type: str | None = None
    message: str | None = None


class _ErrorBody(msgspec.Struct):
    error: _ErrorDetail


_ENCODER = msgspec.json.Encoder()
_REFUSAL_FINISH = frozenset({"content_filter"})


class ChatCompletionsDialect:
    """The Chat Completions wire format (OpenAI, Azure, compatible servers)."""

    def __init__(
        self,
        provider: str,
        url: str,
        model: str | None,
        *,
        max_tokens_field: str,
        structured_outputs: str | None,
    ) -> None:
        self.provider = provider
        self._url = url
        self._model = model
        self._max_tokens_field = max_tokens_field
        self._structured_outputs = structured_outputs  # None | "structured_outputs" | "legacy"

    def url_and_body(self, request: CallRequest) -> tuple[str, bytes]:
        d = request.decoding
        body: dict[str, Any] = {}
        if self._model is not None:
            body["model"] = self._model
        body["messages"] = [{"role": m.role, "content": m.content} for m in request.messages]
        body["temperature"] = d.temperature
        if d.top_p != 1.0:
            body["top_p"] = d.top_p
        body[self._max_tokens_field] = d.max_tokens
        if d.seed is not None:
            body["seed"] = d.seed
        if d.stop:
            body["stop"] = list(d.stop)
        schema = msgspec.json.decode(d.json_schema) if d.json_schema else None
        if self._structured_outputs and (d.guided_regex or schema is not None):
            if self._structured_outputs == "legacy":
                if d.guided_regex:
                    body["guided_regex"] = d.guided_regex
                else:
                    body["guided_json"] = schema
            elif d.guided_regex:
                body["structured_outputs"] = {"regex": d.guided_regex}
            else:
                body["structured_outputs"] = {"json": schema}
        elif schema is not None:
            body["response_format"] = {"type": "json_schema", "json_schema": {"name": "response", "schema": schema, "strict": True}}
        elif d.response_format == "json":
            body["response_format"] = {"type": "json_object"}
        return self._url, _ENCODER.encode(body)

    def read_reply(self, body: bytes) -> Reply:
        completion = decode_json(body, _Completion)
        if not completion.choices:
            raise MalformedResponse("response has no choices")
        choice = completion.choices[0]
        finish = choice.finish_reason or ""
        usage = completion.usage or _Usage()
        details = usage.prompt_tokens_details
        version = completion.model
        if completion.system_fingerprint:
            version = f"{version}+{completion.system_fingerprint}"
        refused = finish in _REFUSAL_FINISH or choice.message.refusal is not None
        if refused:
            text = body.decode("utf-8", errors="replace")  # keep the raw response
        elif choice.message.content is None:
            raise MalformedResponse(f"choice has no content (finish_reason {finish!r})")
        else:
            text = choice.message.content
        return Reply(
            status="refused" if refused else "ok",
            text=text,
            usage=Usage(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cached_tokens=(details.cached_tokens or 0) if details else 0,
            ),
            model_version=version,
            finish_reason=finish,
        )

    def error_kind(self, status: int, body: bytes) -> str | None:
        try:
            error = msgspec.json.decode(body, type=_ErrorBody).error
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        code = str(error.code or "")
        # vLLM's server answers 400 with code 400 and says so in the message only
        if code == "context_length_exceeded" or "maximum context length" in (error.message or ""):
            return "context_length"
        if code in {"content_filter", "content_policy_violation"}:  # Azure's prompt filter answers 400
            return "refused"
        return None


def _options(spec: JudgeSpec, own: tuple[str, ...]) -> dict[str, Any]:
    return {k: spec.options[k] for k in own if k in spec.options}


def structured_outputs_style(spec: JudgeSpec) -> str | None:
    """How an OpenAI-compatible server takes guided decoding (options.structured_outputs):
    "structured_outputs" (default), "legacy", or None for "none"."""
    style = str(spec.options.get("structured_outputs", "structured_outputs"))
    if style not in {"structured_outputs", "legacy", "none"}:
        raise AdapterConfigError(
            f"judge {spec.name!r}: options.structured_outputs must be 'structured_outputs', 'legacy' or 'none', got {style!r}"
        )
    return None if style == "none" else style


CHAT_CAPABILITIES = Capabilities(seed=True, prompt_caching=True)  # OpenAI and Azure: no regex-guided decoding


def compatible_capabilities(spec: JudgeSpec) -> Capabilities:
    """Guided decoding unless options.structured_outputs is "none"."""
    return Capabilities(seed=True, guided_decoding=structured_outputs_style(spec) is not None, prompt_caching=True)


OPENAI_CAPABILITIES = msgspec.structs.replace(CHAT_CAPABILITIES, batch_api=True)  # adapters/openai_batch.py


def openai_dialect(spec: JudgeSpec) -> tuple[ChatCompletionsDialect, str]:
    """OpenAI's dialect for this judge and its base URL (shared with the batch adapter)."""
    base = (spec.base_url or DEFAULT_BASE_URL).rstrip("/")
    dialect = ChatCompletionsDialect(
        "openai", f"{base}/chat/completions", spec.model,
        max_tokens_field=str(spec.options.get("max_tokens_field", "max_completion_tokens")),
        structured_outputs=None,
    )
    return dialect, base


def create(spec: JudgeSpec) -> HttpAdapter:
    """OpenAI's own API (key: OPENAI_API_KEY or `api_key_env`)."""
    settings = settings_from_options(spec, frozenset({"max_tokens_field"}))
    key = api_key_from_env(spec, ("OPENAI_API_KEY",))
    dialect, _ = openai_dialect(spec)
    return HttpAdapter(spec, dialect, {"Authorization": f"Bearer {key}"}, OPENAI_CAPABILITIES, settings)


def create_azure(spec: JudgeSpec) -> HttpAdapter:
    """Azure OpenAI: a deployment on an endpoint (key: AZURE_OPENAI_API_KEY)."""
    own = ("deployment", "api_version", "endpoint", "max_tokens_field")
    settings = settings_from_options(spec, frozenset(own))
    opts = _options(spec, own)
    endpoint = str(opts.get("endpoint") or spec.base_url or os.environ.get("AZURE_OPENAI_ENDPOINT", "")).rstrip("/")
    if not endpoint:
        raise AdapterConfigError(
            f"judge {spec.name!r}: Azure needs an endpoint: set base_url, options.endpoint or AZURE_OPENAI_ENDPOINT"
        )
    deployment = str(opts.get("deployment") or spec.model)
    api_version = str(opts.get("api_version") or DEFAULT_AZURE_API_VERSION)
    key = api_key_from_env(spec, ("AZURE_OPENAI_API_KEY",))
    url = f"{endpoint}/openai/deployments/{deployment}/chat/completions?api-version={api_version}"
    dialect = ChatCompletionsDialect(
        "azure", url, None,
        max_tokens_field=str(opts.get("max_tokens_field", "max_tokens")),
        structured_outputs=None,
    )
    return HttpAdapter(spec, dialect, {"api-key": key or ""}, CHAT_CAPABILITIES, settings)


def create_compatible(spec: JudgeSpec) -> HttpAdapter:
    """Any OpenAI-compatible server by `base_url` (e.g. http://127.0.0.1:8000/v1),
    or several replicas of one model by `base_urls` (adapters/replicas.py)."""
    own = ("structured_outputs", "max_tokens_field") + REPLICA_OPTIONS
    settings = settings_from_options(spec, frozenset(own))
    opts = _options(spec, own)
    bases = compatible_base_urls(spec)
    key = api_key_from_env(spec, (), required=False)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    dialect = ChatCompletionsDialect(
        "openai-compatible", f"{bases[0]}/chat/completions", spec.model,
        max_tokens_field=str(opts.get("max_tokens_field", "max_tokens")),
        structured_outputs=structured_outputs_style(spec),
    )
    pool = replica_pool(spec, bases, opts) if spec.base_urls else None
    return HttpAdapter(spec, dialect, headers, compatible_capabilities(spec), settings, replicas=pool)


OPENAI = Backend(capabilities=lambda spec: OPENAI_CAPABILITIES, create=create, create_batch="adapters.openai_batch:create")
AZURE = Backend(capabilities=lambda spec: CHAT_CAPABILITIES, create=create_azure)
OPENAI_COMPATIBLE = Backend(capabilities=compatible_capabilities, create=create_compatible)
