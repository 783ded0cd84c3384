"""What every wire dialect of the fake server shares: the provider-neutral
call a request is validated into, the rejection a provider answers with an
error body, field checks, and the base `WireDialect` (OpenAI's answers,
which the other dialects override where their provider differs).

One module per provider family holds its dialect (simulation/wire_openai.py,
wire_anthropic.py, wire_gemini.py); simulation/fake_server.py routes each
request to one and never branches on the provider itself.
"""

from __future__ import annotations

import math
import time
from typing import Any

import msgspec
from aiohttp import web

from engine.contracts import Message

ENCODER = msgspec.json.Encoder()
JSON = "application/json"


class Call(msgspec.Struct, kw_only=True):
    """A validated request, provider-neutral."""

    provider: str
    model: str
    messages: tuple[Message, ...]
    max_tokens: int
    wants_json: bool = False
    guided_regex: str | None = None
    seed: Any = None
    anthropic_cached_prefix: int = 0  # characters under cache_control


class Reject(Exception):
    """A provider's error answer: HTTP status, its error kind and message."""

    def __init__(self, status: int, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.extra = status, kind, message, extra


class Budget(msgspec.Struct, frozen=True, kw_only=True):
    """A model's request budget as the rate-limit headers report it."""

    limit: int
    remaining: int
    full_in_s: float  # seconds until the bucket is full again


class WireDialect:
    """One provider's wire format, as the fake server speaks it. The defaults
    are OpenAI's; a dialect overrides what its provider does differently."""

    provider = "openai"
    bad_request_kind = "invalid_request_error"
    auth_kind = "invalid_api_key"
    not_found_kind = "model_not_found"
    rate_limit_kind = "rate_limit_exceeded"
    overloaded_status = 503
    kinds_by_status = {401: "invalid_api_key", 403: "permission_denied", 404: "model_not_found"}

    def routes(self) -> tuple[str, ...]:
        """aiohttp route paths (POST) this dialect answers."""
        raise NotImplementedError

    def validate(self, request: web.Request, body: dict) -> Call:
        raise NotImplementedError

    def key(self, request: web.Request) -> str:
        auth = request.headers.get("Authorization", "")
        return auth[7:] if auth.startswith("Bearer ") else ""

    def missing_key(self) -> Reject:
        return Reject(401, self.auth_kind, "You didn't provide an API key.")

    def invalid_key(self) -> Reject:
        return Reject(401, self.auth_kind, "Incorrect API key provided.")

    def not_found(self, model: str) -> Reject:
        return Reject(404, self.not_found_kind, f"The model `{model}` does not exist or you do not have access to it.")

    def server_kind(self, status: int) -> str:
        return "server_error"

    def kind_for_status(self, status: int) -> str:
        if status >= 500:
            return self.server_kind(status)
        return self.kinds_by_status.get(status, self.bad_request_kind)

    def error_body(self, reject: Reject) -> bytes:
        error = {"message": reject.message, "type": reject.kind if reject.kind.endswith("_error") else "invalid_request_error",
                 "param": reject.extra.get("param"), "code": reject.kind}
        if "innererror" in reject.extra:
            error["innererror"] = reject.extra["innererror"]
            error["status"] = reject.status
        return ENCODER.encode({"error": error})

    def error_response(self, reject: Reject, headers: dict[str, str] | None = None) -> web.Response:
        return web.Response(status=reject.status, body=self.error_body(reject), content_type=JSON, headers=headers)

    def rate_limit_response(self, wait: float | None, extra: dict[str, str], *, bare: bool) -> web.Response:
        headers = dict(extra)
        if not bare and wait is not None:
            headers["retry-after"] = str(max(1, math.ceil(wait)))
            headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
        return self.error_response(Reject(429, self.rate_limit_kind, RATE_LIMIT_MESSAGE), headers)

    def budget_headers(self, budget: Budget) -> dict[str, str]:
        return {"x-ratelimit-limit-requests": str(budget.limit),
                "x-ratelimit-remaining-requests": str(budget.remaining),
                "x-ratelimit-reset-requests": f"{budget.full_in_s * 1000:.0f}ms"}

    def prompt_filter(self) -> Reject | None:
        """The provider's error for a prompt its filter blocks; None: it answers 200 with a filtered body."""
        return None

    def success_body(self, call: Call, text: str, finish: str, cached: int, salt: int) -> bytes:
        raise NotImplementedError

    def filtered_body(self, call: Call, *, prompt_blocked: bool) -> bytes:
        raise NotImplementedError


RATE_LIMIT_MESSAGE = "Rate limit reached for requests. Please try again later."


def message_text(content: Any, where: str, wire: WireDialect) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise Reject(400, wire.bad_request_kind, f"{where}: each content part must be a text part")
            texts.append(part["text"])
        return "".join(texts)
    raise Reject(400, wire.bad_request_kind, f"{where}: content must be a string or a list of parts")


def check_number(body: dict, name: str, low: float, high: float, wire: WireDialect) -> None:
    value = body.get(name)
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high):
        raise Reject(400, wire.bad_request_kind, f"Invalid value for '{name}': expected a number in [{low:g}, {high:g}], got {value!r}.")


def max_tokens(body: dict, names: tuple[str, ...], wire: WireDialect, default: int | None) -> int:
    for name in names:
        value = body.get(name)
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise Reject(400, wire.bad_request_kind, f"Invalid '{name}': expected a positive integer, got {value!r}.")
            return value
    if default is None:
        raise Reject(400, wire.bad_request_kind, f"{names[0]}: Field required")
    return default


def usage_numbers(call: Call, text: str, cached: int) -> tuple[int, int, int, int]:
    """(prompt tokens, completion tokens, cache reads, cache writes) at ~4 characters a token."""
    prompt = max(1, sum(len(m.content) for m in call.messages) // 4)
    completion = max(1, len(text) // 4)
    reads = max(cached, 0)
    writes = -cached if cached < 0 else 0
    return prompt, completion, reads, writes


def now_s() -> int:
    return int(time.time())
