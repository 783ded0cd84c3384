"""What a provider module supplies to the HTTP adapters, and how a
provider's answer is read: the `Dialect` protocol and its `Reply`, and
`classify_answer`, which turns one answer (status and body) into a result or
a retryable failure kind, the same way for a synchronous call
(adapters/http.py) and a batch entry (adapters/batch_http.py).
"""

from __future__ import annotations

from typing import Any, Protocol

import msgspec

from engine.contracts import CallRequest, CallResult, JudgeSpec, Prices, Usage

# Status codes that mean "the provider is throttling this key": retry after
# the advertised delay and shrink the in-flight limit (529 = Anthropic overloaded).
RATE_LIMIT_STATUSES = frozenset({429, 529})
RETRYABLE_STATUSES = frozenset({408, 409, 425, 500, 502, 503, 504, 520, 522, 524}) | RATE_LIMIT_STATUSES
TERMINAL_KINDS = {400: "bad_request", 401: "auth", 403: "forbidden", 404: "not_found", 413: "context_length", 422: "bad_request"}
MAX_ERROR_TEXT = 4000


class Reply(msgspec.Struct, frozen=True, kw_only=True):
    """A successful (HTTP 2xx) exchange, read by a dialect."""

    status: str  # "ok" or "refused"
    text: str
    usage: Usage = Usage()
    model_version: str = ""
    finish_reason: str = ""


class MalformedResponse(Exception):
    """A 2xx body that does not have the provider's response shape."""


class Dialect(Protocol):
    """A provider's wire format. Pure functions of their inputs, no I/O."""

    provider: str  # names the provider in messages

    def url_and_body(self, request: CallRequest) -> tuple[str, bytes]: ...

    def read_reply(self, body: bytes) -> Reply:
        """Raise MalformedResponse when the body is not a valid reply."""
        ...

    def error_kind(self, status: int, body: bytes) -> str | None:
        """A finer classification of an error body (e.g. "context_length"),
        "refused" for a provider-side content filter reported as an error,
        or None to classify by status code."""
        ...


class Attempt(msgspec.Struct, kw_only=True):
    """What one HTTP exchange produced (adapters/http.py, adapters/batch_http.py)."""

    result: CallResult | None = None  # final (success or terminal failure)
    kind: str = ""  # retryable failure kind
    text: str = ""
    retry_after: float | None = None
    latency_s: float = 0.0
    sent: int = 1  # requests on the wire: 2 when the transport replayed it (adapters/transport.py)


def cost_usd(prices: Prices, usage: Usage) -> float:
    cached_price = prices.input if prices.cached_input is None else prices.cached_input
    uncached = max(usage.prompt_tokens - usage.cached_tokens, 0)
    return (uncached * prices.input + usage.cached_tokens * cached_price + usage.completion_tokens * prices.output) / 1e6


def classify_answer(
    spec: JudgeSpec, dialect: Dialect, status: int, raw: bytes, *, upgrade: str = "unnamed", price_factor: float = 1.0
) -> Attempt:
    """One provider answer (status and body) as a final result (success or
    terminal failure) or a retryable failure kind, the same for a synchronous
    call and a batch entry; `price_factor` scales the cost (batch discount)."""
    if 200 <= status < 300:
        try:
            reply = dialect.read_reply(raw)
        except MalformedResponse as exc:
            return Attempt(kind="malformed", text=f"{exc}; body: {error_text(raw)}")
        return Attempt(result=CallResult(
            status=reply.status,  # type: ignore[arg-type]
            text=reply.text,
            usage=reply.usage,
            cost_usd=cost_usd(spec.prices, reply.usage) * price_factor,
            model_version=reply.model_version,
            finish_reason=reply.finish_reason,
        ))
    text = error_text(raw)
    if status == 101:
        message = (f"judge {spec.name!r} ({dialect.provider}): HTTP 101 Switching Protocols: the server "
                   f"switched to another protocol ({upgrade}) instead of answering "
                   f"the POST; base_url points at an upgrade endpoint, not the API")
        return Attempt(result=CallResult(status="error", text=message, error_kind="protocol"))
    if status in RATE_LIMIT_STATUSES:
        return Attempt(kind="rate_limit" if status == 429 else "overloaded", text=f"HTTP {status}: {text}")
    refined = dialect.error_kind(status, raw)
    if refined == "refused":
        return Attempt(result=CallResult(status="refused", text=text, finish_reason="content_filter"))
    if status in RETRYABLE_STATUSES:
        return Attempt(kind=refined or "server", text=f"HTTP {status}: {text}")
    kind = refined or TERMINAL_KINDS.get(status) or ("server" if status >= 500 else "bad_request")
    if status >= 500:
        return Attempt(kind=kind, text=f"HTTP {status}: {text}")
    message = f"judge {spec.name!r} ({dialect.provider}): HTTP {status} {kind}: {text}"
    return Attempt(result=CallResult(status="error", text=message, error_kind=kind))


def error_text(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    return text if len(text) <= MAX_ERROR_TEXT else text[:MAX_ERROR_TEXT] + "…"


def decode_json(raw: bytes, type_: Any) -> Any:
    """Decode a provider body into `type_`, as MalformedResponse on failure."""
    try:
        return msgspec.json.decode(raw, type=type_)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise MalformedResponse(f"unexpected response body ({exc})") from None
