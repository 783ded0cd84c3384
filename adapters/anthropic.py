"""Anthropic Messages API (`POST {base}/v1/messages`).

System messages go to the top-level `system` field; the stable prefix (the
system instructions, else every turn before the last user turn) carries
`cache_control: {"type": "ephemeral"}` so repeated instructions are read
from Anthropic's prompt cache. The Messages API takes no seed and no
response format; JSON is asked for by the prompt itself.
"""

from __future__ import annotations

from typing import Any

import msgspec

from adapters.dialect import decode_json, Reply
from adapters.http import api_key_from_env, HttpAdapter, HttpSettings, settings_from_options
from engine.contracts import Backend, Capabilities, CallRequest, JudgeSpec, Usage

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_VERSION = "2023-06-01"
_EPHEMERAL = {"type": "ephemeral"}
_ENCODER = msgspec.json.Encoder()


class _Block(msgspec.Struct):
    type: str
    text: str = ""


class _Usage(msgspec.Struct):
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int | None = 0
    cache_read_input_tokens: int | None = 0


class _Message(msgspec.Struct):
    content: list[_Block]
    model: str = ""
    stop_reason: str | None = None
    usage: _Usage = msgspec.field(default_factory=_Usage)


class _ErrorDetail(msgspec.Struct):
    type: str = ""


class _ErrorBody(msgspec.Struct):
    error: _ErrorDetail


class MessagesDialect:
    provider = "anthropic"

    def __init__(self, url: str, model: str, *, prompt_caching: bool) -> None:
        self._url = url
        self._model = model
        self._prompt_caching = prompt_caching

    def url_and_body(self, request: CallRequest) -> tuple[str, bytes]:
        d = request.decoding
        system = [m.content for m in request.messages if m.role == "system"]
        turns = [m for m in request.messages if m.role != "system"]
        body: dict[str, Any] = {"model": self._model, "max_tokens": d.max_tokens}
        if system:
            block: dict[str, Any] = {"type": "text", "text": "\n\n".join(system)}
            if self._prompt_caching:
                block["cache_control"] = _EPHEMERAL
            body["system"] = [block]
        cache_turn = -1
        if self._prompt_caching and not system and len(turns) > 1:
            cache_turn = len(turns) - 2  # the last turn before the final one closes the stable prefix
        messages = []
        for index, m in enumerate(turns):
            content: dict[str, Any] = {"type": "text", "text": m.content}
            if index == cache_turn:
                content["cache_control"] = _EPHEMERAL
            messages.append({"role": m.role, "content": [content]})
        body["messages"] = messages
        body["temperature"] = d.temperature
        if d.top_p != 1.0:  # recent models reject temperature and top_p together
            body["top_p"] = d.top_p
        if d.stop:
            body["stop_sequences"] = list(d.stop)
        return self._url, _ENCODER.encode(body)

    def read_reply(self, body: bytes) -> Reply:
        message = decode_json(body, _Message)
        usage = message.usage
        cached = usage.cache_read_input_tokens or 0
        prompt = usage.input_tokens + cached + (usage.cache_creation_input_tokens or 0)
        stop = message.stop_reason or ""
        refused = stop == "refusal"
        text = body.decode("utf-8", errors="replace") if refused else "".join(b.text for b in message.content if b.type == "text")
        return Reply(
            status="refused" if refused else "ok",
            text=text,
            usage=Usage(prompt_tokens=prompt, completion_tokens=usage.output_tokens, cached_tokens=cached),
            model_version=message.model,
            finish_reason=stop,
        )

    def error_kind(self, status: int, body: bytes) -> str | None:
        try:
            kind = msgspec.json.decode(body, type=_ErrorBody).error.type
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if kind == "overloaded_error":
            return "overloaded"
        return None


def capabilities(spec: JudgeSpec) -> Capabilities:
    """No seed, no guided decoding; prompt caching unless options.prompt_caching is
    false; Message Batches (adapters/anthropic_batch.py)."""
    return Capabilities(seed=False, batch_api=True, prompt_caching=bool(spec.options.get("prompt_caching", True)))


def connection(spec: JudgeSpec) -> tuple[HttpSettings, MessagesDialect, dict[str, str], str]:
    """Settings, dialect, headers (with the key) and base URL of a judge
    (shared with the batch adapter)."""
    own = ("anthropic_version", "prompt_caching")
    settings = settings_from_options(spec, frozenset(own))
    key = api_key_from_env(spec, ("ANTHROPIC_API_KEY",))
    base = (spec.base_url or DEFAULT_BASE_URL).rstrip("/")
    dialect = MessagesDialect(f"{base}/v1/messages", spec.model, prompt_caching=capabilities(spec).prompt_caching)
    headers = {"x-api-key": key or "", "anthropic-version": str(spec.options.get("anthropic_version", DEFAULT_VERSION))}
    return settings, dialect, headers, base


def create(spec: JudgeSpec) -> HttpAdapter:
    """Anthropic (key: ANTHROPIC_API_KEY or `api_key_env`); options
    `anthropic_version`, `prompt_caching` (default true)."""
    settings, dialect, headers, _ = connection(spec)
    return HttpAdapter(spec, dialect, headers, capabilities(spec), settings)


ANTHROPIC = Backend(capabilities=capabilities, create=create, create_batch="adapters.anthropic_batch:create")
