"""What the three batch adapters share (adapters/openai_batch.py,
anthropic_batch.py, gemini_batch.py): the control-plane client, entry
checks, and reading one entry's answer exactly as a synchronous call's.

- `BatchControl` makes the batch API's own calls (upload, create, poll,
  download, cancel) over the adapters' one transport (adapters/transport.py),
  retrying what the synchronous adapter retries (429/529, 5xx, timeouts,
  dropped connections) with the same backoff (`adapters.http.backoff_s`),
  and raising `BatchApiError` with a classified kind (auth, bad_request,
  not_found, ...) for what it does not. Keys live only in its headers.
- `entry_result` reads one entry's embedded answer (HTTP status and body)
  with the provider's synchronous `Dialect` through
  `adapters.dialect.classify_answer`, priced at `prices.batch_discount`: a
  batch answer and a synchronous one of the same request give the same
  `CallResult` (status, text, usage), and a failed entry a failure result
  with the raw provider text, never a score.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import aiohttp
import anyio
import msgspec

from adapters.dialect import (
    RATE_LIMIT_STATUSES,
    RETRYABLE_STATUSES,
    TERMINAL_KINDS,
    classify_answer,
    Dialect,
    error_text,
)
from adapters.http import HttpSettings, backoff_s
from adapters.pacing import retry_after_s
from adapters.transport import AiohttpTransport
from engine.contracts import BatchApiError, BatchEntry, CallResult, Capabilities, JudgeSpec

log = logging.getLogger("needlejudge.adapters.batch")

# Upload and download of files up to a few hundred MB: the judge's per-call
# timeout is sized for one short answer, so batch control calls get at least this.
MIN_CONTROL_TIMEOUT_S = 300.0
CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # Anthropic's rule; also fits OpenAI and Gemini
_ENCODER = msgspec.json.Encoder()


class BatchControl:
    """The batch API's own HTTP calls for one judge, retried like judge calls."""

    def __init__(
        self,
        spec: JudgeSpec,
        provider: str,
        headers: dict[str, str],
        settings: HttpSettings,
        *,
        retry_delay: Callable[[bytes], float | None] = lambda body: None,
        error_kind: Callable[[int, bytes], str | None] = lambda status, body: None,
    ) -> None:
        self.spec = spec
        self.provider = provider
        self._error_kind = error_kind  # the dialect's refinement (Gemini's API_KEY_INVALID 400 is "auth")
        self._headers = headers  # holds the key: never log or repr
        self._settings = settings
        self._retry_delay = retry_delay
        self._transport = AiohttpTransport(
            concurrency=4, timeout_s=max(spec.timeout_s, MIN_CONTROL_TIMEOUT_S),
            keepalive_s=settings.keepalive_s, dns_ttl_s=settings.dns_ttl_s,
        )

    def __repr__(self) -> str:
        return f"<BatchControl judge={self.spec.name!r} provider={self.provider}>"

    async def aclose(self) -> None:
        await self._transport.aclose()

    async def call(
        self, operation: str, method: str, url: str, body: bytes = b"", *, content_type: str = "application/json",
        creates: bool = False,
    ) -> bytes:
        """The body of a 2xx answer; BatchApiError otherwise (after retries
        for transient failures). `operation` names the step in messages.
        `creates`: the call creates a batch (paid once it exists), so a
        timeout or dropped connection, after which the batch may exist, is
        not retried blindly: it raises, retryable, saying so."""
        headers = {**self._headers, "Content-Type": content_type} if body else self._headers
        started = time.monotonic()
        key = hashlib.blake2b(f"{operation}\x1f{url}".encode(), digest_size=16).digest()
        attempt = 0
        while True:
            attempt += 1
            kind, text, wait = await self._once(operation, method, url, body, headers)
            if kind == "":
                return text  # type: ignore[return-value]
            if kind not in _RETRYABLE:
                message = f"judge {self.spec.name!r} ({self.provider}): batch {operation} failed: {text}"
                log.warning("judge %s: batch %s failed: %s (not retried)", self.spec.name, operation, kind)
                raise BatchApiError(kind, message)
            if creates and kind in _UNANSWERED:
                raise BatchApiError(kind, f"judge {self.spec.name!r} ({self.provider}): batch {operation}: {kind}: {text}; "
                                    "the batch may have been created all the same: not resubmitted, to avoid paying twice "
                                    "(look it up in the provider's batch list)", retryable=True)
            delay = backoff_s(self._settings, key, attempt, wait)
            if attempt >= self.spec.max_attempts or time.monotonic() - started + delay > self.spec.max_retry_time_s:
                message = (f"judge {self.spec.name!r} ({self.provider}): batch {operation} gave up after "
                           f"{attempt} attempt(s): {kind}: {text}")
                raise BatchApiError(kind, message, retryable=True)
            log.debug("judge %s: batch %s: %s (attempt %d), retrying in %.2fs", self.spec.name, operation, kind, attempt, delay)
            await anyio.sleep(delay)

    async def _once(self, operation: str, method: str, url: str, body: bytes, headers: dict[str, str]) -> tuple[str, bytes | str, float | None]:
        """("", body, None) on success, else (kind, message, advertised wait)."""
        try:
            answer = await self._transport.send(method, url, body, headers)
        except TimeoutError:
            return "timeout", f"no complete answer within {max(self.spec.timeout_s, MIN_CONTROL_TIMEOUT_S):g}s", None
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, aiohttp.ClientResponseError) as exc:
            return "connection", f"{type(exc).__name__}: {exc}", None
        except ValueError as exc:
            return "bad_request", f"cannot send the request: {exc}", None
        status, raw = answer.status, answer.body
        if 200 <= status < 300:
            return "", raw, None
        text = f"HTTP {status}: {error_text(raw)}"
        if status in RATE_LIMIT_STATUSES:
            wait = retry_after_s(answer.headers, time.time())
            return ("rate_limit" if status == 429 else "overloaded"), text, wait if wait is not None else self._retry_delay(raw)
        if status in RETRYABLE_STATUSES:
            return "server", text, retry_after_s(answer.headers, time.time())
        if status == 413:
            return "too_large", text, None
        refined = self._error_kind(status, raw)
        if refined and refined != "refused":
            return refined, text, None
        return TERMINAL_KINDS.get(status) or ("server" if status >= 500 else "bad_request"), text, None


