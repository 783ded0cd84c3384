"""The fake provider server: one aiohttp.web app on 127.0.0.1 speaking the
wire formats of OpenAI, Azure OpenAI, Anthropic and Gemini, for tests and
benchmarks without a network.

Routes:
  POST /v1/chat/completions                            OpenAI / OpenAI-compatible
  POST /openai/deployments/{deployment}/chat/completions?api-version=...   Azure
  POST /v1/messages                                    Anthropic (x-api-key, anthropic-version)
  POST /{version}/models/{model}:generateContent       Gemini (x-goog-api-key or ?key=)
  GET  /_fake/stats   POST /_fake/reset   GET /_fake/truth   POST /_fake/config

Every model answers as a simulated judge (adapters.simulated_judge): the
parameters of model id M are `judges[M]`, else `default_judge`. A pair call
(two delimited documents) gets "Score: NN"; a single-document call or a
request asking for JSON gets deterministic triples as JSON. Models matching
`missing_models` answer 404.

Requests are validated like the providers do (auth header, required fields)
with each provider's error body; responses carry usage blocks and
rate-limit headers. A per-model token bucket (`rpm`) returns 429 with
`retry-after` (+ `retry-after-ms`, `x-ratelimit-*` or `anthropic-ratelimit-*`;
Gemini puts RetryInfo in the body). Faults are injected by rate or by
schedule (the n-th matching request). Every request is counted; completed
answers are counted per request body so a test can prove no completed call
was repeated.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import hashlib
import math
import statistics
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from datetime import datetime, timezone
from typing import Any, Literal

import msgspec
from aiohttp import web

from adapters import simulated_judge as sim
from engine.contracts import ITEM_TAG_HEADER, ConfigError, Message

Provider = Literal["openai", "azure", "anthropic", "gemini"]
FaultKind = Literal[
    "server_error",  # 500 (or `status`) with the provider's error body
    "overloaded",  # 503 / Anthropic 529
    "rate_limit",  # 429 with retry headers
    "rate_limit_bare",  # 429 without any header
    "hang",  # answer only after hang_s (a client timeout)
    "reset",  # drop the connection without an answer
    "truncated",  # send half the body, then drop the connection
    "malformed",  # 200 with a body that is not JSON
    "content_filter",  # the provider's content-filter / refusal answer
    "prompt_filter",  # Azure-style 400 code content_filter (OpenAI formats), else as content_filter
    "unparseable",  # 200 with prose instead of a score
    "bad_request",  # 400
    "http_error",  # any `status` with the provider's error body for it (e.g. 403)
]


class Latency(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    kind: Literal["zero", "fixed", "uniform", "lognormal"] = "zero"
    value_s: float = 0.0  # fixed
    low_s: float = 0.0  # uniform
    high_s: float = 0.0
    median_s: float = 0.0  # lognormal
    sigma: float = 0.5


class Fault(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    kind: FaultKind
    rate: float = 0.0  # probability per matching request
    schedule: tuple[int, ...] = ()  # 0-based indices among matching requests
    models: str = "*"  # fnmatch pattern over the model / deployment id
    providers: tuple[str, ...] = ()  # empty: all
    status: int | None = None  # server_error status override
    hang_s: float = 30.0
    retry_after_s: float = 1.0  # rate_limit: the advertised wait


class FakeConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    seed: int = 0
    latency: Latency = Latency()
    rpm: float | None = None  # per model
    rpm_burst: float | None = None  # bucket size; default one second's worth (at least 1)
    faults: tuple[Fault, ...] = ()
    judges: dict[str, sim.SimJudgeParams] = {}
    default_judge: sim.SimJudgeParams = sim.SimJudgeParams()
    valid_keys: tuple[str, ...] = ()  # empty: any non-empty key is accepted
    missing_models: tuple[str, ...] = ("missing-*",)
    keyless_models: tuple[str, ...] = ("local-*",)  # like a local vLLM server: no key needed


def load_judges(path: str) -> dict[str, sim.SimJudgeParams]:
    """A judges file: JSON or TOML mapping model id → SimJudgeParams fields."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"judges file {path}: cannot read: {exc}") from None
    try:
        if path.endswith(".toml"):
            return msgspec.toml.decode(raw, type=dict[str, sim.SimJudgeParams])
        return msgspec.json.decode(raw, type=dict[str, sim.SimJudgeParams])
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(f"judges file {path}: expected a mapping of model id to simulated-judge parameters: {exc}") from None


