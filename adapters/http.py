"""Shared machinery of the HTTP adapters: transport, rate limits, retries.

A provider module supplies a `Dialect` (how to build a request and read a
response in its wire format); `HttpAdapter` does everything else the same
way for every provider:

- the transport: for `http://` URLs (self-hosted servers, where the
  client's CPU bounds the throughput) the lean keep-alive client of
  `adapters.plain_http`; for `https://` (and with the option
  `transport = "aiohttp"`) one aiohttp session per adapter, its connection
  pool sized to the judge's concurrency, keep-alive, DNS cached;
- requests-per-minute and tokens-per-minute limiters (aiolimiter);
- a judge-wide pause gate fed by `retry-after` / `retry-after-ms` and by the
  `x-ratelimit-*` / `anthropic-ratelimit-*` headers, so the judge slows
  down *before* a 429 when the provider says the budget is spent;
- additive-increase / multiplicative-decrease of the in-flight limit on
  rate-limit feedback (429, 529);
- retries with jittered exponential backoff on 429, 5xx, timeouts, dropped
  connections and malformed bodies, bounded by attempts and total time;
  400/401/403/404 fail fast; after a burst of failed calls a circuit
  breaker answers `circuit_open` at once (the scheduler then pauses the
  judge, probes it and closes the breaker with `reset_circuit`).

Rate limits are recognised by status code only, never by message text.
`complete()` never raises for provider failures: it returns a classified
`CallResult`. API keys live only in the request headers built here and are
never logged, repr'd or put into results.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import logging
import math
import os
import re
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Literal, Protocol

import aiohttp
import anyio
import msgspec
from aiolimiter import AsyncLimiter

from adapters.plain_http import PlainHttpClient, TransportError

from engine.contracts import (
    ITEM_TAG_HEADER,
    AdapterConfigError,
    Capabilities,
    CallRequest,
    CallResult,
    JudgeSpec,
    Prices,
    Usage,
    request_key,
)

log = logging.getLogger("needlejudge.adapters")

# Status codes that mean "the provider is throttling this key": retry after
# the advertised delay and shrink the in-flight limit (529 = Anthropic overloaded).
RATE_LIMIT_STATUSES = frozenset({429, 529})
RETRYABLE_STATUSES = frozenset({408, 409, 425, 500, 502, 503, 504, 520, 522, 524}) | RATE_LIMIT_STATUSES
TERMINAL_KINDS = {400: "bad_request", 401: "auth", 403: "forbidden", 404: "not_found", 413: "context_length", 422: "bad_request"}
MAX_ERROR_TEXT = 4000
MAX_JUDGE_PAUSE_S = 60.0


# ---------------------------------------------------------------------------
# What a provider module supplies


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


# ---------------------------------------------------------------------------
# Settings


class HttpSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The transport options an HTTP judge may set in `JudgeSpec.options`."""

    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0
    breaker_threshold: int = 20  # consecutive failed calls that stop the judge
    min_concurrency: int = 1
    keepalive_s: float = 30.0
    dns_ttl_s: float = 300.0
    # "auto": the lean client for http:// URLs, aiohttp for https://; "aiohttp": aiohttp for both
    transport: Literal["auto", "aiohttp"] = "auto"


def settings_from_options(spec: JudgeSpec, own_keys: frozenset[str]) -> HttpSettings:
    """The HttpSettings part of `spec.options`; unknown keys are a ConfigError."""
    fields = set(HttpSettings.__struct_fields__)
    unknown = set(spec.options) - fields - own_keys
    if unknown:
        expected = ", ".join(sorted(fields | own_keys))
        raise AdapterConfigError(
            f"judge {spec.name!r}: unknown option(s) {', '.join(sorted(unknown))} for adapter {spec.adapter!r}; expected some of: {expected}"
        )
    try:
        return msgspec.convert({k: v for k, v in spec.options.items() if k in fields}, HttpSettings)
    except msgspec.ValidationError as exc:
        raise AdapterConfigError(f"judge {spec.name!r}: bad option value: {exc}") from None


def api_key_from_env(spec: JudgeSpec, default_envs: tuple[str, ...], *, required: bool = True) -> str | None:
    """The API key from the judge's env var (JudgeSpec.api_key_env) or the
    provider's default ones. Errors name the variable, never a value."""
    names = (spec.api_key_env,) if spec.api_key_env else default_envs
    for name in names:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    if required or spec.api_key_env:
        raise AdapterConfigError(
            f"judge {spec.name!r}: no API key: set the environment variable {' or '.join(names)} (keys are read from the environment only)"
        )
    return None


