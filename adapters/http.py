"""Shared machinery of the HTTP adapters: transport, rate limits, retries.

A provider module supplies a `Dialect` (adapters/dialect.py: how to build a
request and read a response in its wire format); `HttpAdapter` does
everything else the same way for every provider:

- the transport: aiohttp for every URL (adapters/transport.py), with the
  keep-alive race handled there (a reused connection the server closed
  before answering is replayed at once on a fresh one);
- requests-per-minute and tokens-per-minute limiters (adapters/pacing.py);
- a judge-wide pause gate fed by `retry-after` / `retry-after-ms` and by the
  `x-ratelimit-*` / `anthropic-ratelimit-*` headers, so the judge slows
  down *before* a 429 when the provider says the budget is spent;
- additive-increase / multiplicative-decrease of the in-flight limit on
  rate-limit feedback (429, 529);
- retries with jittered exponential backoff on 429, 5xx, timeouts, dropped
  connections and malformed bodies, bounded by attempts and total time;
  400/401/403/404 fail fast, and so does a `101 Switching Protocols`
  answer (kind `protocol`: the URL is an upgrade endpoint, not an API);
  after a burst of failed calls a circuit breaker answers `circuit_open`
  at once (the scheduler then pauses the judge, probes it and closes the
  breaker with `reset_circuit`).

Rate limits are recognised by status code only, never by message text.
`complete()` never raises for provider failures: it returns a classified
`CallResult`. API keys live only in the request headers built here and are
never logged, repr'd or put into results.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections.abc import Callable, Mapping

import aiohttp
import anyio
import msgspec

from adapters.dialect import (
    RATE_LIMIT_STATUSES,
    Attempt,
    Dialect,
    classify_answer,
)
from adapters.pacing import Pacer, budget_pause_s, retry_after_s
from adapters.replicas import ReplicaPool, ReplicasDown
from adapters.transport import REPLAY_NOTE, AiohttpTransport

from engine.contracts import (
    AdapterConfigError,
    Capabilities,
    CallRequest,
    CallResult,
    JudgeSpec,
    request_key,
)
from engine.prompts.prefix import prefix_key

log = logging.getLogger("needlejudge.adapters")

# Retryable kinds that are the replica's fault, not the request's: the call moves to another replica.
REPLICA_FAILURE_KINDS = frozenset({"timeout", "connection", "server", "malformed"})



# ---------------------------------------------------------------------------
# Settings


class HttpSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The transport options an HTTP judge may set in `JudgeSpec.options`."""

    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0
    breaker_threshold: int = 20  # consecutive failed calls that stop the judge
    min_concurrency: int = 1
    keepalive_s: float | None = None  # idle connection lifetime; default by scheme (adapters/transport.py)
    dns_ttl_s: float = 300.0


# Options earlier versions took, and why they are gone: a config setting one
# gets this reason rather than a bare "unknown option".
RETIRED_OPTIONS = {
    "item_metadata": "the simulated judge now recovers each item from the texts it is shown "
    "(start the fake server with --store STORE); remove the option",
}
# Options that no longer do anything: accepted with a warning, so configs keep running.
DEPRECATED_OPTIONS = {
    "transport": "every judge now uses aiohttp, for http:// and https:// alike; the option is ignored",
}


def settings_from_options(spec: JudgeSpec, own_keys: frozenset[str]) -> HttpSettings:
    """The HttpSettings part of `spec.options`; unknown keys are a ConfigError."""
    for name in sorted(set(spec.options) & set(RETIRED_OPTIONS)):
        raise AdapterConfigError(f"judge {spec.name!r}: option {name!r} was removed: {RETIRED_OPTIONS[name]}")
    for name in sorted(set(spec.options) & set(DEPRECATED_OPTIONS)):
        log.warning("judge %s: option %r is deprecated: %s", spec.name, name, DEPRECATED_OPTIONS[name])
    if spec.base_urls and spec.adapter != "openai-compatible":
        raise AdapterConfigError(
            f"judge {spec.name!r}: base_urls (several replicas) is for adapter 'openai-compatible' only, "
            f"not {spec.adapter!r}; use base_url"
        )
    fields = set(HttpSettings.__struct_fields__)
    unknown = set(spec.options) - fields - own_keys - set(DEPRECATED_OPTIONS)
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


def estimated_tokens(request: CallRequest) -> int:
    """A cheap upper-ish estimate for the tokens-per-minute limiter (~4 characters a token)."""
    return sum(len(m.content) for m in request.messages) // 4 + 8 * len(request.messages) + request.decoding.max_tokens


# ---------------------------------------------------------------------------
# Rate-limit headers

