"""Google Gemini `models/{model}:generateContent` (Generative Language API).

System messages go to `systemInstruction`; assistant turns have role
`model`. Refusals: `promptFeedback.blockReason` (prompt blocked, no
candidates) or a candidate `finishReason` of SAFETY and its relatives.
Gemini reports throttling as 429 RESOURCE_EXHAUSTED with the delay in a
`google.rpc.RetryInfo` detail rather than a header; both are read.
"""

from __future__ import annotations

from typing import Any

import msgspec

from adapters.dialect import decode_json, MalformedResponse, Reply
from adapters.http import api_key_from_env, HttpAdapter, HttpSettings, settings_from_options
from adapters.pacing import parse_duration
from engine.contracts import Backend, Capabilities, CallRequest, JudgeSpec, Usage

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
DEFAULT_API_VERSION = "v1beta"
BLOCKING_FINISH = frozenset({"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "LANGUAGE"})
_ENCODER = msgspec.json.Encoder()


class _Part(msgspec.Struct):
    text: str | None = None
    thought: bool | None = None


class _Content(msgspec.Struct):
    parts: list[_Part] = []


class _Candidate(msgspec.Struct):
    content: _Content | None = None
    finishReason: str | None = None


class _PromptFeedback(msgspec.Struct):
    blockReason: str | None = None


class _UsageMetadata(msgspec.Struct):
    promptTokenCount: int = 0
    candidatesTokenCount: int = 0
    cachedContentTokenCount: int = 0
    thoughtsTokenCount: int = 0


class _Response(msgspec.Struct):
    candidates: list[_Candidate] = []
    promptFeedback: _PromptFeedback | None = None
    usageMetadata: _UsageMetadata | None = None
    modelVersion: str = ""


class _Detail(msgspec.Struct):
    type: str = msgspec.field(default="", name="@type")
    reason: str = ""
    retryDelay: str = ""


class _Error(msgspec.Struct):
    status: str = ""
    details: list[_Detail] = []


class _ErrorBody(msgspec.Struct):
    error: _Error


class GenerateContentDialect:
    provider = "gemini"

    def __init__(self, url: str) -> None:
        self._url = url

    def url_and_body(self, request: CallRequest) -> tuple[str, bytes]:
        d = request.decoding
        system = [m.content for m in request.messages if m.role == "system"]
        body: dict[str, Any] = {
            "contents": [
                {"role": "model" if m.role == "assistant" else "user", "parts": [{"text": m.content}]}
                for m in request.messages
                if m.role != "system"
            ]
        }
        if system:
            body["systemInstruction"] = {"parts": [{"text": text} for text in system]}
        config: dict[str, Any] = {"temperature": d.temperature, "maxOutputTokens": d.max_tokens}
        if d.top_p != 1.0:
            config["topP"] = d.top_p
        if d.seed is not None:
            config["seed"] = d.seed
        if d.stop:
            config["stopSequences"] = list(d.stop)
        if d.json_schema:
            config["responseMimeType"] = "application/json"
            config["responseJsonSchema"] = msgspec.json.decode(d.json_schema)
        elif d.response_format == "json":
            config["responseMimeType"] = "application/json"
        body["generationConfig"] = config
        return self._url, _ENCODER.encode(body)

    def read_reply(self, body: bytes) -> Reply:
        response = decode_json(body, _Response)
        meta = response.usageMetadata or _UsageMetadata()
        usage = Usage(
            prompt_tokens=meta.promptTokenCount,
            completion_tokens=meta.candidatesTokenCount + meta.thoughtsTokenCount,
            cached_tokens=meta.cachedContentTokenCount,
        )
        block = response.promptFeedback.blockReason if response.promptFeedback else None
        if block or not response.candidates:
            if not block:
                raise MalformedResponse("response has neither candidates nor promptFeedback.blockReason")
            return Reply(status="refused", text=body.decode("utf-8", errors="replace"), usage=usage,
                         model_version=response.modelVersion, finish_reason=block)
        candidate = response.candidates[0]
        finish = candidate.finishReason or ""
        if finish in BLOCKING_FINISH:
            return Reply(status="refused", text=body.decode("utf-8", errors="replace"), usage=usage,
                         model_version=response.modelVersion, finish_reason=finish)
        parts = candidate.content.parts if candidate.content else []
        texts = [p.text for p in parts if p.text is not None and not p.thought]
        if not texts:
            raise MalformedResponse(f"candidate has no text (finishReason {finish!r})")
        return Reply(status="ok", text="".join(texts), usage=usage, model_version=response.modelVersion, finish_reason=finish)

    def error_kind(self, status: int, body: bytes) -> str | None:
        try:
            error = msgspec.json.decode(body, type=_ErrorBody).error
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None
        if any(d.reason == "API_KEY_INVALID" for d in error.details):  # Gemini answers a bad key with 400
            return "auth"
        return None


def retry_delay_from_body(body: bytes) -> float | None:
    """The `google.rpc.RetryInfo.retryDelay` of a Gemini error body ("17s"), if any."""
    try:
        error = msgspec.json.decode(body, type=_ErrorBody).error
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    for detail in error.details:
        if detail.type.endswith("google.rpc.RetryInfo") and detail.retryDelay:
            return parse_duration(detail.retryDelay)
    return None


CAPABILITIES = Capabilities(seed=True, batch_api=True, prompt_caching=False)  # JSON schemas, no regex-guided decoding


def connection(spec: JudgeSpec) -> tuple[HttpSettings, GenerateContentDialect, dict[str, str], str]:
    """Settings, dialect, headers (with the key) and versioned base URL of a
    judge (shared with the batch adapter, adapters/gemini_batch.py)."""
    own = ("api_version",)
    settings = settings_from_options(spec, frozenset(own))
    key = api_key_from_env(spec, ("GEMINI_API_KEY", "GOOGLE_API_KEY"))
    base = (spec.base_url or DEFAULT_BASE_URL).rstrip("/")
    version = str(spec.options.get("api_version", DEFAULT_API_VERSION))
    dialect = GenerateContentDialect(f"{base}/{version}/{model_name(spec)}:generateContent")
    return settings, dialect, {"x-goog-api-key": key or ""}, f"{base}/{version}"


def model_name(spec: JudgeSpec) -> str:
    return spec.model if spec.model.startswith(("models/", "tunedModels/")) else f"models/{spec.model}"


def create(spec: JudgeSpec) -> HttpAdapter:
    """Gemini (key: GEMINI_API_KEY or GOOGLE_API_KEY, or `api_key_env`); option `api_version`."""
    settings, dialect, headers, _ = connection(spec)
    return HttpAdapter(spec, dialect, headers, CAPABILITIES, settings, retry_delay=retry_delay_from_body)


GEMINI = Backend(capabilities=lambda spec: CAPABILITIES, create=create, create_batch="adapters.gemini_batch:create")