def cost_usd(prices: Prices, usage: Usage) -> float:
    cached_price = prices.input if prices.cached_input is None else prices.cached_input
    uncached = max(usage.prompt_tokens - usage.cached_tokens, 0)
    return (uncached * prices.input + usage.cached_tokens * cached_price + usage.completion_tokens * prices.output) / 1e6


def estimated_tokens(request: CallRequest) -> int:
    """A cheap upper-ish estimate for the tokens-per-minute limiter (~4 characters a token)."""
    return sum(len(m.content) for m in request.messages) // 4 + 8 * len(request.messages) + request.decoding.max_tokens


# ---------------------------------------------------------------------------
# Rate-limit headers

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str) -> float | None:
    """OpenAI's reset durations ("20ms", "1.5s", "6m0s") or plain seconds."""
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def _seconds_until(value: str, now: float) -> float | None:
    """An RFC 3339 / HTTP date as seconds from `now` (anthropic-ratelimit-*-reset, retry-after dates)."""
    from datetime import datetime

    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError):
            return None
    return max(when - now, 0.0)


def retry_after_s(headers: Mapping[str, str], now: float) -> float | None:
    """`retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return _seconds_until(value, now)


def _int_header(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        return int(float(value))
    except ValueError:
        return None


def budget_pause_s(headers: Mapping[str, str], tokens_needed: int, now: float) -> float:
    """How long to hold new sends because the provider says the budget is spent.

    Reads OpenAI/Azure `x-ratelimit-remaining-{requests,tokens}` with
    `x-ratelimit-reset-*` (durations) and Anthropic
    `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-remaining`
    with `-reset` (RFC 3339 times). Returns 0 when there is budget left.
    """
    pause = 0.0
    for kind, need in (("requests", 1), ("tokens", tokens_needed)):
        remaining = _int_header(headers, f"x-ratelimit-remaining-{kind}")
        if remaining is not None and 0 <= remaining < need:
            reset = parse_duration(headers.get(f"x-ratelimit-reset-{kind}", "") or "")
            limit = _int_header(headers, f"x-ratelimit-limit-{kind}")
            if reset is not None:
                # the budget refills continuously: wait for what we need, not for the full window
                if limit and limit > 0 and kind == "requests":
                    reset = min(reset, 60.0 / limit)
                pause = max(pause, reset)
    for kind, need in (("requests", 1), ("tokens", tokens_needed), ("input-tokens", tokens_needed)):
        remaining = _int_header(headers, f"anthropic-ratelimit-{kind}-remaining")
        if remaining is not None and 0 <= remaining < need:
            reset = _seconds_until(headers.get(f"anthropic-ratelimit-{kind}-reset", "") or "", now)
            limit = _int_header(headers, f"anthropic-ratelimit-{kind}-limit")
            if reset is not None:
                if limit and limit > 0 and kind == "requests":
                    reset = min(reset, 60.0 / limit)
                pause = max(pause, reset)
    return min(pause, 60.0)


# ---------------------------------------------------------------------------
# The adapter


class _Attempt(msgspec.Struct, kw_only=True):
    """What one HTTP exchange produced (internal)."""

    result: CallResult | None = None  # final (success or terminal failure)
    kind: str = ""  # retryable failure kind
    text: str = ""
    retry_after: float | None = None
    latency_s: float = 0.0


def _jitter(key: bytes, attempt: int) -> float:
    """A uniform [0, 1) draw keyed by the request and attempt (decorrelates retries, reproducibly)."""
    digest = hashlib.blake2b(key + attempt.to_bytes(4, "little"), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64


class _InflightWindow:
    """The adaptive (AIMD) in-flight limit of one judge.

    Under the limit, `acquire` takes a slot without suspending: an anyio
    CapacityLimiter would pass twice through the event loop per call, which
    costs more than the rest of the adapter's bookkeeping. Over the limit,
    callers wait in FIFO order; a cancelled waiter gives back a slot it was
    granted meanwhile."""

    __slots__ = ("limit", "in_use", "_waiters")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0
        self._waiters: deque[anyio.Event] = deque()

    async def acquire(self) -> None:
        if self.in_use < self.limit and not self._waiters:
            self.in_use += 1
            return
        granted = anyio.Event()
        self._waiters.append(granted)
        try:
            await granted.wait()
        except BaseException:
            if granted.is_set():
                self.release()
            else:
                self._waiters.remove(granted)
            raise

    def release(self) -> None:
        self.in_use -= 1
        self._grant()

    def set_limit(self, limit: int) -> None:
        self.limit = limit
        self._grant()

    def _grant(self) -> None:
        while self._waiters and self.in_use < self.limit:
            self.in_use += 1
            self._waiters.popleft().set()


class HttpAdapter:
    """An `Adapter` over aiohttp for one judge; see the module docstring."""

    def __init__(
        self,
        spec: JudgeSpec,
        dialect: Dialect,
        headers: dict[str, str],
        capabilities: Capabilities,
        settings: HttpSettings,
        *,
        unsupported: Callable[[CallRequest], str | None] = lambda request: None,
        retry_delay: Callable[[bytes], float | None] = lambda body: None,
    ) -> None:
        if spec.concurrency < 1:
            raise AdapterConfigError(f"judge {spec.name!r}: concurrency must be >= 1, got {spec.concurrency}")
        if spec.max_attempts < 1:
            raise AdapterConfigError(f"judge {spec.name!r}: max_attempts must be >= 1, got {spec.max_attempts}")
        self.spec = spec
        self.capabilities = capabilities
        self._dialect = dialect
        self._headers = {"Content-Type": "application/json", **headers}  # holds the key: never log or repr
        self._settings = settings
        self._unsupported = unsupported
        self._retry_delay = retry_delay  # a delay some providers put in the error body
        self._session: aiohttp.ClientSession | None = None
        self._plain: PlainHttpClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timeout = aiohttp.ClientTimeout(total=spec.timeout_s)
        self._rpm = _limiter(spec.rpm, window_s=1.0) if spec.rpm else None
        self._tpm = _limiter(spec.tpm, window_s=6.0) if spec.tpm else None
        # AIMD in-flight limit (its limit changes while calls are in flight)
        self._window = float(spec.concurrency)
        self._inflight = _InflightWindow(self.concurrency_limit)
        self._last_decrease = 0.0
        self._pause_until = 0.0  # judge-wide gate (monotonic clock)
        self._consecutive_failures = 0
        self._breaker_cause = ""
        self.stats = {"calls": 0, "attempts": 0, "rate_limited": 0, "retries": 0, "paused_s": 0.0}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} judge={self.spec.name!r} provider={self._dialect.provider} model={self.spec.model!r}>"

    @property
    def concurrency_limit(self) -> int:
        """The current (adaptive) in-flight limit."""
        return max(int(self._window), self._settings.min_concurrency)

    @property
    def circuit_open(self) -> bool:
        return bool(self._breaker_cause)

    def reset_circuit(self) -> None:
        """Close the breaker: the scheduler, which owns the failure policy,
        lets one probe call through after pausing the judge."""
        self._breaker_cause = ""
        self._consecutive_failures = 0

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._plain is not None:
            await self._plain.aclose()

    def _ensure_session(self) -> aiohttp.ClientSession:
        session = self._session
        loop = asyncio.get_running_loop()
        if session is None or session.closed or self._loop is not loop:
            # a session belongs to one event loop; a new run on a new loop gets a new one
            self._loop = loop
            connector = aiohttp.TCPConnector(
                limit=self.spec.concurrency,
                limit_per_host=self.spec.concurrency,
                ttl_dns_cache=self._settings.dns_ttl_s,
                use_dns_cache=True,
                keepalive_timeout=self._settings.keepalive_s,
            )
            session = self._session = aiohttp.ClientSession(
                connector=connector,
                timeout=self._timeout,
                auto_decompress=True,
                skip_auto_headers=("User-Agent",),
            )
        return session

    # -- the call --------------------------------------------------------

    async def complete(self, request: CallRequest) -> CallResult:
        started_wall = time.time()
        started = time.monotonic()
        self.stats["calls"] += 1
        if self._breaker_cause:
            return self._failure("circuit_open", self._breaker_cause, 0, started_wall)
        reason = self._unsupported(request)
        if reason:
            return self._failure("unsupported", f"judge {self.spec.name!r}: {reason}", 0, started_wall)
        try:
            url, body = self._dialect.url_and_body(request)
        except (ValueError, TypeError) as exc:
            return self._failure("bad_request", f"judge {self.spec.name!r}: cannot encode request: {exc}", 0, started_wall)
        headers = self._headers
        if request.item_tag:
            headers = {**headers, ITEM_TAG_HEADER: request.item_tag}
        tokens = estimated_tokens(request)
        deadline = started + self.spec.max_retry_time_s
        key = b""
        attempt = 0
        last = _Attempt(kind="timeout", text="no attempt made")
        while True:
            attempt += 1
            await self._wait_for_budget(tokens)
            await self._inflight.acquire()
            try:
                self.stats["attempts"] += 1
                last = await self._exchange(url, body, headers, tokens)
            finally:
                self._inflight.release()
            if last.result is not None:
                result = last.result
                result = msgspec.structs.replace(
                    result,
                    attempts=attempt,
                    started_at=started_wall,
                    finished_at=time.time(),
                    latency_s=last.latency_s,
                )
                if result.status == "error":
                    self._record_failure(result.error_kind, result.text)
                else:
                    self._consecutive_failures = 0
                    self._increase_window()
                return result
            # retryable failure
            if attempt >= self.spec.max_attempts:
                break
            if not key:
                key = request_key(request)
            base = min(self._settings.backoff_cap_s, self._settings.backoff_base_s * 2 ** (attempt - 1))
            delay = base * (0.5 + 0.5 * _jitter(key, attempt))
            if last.retry_after is not None:
                delay = max(delay, last.retry_after)
            if time.monotonic() + delay > deadline:
                break
            self.stats["retries"] += 1
            log.debug(
                "judge %s: %s (attempt %d of %d), retrying in %.2fs",
                self.spec.name, last.kind, attempt, self.spec.max_attempts, delay,
            )
            await anyio.sleep(delay)
        text = f"judge {self.spec.name!r}: gave up after {attempt} attempt(s): {last.kind}: {last.text}"
        result = self._failure(last.kind, text, attempt, started_wall, latency_s=last.latency_s)
        self._record_failure(last.kind, text)
        return result

    async def _exchange(self, url: str, body: bytes, headers: dict[str, str], tokens: int) -> _Attempt:
        sent = time.monotonic()
        response_headers: Mapping[str, str]
        try:
            if self._settings.transport == "auto" and url.startswith("http://"):
                if self._plain is None:
                    self._plain = PlainHttpClient(timeout_s=self.spec.timeout_s, keepalive_s=self._settings.keepalive_s)
                plain = await self._plain.post(url, body, headers)
                raw, status, response_headers = plain.body, plain.status, plain.headers
            else:
                async with self._ensure_session().post(url, data=body, headers=headers) as response:
                    raw = await response.read()
                    status = response.status
                    response_headers = response.headers
        except TimeoutError:
            return _Attempt(kind="timeout", text=f"no complete answer within {self.spec.timeout_s:g}s", latency_s=time.monotonic() - sent)
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TransportError) as exc:
            return _Attempt(kind="connection", text=f"{type(exc).__name__}: {exc}", latency_s=time.monotonic() - sent)
        except ValueError as exc:  # a header value that cannot go on the wire (a line break, non-Latin-1 text)
            text = f"judge {self.spec.name!r}: cannot send the request: {exc}"
            return _Attempt(result=CallResult(status="error", text=text, error_kind="bad_request"), latency_s=0.0)
        latency = time.monotonic() - sent
        now = time.time()
        pause = budget_pause_s(response_headers, tokens, now)
        if 200 <= status < 300:
            if pause:
                self._pause(pause)
            try:
                reply = self._dialect.read_reply(raw)
            except MalformedResponse as exc:
                return _Attempt(kind="malformed", text=f"{exc}; body: {_text(raw)}", latency_s=latency)
            return _Attempt(
                result=CallResult(
                    status=reply.status,  # type: ignore[arg-type]
                    text=reply.text,
                    usage=reply.usage,
                    cost_usd=cost_usd(self.spec.prices, reply.usage),
                    model_version=reply.model_version,
                    finish_reason=reply.finish_reason,
                ),
                latency_s=latency,
            )
        text = _text(raw)
        if status in RATE_LIMIT_STATUSES:
            self.stats["rate_limited"] += 1
            wait = retry_after_s(response_headers, now)
            if wait is None:
                wait = self._retry_delay(raw)
            self._decrease_window()
            # everyone waits: the key is throttled, not just this call
            self._pause(max(wait if wait is not None else self._settings.backoff_base_s, pause))
            kind = "rate_limit" if status == 429 else "overloaded"
            return _Attempt(kind=kind, text=f"HTTP {status}: {text}", retry_after=wait, latency_s=latency)
        refined = self._dialect.error_kind(status, raw)
        if refined == "refused":
            return _Attempt(result=CallResult(status="refused", text=text, finish_reason="content_filter"), latency_s=latency)
        if status in RETRYABLE_STATUSES:
            wait = retry_after_s(response_headers, now)
            return _Attempt(kind=refined or "server", text=f"HTTP {status}: {text}", retry_after=wait, latency_s=latency)
        kind = refined or TERMINAL_KINDS.get(status) or ("server" if status >= 500 else "bad_request")
        if status >= 500:
            return _Attempt(kind=kind, text=f"HTTP {status}: {text}", latency_s=latency)
        message = f"judge {self.spec.name!r} ({self._dialect.provider}): HTTP {status} {kind}: {text}"
        log.warning("judge %s: HTTP %d %s (not retried)", self.spec.name, status, kind)
        return _Attempt(result=CallResult(status="error", text=message, error_kind=kind), latency_s=latency)

    # -- rate-limit feedback ----------------------------------------------

    def _pause(self, seconds: float) -> None:
        # capped: a provider asking for an hour (a spent daily quota) must not freeze the
        # judge silently; calls keep failing as rate_limit and the breaker stops the judge
        if seconds > 0:
            self._pause_until = max(self._pause_until, time.monotonic() + min(seconds, MAX_JUDGE_PAUSE_S))

    async def _wait_for_budget(self, tokens: int) -> None:
        while True:
            wait = self._pause_until - time.monotonic()
            if wait <= 0:
                break
            self.stats["paused_s"] += wait
            await anyio.sleep(wait)
        if self._rpm is not None:
            await self._rpm.acquire()
        if self._tpm is not None:
            await self._tpm.acquire(min(tokens, self._tpm.max_rate))

    def _decrease_window(self) -> None:
        now = time.monotonic()
        # one decrease per burst: all the 429s of one window are one signal
        if now - self._last_decrease < 1.0:
            return
        self._last_decrease = now
        self._window = max(float(self._settings.min_concurrency), self._window / 2)
        self._apply_window()

    def _increase_window(self) -> None:
        if self._window < self.spec.concurrency:
            self._window = min(float(self.spec.concurrency), self._window + 1.0 / self._window)
            self._apply_window()

    def _apply_window(self) -> None:
        if self._inflight.limit != self.concurrency_limit:
            self._inflight.set_limit(self.concurrency_limit)

    # -- failures ---------------------------------------------------------

    def _record_failure(self, kind: str, text: str) -> None:
        self._consecutive_failures += 1
        if self._consecutive_failures >= self._settings.breaker_threshold and not self._breaker_cause:
            self._breaker_cause = (
                f"judge {self.spec.name!r} stopped by the circuit breaker after {self._consecutive_failures} "
                f"consecutive failed calls; last: {kind}: {text[:500]}"
            )
            log.error("%s", self._breaker_cause)

    @staticmethod
    def _failure(kind: str, text: str, attempts: int, started_wall: float, latency_s: float = 0.0) -> CallResult:
        return CallResult(
            status="error",
            text=text,
            error_kind=kind,
            attempts=attempts,
            started_at=started_wall,
            finished_at=time.time(),
            latency_s=latency_s,
        )


def _limiter(per_minute: float, window_s: float) -> AsyncLimiter:
    """A leaky bucket holding `window_s` worth of the rate (at least one unit),
    so a fresh judge does not burst a whole minute's budget at once."""
    if per_minute <= 0 or not math.isfinite(per_minute):
        raise AdapterConfigError(f"rate limits must be positive per-minute numbers, got {per_minute!r}")
    per_second = per_minute / 60.0
    window = max(window_s, 1.0 / per_second)
    return AsyncLimiter(per_second * window, window)


def _text(raw: bytes) -> str:
    text = raw.decode("utf-8", errors="replace")
    return text if len(text) <= MAX_ERROR_TEXT else text[:MAX_ERROR_TEXT] + "…"


def decode_json(raw: bytes, type_: Any) -> Any:
    """Decode a provider body into `type_`, as MalformedResponse on failure."""
    try:
        return msgspec.json.decode(raw, type=type_)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise MalformedResponse(f"unexpected response body ({exc})") from None