_RETRYABLE = frozenset({"rate_limit", "overloaded", "server", "timeout", "connection"})
_UNANSWERED = frozenset({"timeout", "connection"})  # the request may have been acted on


class BatchAdapterBase:
    """What every batch adapter holds: the judge, its synchronous dialect,
    the API's base URL and the control client."""

    provider = ""

    def __init__(self, spec: JudgeSpec, dialect: Dialect, base: str, control: BatchControl, capabilities: Capabilities) -> None:
        self.spec = spec
        self.capabilities = capabilities
        self._dialect = dialect
        self._base = base
        self._control = control

    def __repr__(self) -> str:
        return f"<{type(self).__name__} judge={self.spec.name!r} model={self.spec.model!r}>"

    async def aclose(self) -> None:
        await self._control.aclose()


# ---------------------------------------------------------------------------
# Entries


def check_entries(entries: Sequence[BatchEntry], *, provider: str, max_entries: int) -> None:
    """Refuse a batch the provider would reject: empty, too many entries,
    a custom_id outside [A-Za-z0-9_-]{1,64}, or one used twice."""
    if not entries:
        raise BatchApiError("bad_request", f"{provider} batch: no entries to submit")
    if len(entries) > max_entries:
        raise BatchApiError(
            "too_large", f"{provider} batch: {len(entries)} entries, the provider takes at most {max_entries} per batch; split it"
        )
    seen: set[str] = set()
    for entry in entries:
        if not CUSTOM_ID.fullmatch(entry.custom_id):
            raise BatchApiError(
                "bad_request",
                f"{provider} batch: custom_id {entry.custom_id!r} must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-' "
                "(the hex request key)",
            )
        if entry.custom_id in seen:
            raise BatchApiError("bad_request", f"{provider} batch: custom_id {entry.custom_id} appears twice; each entry needs its own")
        seen.add(entry.custom_id)


def entry_body(spec: JudgeSpec, dialect: Dialect, entry: BatchEntry, *, guided: bool) -> bytes:
    """The request body the synchronous adapter would send for this entry."""
    if entry.request.decoding.guided_regex and not guided:
        raise BatchApiError(
            "unsupported", f"judge {spec.name!r}: {dialect.provider} has no regex-guided decoding (guided_regex); entry {entry.custom_id}"
        )
    try:
        return dialect.url_and_body(entry.request)[1]
    except (ValueError, TypeError) as exc:
        raise BatchApiError("bad_request", f"judge {spec.name!r}: cannot encode entry {entry.custom_id}: {exc}") from None


def entry_result(spec: JudgeSpec, dialect: Dialect, status: int, raw: bytes, *, finished_at: float = 0.0) -> CallResult:
    """One entry's answer (its HTTP status and body) read like a synchronous
    answer and priced at the batch rate; a failure keeps the raw provider text."""
    outcome = classify_answer(spec, dialect, status, raw, price_factor=spec.prices.batch_discount)
    if outcome.result is not None:
        result = outcome.result
    else:  # transient for a synchronous call; in a batch it is this entry's answer, to be asked again
        result = CallResult(status="error", error_kind=outcome.kind,
                            text=f"judge {spec.name!r} ({dialect.provider}): batch entry failed: {outcome.kind}: {outcome.text}")
    return msgspec.structs.replace(result, finished_at=finished_at, started_at=finished_at)


def entry_failure(spec: JudgeSpec, provider: str, kind: str, raw: bytes | str, *, finished_at: float = 0.0) -> CallResult:
    """A failed entry the provider reports without an HTTP status (its raw text kept)."""
    text = raw if isinstance(raw, str) else error_text(raw)
    return CallResult(status="error", error_kind=kind, text=f"judge {spec.name!r} ({provider}): batch entry failed: {kind}: {text}",
                      started_at=finished_at, finished_at=finished_at)


# ---------------------------------------------------------------------------
# Encodings


def jsonl_lines(raw: bytes) -> Iterator[bytes]:
    for line in raw.splitlines():
        if line.strip():
            yield line


def multipart(fields: dict[str, str], file_field: str, filename: str, content: bytes) -> tuple[bytes, str]:
    """A multipart/form-data body and its content type (one file, some text fields)."""
    boundary = uuid.uuid4().hex
    while boundary.encode() in content:
        boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{filename}"\r\n'
        "Content-Type: application/jsonl\r\n\r\n".encode()
    )
    return b"".join(parts) + content + f"\r\n--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


def encode(value: object) -> bytes:
    return _ENCODER.encode(value)


T = TypeVar("T")


def decode(spec: JudgeSpec, provider: str, what: str, raw: bytes, type_: type[T]) -> T:
    """A batch API answer decoded, or BatchApiError("malformed") naming it."""
    try:
        return msgspec.json.decode(raw, type=type_)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        text = raw[:500].decode("utf-8", errors="replace")
        raise BatchApiError("malformed", f"judge {spec.name!r} ({provider}): batch {what}: unexpected answer ({exc}): {text}") from None