def _uniform(*parts: object) -> float:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64


class _Bucket:
    """A token bucket: `rate` per second, `capacity` tokens."""

    def __init__(self, rate: float, capacity: float) -> None:
        self.rate, self.capacity = rate, capacity
        self.tokens, self.stamp = capacity, time.monotonic()

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False

    def wait_s(self) -> float:
        return max(1.0 - self.tokens, 0.0) / self.rate

    def full_s(self) -> float:
        return max(self.capacity - self.tokens, 0.0) / self.rate


class _Call(msgspec.Struct, kw_only=True):
    """A validated request, provider-neutral."""

    provider: Provider
    model: str
    messages: tuple[Message, ...]
    max_tokens: int
    wants_json: bool = False
    guided_regex: str | None = None
    seed: Any = None
    anthropic_cached_prefix: int = 0  # characters under cache_control


class _Reject(Exception):
    def __init__(self, status: int, kind: str, message: str, **extra: Any) -> None:
        super().__init__(message)
        self.status, self.kind, self.message, self.extra = status, kind, message, extra


_ENC = msgspec.json.Encoder()
_JSON = "application/json"


class FakeServer:
    """The app, its configuration and its counters (thread-safe enough for
    reading from a test thread while the server runs in another)."""

    def __init__(self, config: FakeConfig = FakeConfig()) -> None:
        self.config = config
        self.url = ""  # set by serve(): http://127.0.0.1:PORT
        self._lock = threading.Lock()
        self.reset()

    # -- state ----------------------------------------------------------

    def reset(self) -> None:
        with self._lock:
            self._n = 0
            self._fault_counters = [0] * len(self.config.faults)
            self._by_status: Counter[str] = Counter()
            self._by_provider: Counter[str] = Counter()
            self._by_model: Counter[str] = Counter()
            self._by_outcome: Counter[str] = Counter()
            self._completions: Counter[bytes] = Counter()
            self._buckets: dict[str, _Bucket] = {}
            self._seen_prefixes: set[bytes] = set()
            self._first_at = self._last_at = 0.0

    def set_config(self, config: FakeConfig) -> None:
        """Replace the whole configuration; counters are reset."""
        self.config = config
        self.reset()

    def configure(self, **changes: Any) -> None:
        """Replace config fields (e.g. faults=(...), rpm=600); counters are reset."""
        self.config = msgspec.convert({**msgspec.to_builtins(self.config), **_builtins(changes)}, FakeConfig)
        self.reset()

    def stats(self) -> dict[str, Any]:
        with self._lock:
            repeated = {k.hex(): n for k, n in self._completions.items() if n > 1}
            return {
                "requests": self._n,
                "completed": sum(self._completions.values()),
                "distinct_completed": len(self._completions),
                "repeated_completions": len(repeated),
                "repeated": repeated,
                "by_status": dict(self._by_status),
                "by_provider": dict(self._by_provider),
                "by_model": dict(self._by_model),
                "by_outcome": dict(self._by_outcome),
                "first_request_at": self._first_at,
                "last_request_at": self._last_at,
            }

    def truth(self) -> dict[str, Any]:
        out = {"default": sim.planted_truth(self.config.default_judge)}
        out.update({model: sim.planted_truth(params) for model, params in self.config.judges.items()})
        return out

    def judge_params(self, model: str) -> sim.SimJudgeParams:
        return self.config.judges.get(model, self.config.default_judge)

    # -- the app --------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._openai)
        app.router.add_post("/openai/deployments/{deployment}/chat/completions", self._azure)
        app.router.add_post("/v1/messages", self._anthropic)
        app.router.add_post("/{version}/models/{target}", self._gemini)
        app.router.add_get("/_fake/stats", self._stats)
        app.router.add_get("/_fake/truth", self._truth)
        app.router.add_post("/_fake/reset", self._reset)
        app.router.add_post("/_fake/config", self._config)
        return app

    async def _stats(self, request: web.Request) -> web.Response:
        return web.Response(body=_ENC.encode(self.stats()), content_type=_JSON)

    async def _truth(self, request: web.Request) -> web.Response:
        return web.Response(body=_ENC.encode(self.truth()), content_type=_JSON)

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.Response(body=b"{}", content_type=_JSON)

    async def _config(self, request: web.Request) -> web.Response:
        try:
            self.configure(**msgspec.json.decode(await request.read()))
        except (msgspec.DecodeError, msgspec.ValidationError, TypeError) as exc:
            return web.Response(status=400, body=_ENC.encode({"error": str(exc)}), content_type=_JSON)
        return web.Response(body=_ENC.encode(msgspec.to_builtins(self.config)), content_type=_JSON)

    async def _openai(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "openai")

    async def _azure(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "azure")

    async def _anthropic(self, request: web.Request) -> web.StreamResponse:
        return await self._serve(request, "anthropic")

    async def _gemini(self, request: web.Request) -> web.StreamResponse:
        if not request.match_info["target"].endswith(":generateContent"):
            return _error_response("gemini", _Reject(404, "NOT_FOUND", f"method not found: {request.path}"))
        return await self._serve(request, "gemini")

    # -- one request ----------------------------------------------------

    async def _serve(self, request: web.Request, provider: Provider) -> web.StreamResponse:
        raw = await request.read()
        with self._lock:
            index = self._n
            self._n += 1
            now = time.time()
            self._first_at = self._first_at or now
            self._last_at = now
            self._by_provider[provider] += 1
        config = self.config
        try:
            call = _validate(provider, request, raw, config)
        except _Reject as reject:
            return self._count(reject.status, "rejected", _error_response(provider, reject))
        with self._lock:
            self._by_model[call.model] += 1
        delay = _latency_s(config, index)
        if delay > 0:
            await asyncio.sleep(delay)
        fault = self._fault_for(call, index)
        if fault is None and config.rpm:
            limited = self._rate_limited(call, config)
            if limited is not None:
                return self._count(429, "rate_limited", limited)
        if fault is not None:
            response = await self._inject(fault, call, request)
            return self._count(response.status, fault.kind, response)
        text, finish = self._answer(call, request)
        body = _success_body(call, text, finish, self._cached_prefix_tokens(call), config.seed + index)
        response = web.Response(body=body, content_type=_JSON, headers=self._budget_headers(call))
        with self._lock:
            self._completions[_fingerprint(request, raw)] += 1
        return self._count(200, "ok", response)

    def _count(self, status: int, outcome: str, response: web.StreamResponse) -> web.StreamResponse:
        with self._lock:
            self._by_status[str(status)] += 1
            self._by_outcome[outcome] += 1
        return response

    def _fault_for(self, call: _Call, index: int) -> Fault | None:
        chosen = None
        with self._lock:
            for number, fault in enumerate(self.config.faults):
                if fault.providers and call.provider not in fault.providers:
                    continue
                if not fnmatch.fnmatchcase(call.model, fault.models):
                    continue
                nth = self._fault_counters[number]
                self._fault_counters[number] += 1
                hit = nth in fault.schedule or (fault.rate > 0 and _uniform(self.config.seed, "fault", number, nth) < fault.rate)
                if hit and chosen is None:
                    chosen = fault
        return chosen

    def _rate_limited(self, call: _Call, config: FakeConfig) -> web.Response | None:
        assert config.rpm
        with self._lock:
            bucket = self._buckets.get(call.model)
            if bucket is None:
                capacity = config.rpm_burst or max(1.0, config.rpm / 60.0)
                bucket = self._buckets[call.model] = _Bucket(config.rpm / 60.0, capacity)
            if bucket.take():
                return None
            wait = bucket.wait_s()
            headers = _budget_headers(call.provider, config, bucket)
        return _rate_limit_response(call.provider, wait, headers, bare=False)

    def _budget_headers(self, call: _Call) -> dict[str, str]:
        with self._lock:
            return _budget_headers(call.provider, self.config, self._buckets.get(call.model))

    async def _inject(self, fault: Fault, call: _Call, request: web.Request) -> web.StreamResponse:
        provider = call.provider
        if fault.kind == "server_error":
            status = fault.status or 500
            return _error_response(provider, _Reject(status, _server_kind(provider, status), "The server had an error processing your request."))
        if fault.kind == "overloaded":
            status = 529 if provider == "anthropic" else 503
            return _error_response(provider, _Reject(status, _server_kind(provider, status), "The service is temporarily overloaded."))
        if fault.kind in ("rate_limit", "rate_limit_bare"):
            return _rate_limit_response(provider, fault.retry_after_s, {}, bare=fault.kind == "rate_limit_bare")
        if fault.kind == "bad_request":
            return _error_response(provider, _Reject(400, _bad_kind(provider), "Invalid request (injected)."))
        if fault.kind == "http_error":
            status = fault.status or 500
            return _error_response(provider, _Reject(status, _kind_for_status(provider, status), f"Injected HTTP {status}."))
        if fault.kind == "hang":
            await asyncio.sleep(fault.hang_s)
            text, finish = self._answer(call, request)
            return web.Response(body=_success_body(call, text, finish, 0, 0), content_type=_JSON)
        if fault.kind == "reset":
            _drop(request)
            return web.Response(status=500)
        if fault.kind == "truncated":
            text, finish = self._answer(call, request)
            body = _success_body(call, text, finish, 0, 0)
            response = web.StreamResponse(headers={"Content-Type": _JSON})
            response.content_length = len(body)
            await response.prepare(request)
            await response.write(body[: len(body) // 2])
            _drop(request)
            return response
        if fault.kind == "malformed":
            return web.Response(body=b'{"id": "x", "choices": [{"index": 0, "message": {"role": "assis', content_type=_JSON)
        if fault.kind == "unparseable":
            return web.Response(body=_success_body(call, "I would rather not put a number on this.", "stop", 0, 0), content_type=_JSON)
        if fault.kind == "prompt_filter" and provider in ("openai", "azure"):
            return _error_response(provider, _Reject(400, "content_filter", "The response was filtered due to the prompt triggering the content management policy.",
                                                     innererror={"code": "ResponsibleAIPolicyViolation", "content_filter_result": {"hate": {"filtered": True, "severity": "high"}}}))
        return web.Response(body=_filtered_body(call, prompt_blocked=fault.kind == "prompt_filter"), content_type=_JSON)

    def _answer(self, call: _Call, request: web.Request) -> tuple[str, str]:
        """The simulated judge's answer text and finish reason."""
        from engine.prompts.documents import DocumentsNotFound, extract_document, extract_documents

        params = self.judge_params(call.model)
        try:
            first, second = extract_documents(call.messages)
        except DocumentsNotFound:
            try:
                text = sim.triples_answer(extract_document(call.messages))
            except DocumentsNotFound:
                return "I can only compare two documents given in <document_1> and <document_2> blocks.", "stop"
        else:
            if call.wants_json:
                text = msgspec.json.encode({"document_1": sim.triples(first), "document_2": sim.triples(second)}).decode()
            else:
                salt = "" if call.seed is None else str(call.seed)
                try:
                    text, value = sim.judge_answer(params, first, second, request.headers.get(ITEM_TAG_HEADER, ""), salt)
                except ValueError as exc:
                    return f"Bad item tag: {exc}", "stop"
                if call.guided_regex:
                    text = _fit_regex(call.guided_regex, text, value)
        limit = call.max_tokens * 4  # ~4 characters a token
        if len(text) > limit:
            return text[:limit], "length"
        return text, "stop"

    def _cached_prefix_tokens(self, call: _Call) -> int:
        """Simulated prefix caching: the system prompt counts as cached once seen."""
        if call.provider == "anthropic":
            prefix = call.anthropic_cached_prefix
            if not prefix:
                return 0
        system = "".join(m.content for m in call.messages if m.role == "system")
        if not system:
            return 0
        key = hashlib.blake2b(f"{call.provider}\x1f{call.model}\x1f{system}".encode(), digest_size=16).digest()
        with self._lock:
            seen = key in self._seen_prefixes
            self._seen_prefixes.add(key)
        tokens = len(system) // 4
        return tokens if seen else -tokens  # negative: written to the cache this time


def _builtins(changes: dict[str, Any]) -> dict[str, Any]:
    return {k: msgspec.to_builtins(v) for k, v in changes.items()}


def _fingerprint(request: web.Request, raw: bytes) -> bytes:
    h = hashlib.blake2b(raw, digest_size=16)
    h.update(request.path.encode())
    h.update(request.headers.get(ITEM_TAG_HEADER, "").encode())
    return h.digest()


def _latency_s(config: FakeConfig, index: int) -> float:
    lat = config.latency
    if lat.kind == "zero":
        return 0.0
    if lat.kind == "fixed":
        return lat.value_s
    u = _uniform(config.seed, "latency", index)
    if lat.kind == "uniform":
        return lat.low_s + (lat.high_s - lat.low_s) * u
    return lat.median_s * math.exp(lat.sigma * statistics.NormalDist().inv_cdf(min(max(u, 1e-9), 1 - 1e-9)))


def _drop(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()


def _fit_regex(pattern: str, text: str, value: int) -> str:
    """The answer in the first form the guided-decoding regex accepts: the
    score line, the bare 0-100 number, or the score mapped linearly onto the
    scale the regex admits (probed: -3..3, 1-7, 0-5, 0-1); unchanged when
    nothing fits."""
    import re

    try:
        compiled = re.compile(pattern)
    except re.error:
        return text
    fits = lambda candidate: compiled.fullmatch(candidate) is not None  # noqa: E731
    for candidate in (text, str(value)):
        if fits(candidate):
            return candidate
    for low, high, probe_in, probe_out in ((-3, 3, "-3", "4"), (1, 7, "7", "0"), (0, 5, "5", "6"), (0, 1, "1", "2")):
        if fits(probe_in) and not fits(probe_out):
            raw = low + value * (high - low) / 100
            for candidate in (f"{raw:.2f}", f"{raw:.1f}", str(round(raw))):
                if fits(candidate):
                    return candidate
    return text


# ---------------------------------------------------------------------------
# Validation (provider-specific)


def _validate(provider: Provider, request: web.Request, raw: bytes, config: FakeConfig) -> _Call:
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise _Reject(400, _bad_kind(provider), "We could not parse the JSON body of your request.") from None
    if not isinstance(body, dict):
        raise _Reject(400, _bad_kind(provider), "The request body must be a JSON object.")
    if provider in ("openai", "azure"):
        call = _validate_chat(provider, request, body)
    elif provider == "anthropic":
        call = _validate_anthropic(request, body)
    else:
        call = _validate_gemini(request, body)
    if not any(fnmatch.fnmatchcase(call.model, pattern) for pattern in config.keyless_models):
        _check_key(provider, request, config)
    if any(fnmatch.fnmatchcase(call.model, pattern) for pattern in config.missing_models):
        if provider == "azure":
            raise _Reject(404, "DeploymentNotFound", "The API deployment for this resource does not exist.")
        raise _Reject(404, _not_found_kind(provider), f"The model `{call.model}` does not exist or you do not have access to it.")
    return call


def _check_key(provider: Provider, request: web.Request, config: FakeConfig) -> None:
    headers = request.headers
    if provider == "openai":
        auth = headers.get("Authorization", "")
        key = auth[7:] if auth.startswith("Bearer ") else ""
    elif provider == "azure":
        key = headers.get("api-key", "") or headers.get("Authorization", "").removeprefix("Bearer ")
    elif provider == "anthropic":
        key = headers.get("x-api-key", "") or headers.get("Authorization", "").removeprefix("Bearer ")
    else:
        key = headers.get("x-goog-api-key", "") or request.query.get("key", "")
    if not key:
        if provider == "gemini":
            raise _Reject(403, "PERMISSION_DENIED", "Method doesn't allow unregistered callers. Please use an API key.")
        raise _Reject(401, _auth_kind(provider), "You didn't provide an API key.")
    if config.valid_keys and key not in config.valid_keys:
        if provider == "gemini":
            raise _Reject(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
                          details=[{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID", "domain": "googleapis.com"}])
        raise _Reject(401, _auth_kind(provider), "Incorrect API key provided.")


def _message_text(content: Any, where: str, provider: Provider) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for part in content:
            if not isinstance(part, dict) or part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise _Reject(400, _bad_kind(provider), f"{where}: each content part must be a text part")
            texts.append(part["text"])
        return "".join(texts)
    raise _Reject(400, _bad_kind(provider), f"{where}: content must be a string or a list of parts")


def _number(body: dict, name: str, low: float, high: float, provider: Provider) -> None:
    value = body.get(name)
    if value is not None and (not isinstance(value, (int, float)) or isinstance(value, bool) or not low <= value <= high):
        raise _Reject(400, _bad_kind(provider), f"Invalid value for '{name}': expected a number in [{low:g}, {high:g}], got {value!r}.")


def _max_tokens(body: dict, names: tuple[str, ...], provider: Provider, default: int | None) -> int:
    for name in names:
        value = body.get(name)
        if value is not None:
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise _Reject(400, _bad_kind(provider), f"Invalid '{name}': expected a positive integer, got {value!r}.")
            return value
    if default is None:
        raise _Reject(400, _bad_kind(provider), f"{names[0]}: Field required")
    return default


def _validate_chat(provider: Provider, request: web.Request, body: dict) -> _Call:
    if provider == "azure":
        if not request.query.get("api-version"):
            raise _Reject(404, "404", "Resource not found")
        model = request.match_info["deployment"]
    else:
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise _Reject(400, "invalid_request_error", "you must provide a model parameter", param="model")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _Reject(400, "invalid_request_error", "'messages' must be a non-empty array", param="messages")
    parsed = []
    for index, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("system", "developer", "user", "assistant"):
            raise _Reject(400, "invalid_request_error", f"Invalid value for 'messages[{index}].role'.", param=f"messages[{index}].role")
        role = "system" if m["role"] == "developer" else m["role"]
        parsed.append(Message(role, _message_text(m.get("content"), f"messages[{index}]", provider)))
    _number(body, "temperature", 0, 2, provider)
    _number(body, "top_p", 0, 1, provider)
    max_tokens = _max_tokens(body, ("max_completion_tokens", "max_tokens"), provider, 4096)
    fmt = body.get("response_format")
    wants_json = isinstance(fmt, dict) and fmt.get("type") in ("json_object", "json_schema")
    structured = body.get("structured_outputs")
    guided = body.get("guided_regex")
    if isinstance(structured, dict):
        guided = structured.get("regex", guided)
        wants_json = wants_json or "json" in structured
    wants_json = wants_json or "guided_json" in body
    return _Call(provider=provider, model=model, messages=tuple(parsed), max_tokens=max_tokens,
                 wants_json=wants_json, guided_regex=guided if isinstance(guided, str) else None, seed=body.get("seed"))


def _validate_anthropic(request: web.Request, body: dict) -> _Call:
    if not request.headers.get("anthropic-version"):
        raise _Reject(400, "invalid_request_error", "anthropic-version: header is required")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _Reject(400, "invalid_request_error", "model: Field required")
    max_tokens = _max_tokens(body, ("max_tokens",), "anthropic", None)
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise _Reject(400, "invalid_request_error", "messages: at least one message is required")
    parsed = []
    cached = 0
    system = body.get("system")
    if system is not None:
        if isinstance(system, list) and any(isinstance(b, dict) and b.get("cache_control") for b in system):
            cached = sum(len(b.get("text", "")) for b in system if isinstance(b, dict))
        parsed.append(Message("system", _message_text(system, "system", "anthropic")))
    for index, m in enumerate(messages):
        if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
            raise _Reject(400, "invalid_request_error", f"messages.{index}.role: Input should be 'user' or 'assistant'")
        parsed.append(Message(m["role"], _message_text(m.get("content"), f"messages.{index}", "anthropic")))
    _number(body, "temperature", 0, 1, "anthropic")
    _number(body, "top_p", 0, 1, "anthropic")
    return _Call(provider="anthropic", model=model, messages=tuple(parsed), max_tokens=max_tokens, anthropic_cached_prefix=cached)


def _validate_gemini(request: web.Request, body: dict) -> _Call:
    model = request.match_info["target"].removesuffix(":generateContent")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise _Reject(400, "INVALID_ARGUMENT", "* GenerateContentRequest.contents: contents is not specified")
    parsed = []
    system = body.get("systemInstruction") or body.get("system_instruction")
    if system is not None:
        parsed.append(Message("system", _gemini_text(system, "systemInstruction")))
    for index, content in enumerate(contents):
        role = content.get("role", "user") if isinstance(content, dict) else None
        if role not in ("user", "model"):
            raise _Reject(400, "INVALID_ARGUMENT", f"* GenerateContentRequest.contents[{index}].role: Please use a valid role: user, model.")
        parsed.append(Message("assistant" if role == "model" else "user", _gemini_text(content, f"contents[{index}]")))
    config = body.get("generationConfig") or {}
    if not isinstance(config, dict):
        raise _Reject(400, "INVALID_ARGUMENT", "generationConfig must be an object")
    _number(config, "temperature", 0, 2, "gemini")
    _number(config, "topP", 0, 1, "gemini")
    max_tokens = _max_tokens(config, ("maxOutputTokens",), "gemini", 8192)
    wants_json = config.get("responseMimeType") == "application/json"
    return _Call(provider="gemini", model=model, messages=tuple(parsed), max_tokens=max_tokens, wants_json=wants_json, seed=config.get("seed"))


def _gemini_text(content: Any, where: str) -> str:
    parts = content.get("parts") if isinstance(content, dict) else None
    if not isinstance(parts, list) or not parts:
        raise _Reject(400, "INVALID_ARGUMENT", f"* GenerateContentRequest.{where}.parts: contents.parts must not be empty.")
    texts = []
    for part in parts:
        if not isinstance(part, dict) or not isinstance(part.get("text"), str):
            raise _Reject(400, "INVALID_ARGUMENT", f"* GenerateContentRequest.{where}.parts: only text parts are supported here")
        texts.append(part["text"])
    return "".join(texts)


# ---------------------------------------------------------------------------
# Response bodies (provider-specific)


def _bad_kind(provider: str) -> str:
    return {"anthropic": "invalid_request_error", "gemini": "INVALID_ARGUMENT"}.get(provider, "invalid_request_error")


def _auth_kind(provider: str) -> str:
    return {"anthropic": "authentication_error", "gemini": "UNAUTHENTICATED", "azure": "401"}.get(provider, "invalid_api_key")


def _not_found_kind(provider: str) -> str:
    return {"anthropic": "not_found_error", "gemini": "NOT_FOUND"}.get(provider, "model_not_found")


def _kind_for_status(provider: str, status: int) -> str:
    if status >= 500:
        return _server_kind(provider, status)
    by_status = {
        "anthropic": {401: "authentication_error", 403: "permission_error", 404: "not_found_error", 413: "request_too_large"},
        "gemini": {401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND"},
    }.get(provider, {401: "invalid_api_key", 403: "permission_denied", 404: "model_not_found"})
    return by_status.get(status, _bad_kind(provider))


def _server_kind(provider: str, status: int) -> str:
    if provider == "anthropic":
        return "overloaded_error" if status == 529 else "api_error"
    if provider == "gemini":
        return "UNAVAILABLE" if status == 503 else "INTERNAL"
    return "server_error"


def _error_body(provider: str, reject: _Reject) -> bytes:
    if provider == "anthropic":
        return _ENC.encode({"type": "error", "error": {"type": reject.kind, "message": reject.message}, "request_id": "req_fake"})
    if provider == "gemini":
        error: dict[str, Any] = {"code": reject.status, "message": reject.message, "status": reject.kind}
        if "details" in reject.extra:
            error["details"] = reject.extra["details"]
        return _ENC.encode({"error": error})
    if provider == "azure" and reject.kind != "content_filter":
        return _ENC.encode({"error": {"code": reject.kind, "message": reject.message}})
    error = {"message": reject.message, "type": reject.kind if reject.kind.endswith("_error") else "invalid_request_error",
             "param": reject.extra.get("param"), "code": reject.kind}
    if "innererror" in reject.extra:
        error["innererror"] = reject.extra["innererror"]
        error["status"] = reject.status
    return _ENC.encode({"error": error})


def _error_response(provider: str, reject: _Reject, headers: dict[str, str] | None = None) -> web.Response:
    return web.Response(status=reject.status, body=_error_body(provider, reject), content_type=_JSON, headers=headers)


def _rate_limit_response(provider: str, wait: float | None, extra: dict[str, str], *, bare: bool) -> web.Response:
    message = "Rate limit reached for requests. Please try again later."
    if provider == "gemini":
        details = [] if bare or wait is None else [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": f"{max(wait, 0.001):.3f}s"}]
        return _error_response(provider, _Reject(429, "RESOURCE_EXHAUSTED", message, details=details))
    headers = dict(extra)
    if not bare and wait is not None:
        headers["retry-after"] = str(max(1, math.ceil(wait)))
        headers["retry-after-ms"] = str(max(1, math.ceil(wait * 1000)))
    kind = "rate_limit_error" if provider == "anthropic" else "rate_limit_exceeded"
    if provider == "azure":
        kind = "429"
    return _error_response(provider, _Reject(429, kind, message), headers)


def _budget_headers(provider: str, config: FakeConfig, bucket: _Bucket | None) -> dict[str, str]:
    if not config.rpm or bucket is None or provider == "gemini":
        return {}
    remaining = str(int(bucket.tokens))
    if provider == "anthropic":
        reset = datetime.fromtimestamp(time.time() + bucket.full_s(), tz=timezone.utc).isoformat().replace("+00:00", "Z")
        return {"anthropic-ratelimit-requests-limit": str(int(config.rpm)),
                "anthropic-ratelimit-requests-remaining": remaining,
                "anthropic-ratelimit-requests-reset": reset}
    return {"x-ratelimit-limit-requests": str(int(config.rpm)),
            "x-ratelimit-remaining-requests": remaining,
            "x-ratelimit-reset-requests": f"{bucket.full_s() * 1000:.0f}ms"}


def _usage_numbers(call: _Call, text: str, cached: int) -> tuple[int, int, int, int]:
    """(prompt tokens, completion tokens, cache reads, cache writes) at ~4 characters a token."""
    prompt = max(1, sum(len(m.content) for m in call.messages) // 4)
    completion = max(1, len(text) // 4)
    reads = max(cached, 0)
    writes = -cached if cached < 0 else 0
    return prompt, completion, reads, writes


def _success_body(call: _Call, text: str, finish: str, cached: int, salt: int) -> bytes:
    prompt, completion, reads, writes = _usage_numbers(call, text, cached)
    if call.provider in ("openai", "azure"):
        return _ENC.encode({
            "id": f"chatcmpl-fake{salt}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": call.model,
            "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": None},
                         "logprobs": None, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": reads},
                      "completion_tokens_details": {"reasoning_tokens": 0}},
        })
    if call.provider == "anthropic":
        return _ENC.encode({
            "id": f"msg_fake{salt}",
            "type": "message",
            "role": "assistant",
            "model": call.model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": "max_tokens" if finish == "length" else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": prompt - reads - writes if prompt > reads + writes else 1, "output_tokens": completion,
                      "cache_creation_input_tokens": writes, "cache_read_input_tokens": reads},
        })
    return _ENC.encode({
        "candidates": [{"content": {"parts": [{"text": text}], "role": "model"},
                        "finishReason": "MAX_TOKENS" if finish == "length" else "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": completion,
                          "totalTokenCount": prompt + completion, "cachedContentTokenCount": reads},
        "modelVersion": call.model,
        "responseId": f"fake{salt}",
    })


def _filtered_body(call: _Call, *, prompt_blocked: bool) -> bytes:
    prompt, _, _, _ = _usage_numbers(call, "", 0)
    if call.provider in ("openai", "azure"):
        return _ENC.encode({
            "id": "chatcmpl-filtered", "object": "chat.completion", "created": int(time.time()), "model": call.model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": None}, "finish_reason": "content_filter",
                         "content_filter_results": {"violence": {"filtered": True, "severity": "medium"}}}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": 0, "total_tokens": prompt},
        })
    if call.provider == "anthropic":
        return _ENC.encode({
            "id": "msg_refusal", "type": "message", "role": "assistant", "model": call.model, "content": [],
            "stop_reason": "refusal", "stop_sequence": None, "usage": {"input_tokens": prompt, "output_tokens": 0},
        })
    if prompt_blocked:
        return _ENC.encode({"promptFeedback": {"blockReason": "SAFETY", "safetyRatings": []},
                            "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt}, "modelVersion": call.model})
    return _ENC.encode({
        "candidates": [{"finishReason": "SAFETY", "index": 0,
                        "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]}],
        "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt}, "modelVersion": call.model,
    })


# ---------------------------------------------------------------------------
# Running it


@contextlib.asynccontextmanager
async def serve(config: FakeConfig = FakeConfig(), *, port: int = 0, host: str = "127.0.0.1") -> AsyncIterator[FakeServer]:
    """Run the fake server in the current event loop; yields it with `.url` set."""
    server = FakeServer(config)
    runner = web.AppRunner(server.app(), access_log=None, handle_signals=False, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True, backlog=1024)
    await site.start()
    bound = runner.addresses[0]
    server.url = f"http://{host}:{bound[1]}"
    try:
        yield server
    finally:
        await runner.cleanup()


@contextlib.contextmanager
def serve_in_thread(config: FakeConfig = FakeConfig(), *, port: int = 0) -> Iterator[FakeServer]:
    """Run the fake server on its own event loop in a thread (for sync tests and benchmarks)."""
    ready = threading.Event()
    holder: dict[str, Any] = {}
    loop = asyncio.new_event_loop()

    async def main() -> None:
        try:
            async with serve(config, port=port) as server:
                holder["server"] = server
                holder["stop"] = stop = asyncio.Event()
                ready.set()
                await stop.wait()
        except BaseException as exc:  # surfaced to the caller below
            holder["error"] = exc
            ready.set()
        # handlers still sleeping (hang faults) belong to this private loop: end them here
        leftovers = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in leftovers:
            task.cancel()
        await asyncio.gather(*leftovers, return_exceptions=True)

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), name="fake-server", daemon=True)
    thread.start()
    ready.wait(30)
    if "error" in holder or "server" not in holder:
        thread.join(5)
        raise RuntimeError(f"fake server did not start: {holder.get('error')!r}")
    try:
        yield holder["server"]
    finally:
        loop.call_soon_threadsafe(holder["stop"].set)
        thread.join(10)
        loop.close()