def _jitter(key: bytes, attempt: int) -> float:
    """A uniform [0, 1) draw keyed by the request and attempt (decorrelates retries, reproducibly)."""
    digest = hashlib.blake2b(key + attempt.to_bytes(4, "little"), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64


class CircuitBreaker:
    """Consecutive failed calls of one judge; after `threshold` of them the
    breaker opens and every call answers `circuit_open` at once, until the
    scheduler (which owns the failure policy) resets it to let a probe through."""

    __slots__ = ("judge", "threshold", "consecutive", "cause")

    def __init__(self, judge: str, threshold: int) -> None:
        self.judge = judge
        self.threshold = threshold
        self.consecutive = 0
        self.cause = ""  # why it opened; empty while closed

    def succeeded(self) -> None:
        self.consecutive = 0

    def failed(self, kind: str, text: str) -> None:
        self.consecutive += 1
        if self.consecutive >= self.threshold and not self.cause:
            self.cause = (
                f"judge {self.judge!r} stopped by the circuit breaker after {self.consecutive} "
                f"consecutive failed calls; last: {kind}: {text[:500]}"
            )
            log.error("%s", self.cause)

    def reset(self) -> None:
        self.cause = ""
        self.consecutive = 0


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
        retry_delay: Callable[[bytes], float | None] = lambda body: None,
        replicas: ReplicaPool | None = None,
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
        self._retry_delay = retry_delay  # a delay some providers put in the error body
        self._transport = AiohttpTransport(
            concurrency=spec.concurrency, timeout_s=spec.timeout_s, keepalive_s=settings.keepalive_s, dns_ttl_s=settings.dns_ttl_s
        )
        self._pace = Pacer(spec.concurrency, settings.min_concurrency, rpm=spec.rpm, tpm=spec.tpm)
        self._breaker = CircuitBreaker(spec.name, settings.breaker_threshold)
        self._warned: set[str] = set()  # error kinds already logged
        self.replicas = replicas  # several servers behind this judge (adapters/replicas.py)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} judge={self.spec.name!r} provider={self._dialect.provider} model={self.spec.model!r}>"

    @property
    def concurrency_limit(self) -> int:
        """The current (adaptive) in-flight limit."""
        return self._pace.limit

    @property
    def circuit_open(self) -> bool:
        return bool(self._breaker.cause)

    def reset_circuit(self) -> None:
        """Close the breaker: the scheduler, which owns the failure policy,
        lets one probe call through after pausing the judge."""
        self._breaker.reset()

    async def aclose(self) -> None:
        await self._transport.aclose()

    # -- the call --------------------------------------------------------

    async def complete(self, request: CallRequest) -> CallResult:
        started_wall = time.time()
        started = time.monotonic()
        if self._breaker.cause:
            return self._failure("circuit_open", self._breaker.cause, 0, started_wall)
        if request.decoding.guided_regex and not self.capabilities.guided_decoding:
            reason = f"{self._dialect.provider} has no regex-guided decoding (guided_regex); see Capabilities"
            return self._failure("unsupported", f"judge {self.spec.name!r}: {reason}", 0, started_wall)
        try:
            url, body = self._dialect.url_and_body(request)
        except (ValueError, TypeError) as exc:
            return self._failure("bad_request", f"judge {self.spec.name!r}: cannot encode request: {exc}", 0, started_wall)
        headers = self._headers
        tokens = estimated_tokens(request)
        deadline = started + self.spec.max_retry_time_s
        # siblings (the same prompt up to the last document) go to the same replica
        prefix = None if self.replicas is None else prefix_key(request.messages)
        key = b""
        attempt = 0
        budget_used = 0  # attempts that count against max_attempts
        failovers = 0  # replica failures moved straight to another replica, free: at most one per replica
        last = Attempt(kind="timeout", text="no attempt made")
        while True:
            await self._pace.wait_for_budget(tokens)
            await self._pace.inflight.acquire()
            try:
                if self.replicas is None:
                    last = await self._exchange(url, body, headers, tokens)
                else:
                    last = await self._exchange_on_replica(url, body, headers, tokens, prefix)
            finally:
                self._pace.inflight.release()
            if last.sent == 0:  # every replica is out
                break
            attempt += last.sent  # every request sent counts, replays too
            if (
                last.result is None
                and last.kind in REPLICA_FAILURE_KINDS
                and self.replicas is not None
                and failovers < len(self.replicas.replicas)
                and time.monotonic() < deadline
            ):
                failovers += 1
                continue  # the replica failed, not the call: straight to another one
            budget_used += last.sent
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
                    self._breaker.failed(result.error_kind, result.text)
                else:
                    self._breaker.succeeded()
                    self._pace.increase()
                return result
            # retryable failure
            if budget_used >= self.spec.max_attempts:
                break
            if not key:
                key = request_key(request)
            delay = backoff_s(self._settings, key, budget_used, last.retry_after)
            if time.monotonic() + delay > deadline:
                break
            log.debug(
                "judge %s: %s (attempt %d of %d), retrying in %.2fs",
                self.spec.name, last.kind, attempt, self.spec.max_attempts, delay,
            )
            await anyio.sleep(delay)
        text = f"judge {self.spec.name!r}: gave up after {attempt} attempt(s): {last.kind}: {last.text}"
        result = self._failure(last.kind, text, attempt, started_wall, latency_s=last.latency_s)
        self._breaker.failed(last.kind, text)
        return result

    async def _exchange_on_replica(
        self, url: str, body: bytes, headers: dict[str, str], tokens: int, prefix: bytes | None
    ) -> Attempt:
        """One exchange with the replica the pool picks for the call's `prefix`
        key (`url` names the first one; the same path goes to the chosen one).
        `sent == 0` when every replica is out."""
        assert self.replicas is not None
        try:
            replica = await self.replicas.acquire(prefix)
        except ReplicasDown as exc:
            return Attempt(kind="replicas_down", text=f"judge {self.spec.name!r}: {exc}", sent=0)
        error = ""
        try:
            outcome = await self._exchange(replica.url + url[len(self.replicas.replicas[0].url):], body, headers, tokens)
            if outcome.result is None and outcome.kind in REPLICA_FAILURE_KINDS:
                error = f"{outcome.kind}: {outcome.text}"
            return outcome
        finally:
            self.replicas.release(replica, failed=bool(error), error=error)

    async def _exchange(self, url: str, body: bytes, headers: dict[str, str], tokens: int) -> Attempt:
        sent = time.monotonic()
        try:
            answer = await self._transport.post(url, body, headers)
        except TimeoutError as exc:
            return Attempt(kind="timeout", text=f"no complete answer within {self.spec.timeout_s:g}s",
                            latency_s=time.monotonic() - sent, sent=_requests_sent(exc))
        except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, aiohttp.ClientResponseError) as exc:
            return Attempt(kind="connection", text=f"{type(exc).__name__}: {exc}", latency_s=time.monotonic() - sent,
                            sent=_requests_sent(exc))
        except ValueError as exc:  # a header value that cannot go on the wire (a line break, non-Latin-1 text)
            text = f"judge {self.spec.name!r}: cannot send the request: {exc}"
            return Attempt(result=CallResult(status="error", text=text, error_kind="bad_request"), latency_s=0.0)
        outcome = self._read(answer.status, answer.headers, answer.body, time.monotonic() - sent, tokens)
        outcome.sent = answer.sent
        return outcome

    def _read(self, status: int, response_headers: Mapping[str, str], raw: bytes, latency: float, tokens: int) -> Attempt:
        """Classify one answer (`classify_answer`) and apply what it says about pacing."""
        now = time.time()
        pause = budget_pause_s(response_headers, tokens, now)
        outcome = classify_answer(self.spec, self._dialect, status, raw, upgrade=response_headers.get("Upgrade", "unnamed"))
        outcome.latency_s = latency
        if 200 <= status < 300:
            if pause:
                self._pace.pause(pause)
        elif status in RATE_LIMIT_STATUSES:
            wait = retry_after_s(response_headers, now)
            if wait is None:
                wait = self._retry_delay(raw)
            self._pace.decrease()
            # everyone waits: the key is throttled, not just this call
            self._pace.pause(max(wait if wait is not None else self._settings.backoff_base_s, pause))
            outcome.retry_after = wait
        elif outcome.result is None:
            outcome.retry_after = retry_after_s(response_headers, now)
        if outcome.result is not None and outcome.result.status == "error":
            # once per kind: a key the provider rejects is rejected for every call in flight
            kind = outcome.result.error_kind
            if kind not in self._warned:
                self._warned.add(kind)
                log.warning("judge %s: HTTP %d %s (not retried)", self.spec.name, status, kind)
        return outcome

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


def backoff_s(settings: HttpSettings, key: bytes, attempt: int, retry_after: float | None) -> float:
    """The wait before retry number `attempt` (1-based): jittered exponential
    backoff, at least what the provider advertised."""
    base = min(settings.backoff_cap_s, settings.backoff_base_s * 2 ** (attempt - 1))
    delay = base * (0.5 + 0.5 * _jitter(key, attempt))
    return delay if retry_after is None else max(delay, retry_after)


def _requests_sent(exc: BaseException) -> int:
    return 2 if REPLAY_NOTE in getattr(exc, "__notes__", ()) else 1
