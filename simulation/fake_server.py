"""The fake provider server: one aiohttp.web app on 127.0.0.1 speaking the
wire formats of OpenAI, Azure OpenAI, Anthropic and Gemini, for tests and
benchmarks without a network.

Routes:
  POST /v1/chat/completions                            OpenAI / OpenAI-compatible
  POST /openai/deployments/{deployment}/chat/completions?api-version=...   Azure
  POST /v1/messages                                    Anthropic (x-api-key, anthropic-version)
  POST /{version}/models/{model}:generateContent       Gemini (x-goog-api-key or ?key=)
  GET  /_fake/stats   POST /_fake/reset   GET /_fake/truth   POST /_fake/config
  and the batch APIs (simulation/batch_routes.py; state and counters in
  simulation/batch_endpoints.py, `stats()["batch"]`)

Every model answers as a simulated judge (simulation.judge): the
parameters of model id M are `judges[M]`, else `default_judge`. A pair call
(two delimited documents) gets "Score: NN"; a single-document call or a
request asking for JSON gets deterministic triples as JSON. Models matching
`missing_models` answer 404. Given the prepared corpus (`items`, an
`ItemIndex`), the judge recovers each item exactly from the documents it
is shown; without it, it guesses from the texts.

Requests are validated like the providers do (auth header, required fields)
with each provider's error body; responses carry usage blocks and
rate-limit headers. A per-model token bucket (`rpm`, simulation/rate_limits.py)
returns 429 with `retry-after` (+ `retry-after-ms`, `x-ratelimit-*` or
`anthropic-ratelimit-*`; Gemini puts RetryInfo in the body). Faults are
injected by rate or by schedule (the n-th matching request). Every request
is counted; completed answers are counted per request body so a test can
prove no completed call was repeated.

Each provider's wire format is a `WireDialect` in its own module
(simulation/wire_*.py); this module routes, counts, limits and injects
faults the same way for all of them.
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
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager
from typing import Any, TypeVar

import msgspec
from aiohttp import web

from simulation import judge as sim
from simulation.answers import answer
from simulation.batch_endpoints import BatchBook
from simulation.batch_routes import batch_routes
from simulation.fake_config import FakeConfig, Fault
from simulation.faults import hits, inject, uniform as _uniform
from simulation.items import ItemIndex
from simulation.rate_limits import RateLimits
from simulation.wire import ENCODER, JSON, Call, Reject, WireDialect
from simulation.wires import WIRES

T = TypeVar("T")



class FakeServer:
    """The app, its configuration and its counters (thread-safe enough for
    reading from a test thread while the server runs in another)."""

    def __init__(self, config: FakeConfig = FakeConfig(), items: ItemIndex | None = None) -> None:
        self.config = config
        self.items = items
        self.url = ""  # set by serve(): http://127.0.0.1:PORT
        self._lock = threading.Lock()
        self.batches = BatchBook(self)  # the batch APIs' state (simulation/batch_endpoints.py)
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
            self._rate_limits = RateLimits()
            self._seen_prefixes: set[bytes] = set()
            self._first_at = self._last_at = self._last_done_at = 0.0
            self._gpu_free_at = 0.0  # the simulated GPU's next free slot (monotonic)
            self._batch_peak = 0
        self.batches.reset()

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
                "last_completed_at": self._last_done_at,
                "batch_peak": self._batch_peak,  # most calls queued on the simulated GPU at once (capacity mode)
                "batch": self.batches.stats(),  # the batch APIs: batches created, entries run per custom_id
            }

    def truth(self) -> dict[str, Any]:
        out = {"default": sim.planted_truth(self.config.default_judge)}
        out.update({model: sim.planted_truth(params) for model, params in self.config.judges.items()})
        return out

    def judge_params(self, model: str) -> sim.SimJudgeParams:
        return self.config.judges.get(model, self.config.default_judge)

    # -- the app --------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application(client_max_size=256 * 1024 * 1024)
        for method, path, handler in batch_routes(self.batches):  # before the wires' catch-all Gemini route
            app.router.add_route(method, path, handler)
        for wire in WIRES:
            for route in wire.routes():
                app.router.add_post(route, self._handler(wire))
        _add_fake_routes(app, self)
        return app

    def _handler(self, wire: WireDialect):  # type: ignore[no-untyped-def]
        async def handle(request: web.Request) -> web.StreamResponse:
            return await self._serve(request, wire)

        return handle

    # -- one request ----------------------------------------------------

    async def _serve(self, request: web.Request, wire: WireDialect) -> web.StreamResponse:
        raw = await request.read()
        with self._lock:
            index = self._n
            self._n += 1
            now = time.time()
            self._first_at = self._first_at or now
            self._last_at = now
            self._by_provider[wire.provider] += 1
        config = self.config
        try:
            call = _validate(wire, request, raw, config)
        except Reject as reject:
            return self._count(reject.status, "rejected", wire.error_response(reject))
        with self._lock:
            self._by_model[call.model] += 1
        delay = _latency_s(config, index) + self._batch_wait_s(config)
        if delay > 0:
            await asyncio.sleep(delay)
        fault = self._fault_for(call, index)
        if fault is None and config.rpm:
            limited = self._rate_limits.refusal(wire, call.model, config)
            if limited is not None:
                return self._count(429, "rate_limited", limited)
        if fault is not None:
            with self._lock:  # counted when injected: a hang's handler is cancelled if the client gives up first
                self._by_outcome[fault.kind] += 1
            response = await inject(wire, fault, call, request, self.answer)
            return self._count(response.status, "", response)
        text, finish = self.answer(call)
        body = wire.success_body(call, text, finish, self.cached_prefix_tokens(call), config.seed + index)
        response = web.Response(body=body, content_type=JSON, headers=self._rate_limits.headers(wire, call.model, self.config))
        with self._lock:
            self._completions[_fingerprint(request, raw)] += 1
            self._last_done_at = time.time()
        return self._count(200, "ok", response)

    def _batch_wait_s(self, config: FakeConfig) -> float:
        """The simulated GPU (config.capacity = C calls/s): calls finish 1/C
        apart, each after those already in the batch, so the replica never
        serves more than C calls/s and a batch of b calls waits about b/C."""
        if not config.capacity:
            return 0.0
        with self._lock:
            now = time.monotonic()
            self._gpu_free_at = max(now, self._gpu_free_at) + 1.0 / config.capacity
            self._batch_peak = max(self._batch_peak, round((self._gpu_free_at - now) * config.capacity))
            return self._gpu_free_at - now

    def _count(self, status: int, outcome: str, response: web.StreamResponse) -> web.StreamResponse:
        with self._lock:
            self._by_status[str(status)] += 1
            if outcome:
                self._by_outcome[outcome] += 1
        return response

    def _fault_for(self, call: Call, index: int) -> Fault | None:
        chosen = None
        by_content = any(fault.draw_by == "content" for fault in self.config.faults)
        content = "\x1e".join([call.model, *(f"{m.role}\x1f{m.content}" for m in call.messages)]) if by_content else ""
        with self._lock:
            for number, fault in enumerate(self.config.faults):
                if fault.providers and call.provider not in fault.providers:
                    continue
                if not fnmatch.fnmatchcase(call.model, fault.models):
                    continue
                nth = self._fault_counters[number]
                self._fault_counters[number] += 1
                if hits(fault, self.config.seed, number, nth, content) and chosen is None:
                    chosen = fault
        return chosen

    def answer(self, call: Call) -> tuple[str, str]:
        return answer(self.judge_params(call.model), call, self.items)

    def cached_prefix_tokens(self, call: Call) -> int:
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


def _add_fake_routes(app: web.Application, server: FakeServer) -> None:
    """The test-control endpoints: /_fake/stats, /_fake/truth, /_fake/reset, /_fake/config."""

    async def stats(request: web.Request) -> web.Response:
        return web.Response(body=ENCODER.encode(server.stats()), content_type=JSON)

    async def truth(request: web.Request) -> web.Response:
        return web.Response(body=ENCODER.encode(server.truth()), content_type=JSON)

    async def reset(request: web.Request) -> web.Response:
        server.reset()
        return web.Response(body=b"{}", content_type=JSON)

    async def config(request: web.Request) -> web.Response:
        try:
            server.configure(**msgspec.json.decode(await request.read()))
        except (msgspec.DecodeError, msgspec.ValidationError, TypeError) as exc:
            return web.Response(status=400, body=ENCODER.encode({"error": str(exc)}), content_type=JSON)
        return web.Response(body=ENCODER.encode(msgspec.to_builtins(server.config)), content_type=JSON)

    app.router.add_get("/_fake/stats", stats)
    app.router.add_get("/_fake/truth", truth)
    app.router.add_post("/_fake/reset", reset)
    app.router.add_post("/_fake/config", config)


def _builtins(changes: dict[str, Any]) -> dict[str, Any]:
    return {k: msgspec.to_builtins(v) for k, v in changes.items()}


def _fingerprint(request: web.Request, raw: bytes) -> bytes:
    h = hashlib.blake2b(raw, digest_size=16)
    h.update(request.path.encode())
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


def _validate(wire: WireDialect, request: web.Request, raw: bytes, config: FakeConfig) -> Call:
    try:
        body = msgspec.json.decode(raw)
    except msgspec.DecodeError:
        raise Reject(400, wire.bad_request_kind, "We could not parse the JSON body of your request.") from None
    if not isinstance(body, dict):
        raise Reject(400, wire.bad_request_kind, "The request body must be a JSON object.")
    call = wire.validate(request, body)
    if not any(fnmatch.fnmatchcase(call.model, pattern) for pattern in config.keyless_models):
        key = wire.key(request)
        if not key:
            raise wire.missing_key()
        if config.valid_keys and key not in config.valid_keys:
            raise wire.invalid_key()
    if any(fnmatch.fnmatchcase(call.model, pattern) for pattern in config.missing_models):
        raise wire.not_found(call.model)
    return call


# ---------------------------------------------------------------------------
# Running it


@contextlib.asynccontextmanager
async def serve(
    config: FakeConfig = FakeConfig(), *, items: ItemIndex | None = None, port: int = 0, host: str = "127.0.0.1"
) -> AsyncIterator[FakeServer]:
    """Run the fake server in the current event loop; yields it with `.url` set."""
    server = FakeServer(config, items)
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
def serve_in_thread(config: FakeConfig = FakeConfig(), *, items: ItemIndex | None = None, port: int = 0) -> Iterator[FakeServer]:
    """Run the fake server on its own event loop in a thread (for sync tests and benchmarks)."""
    with async_server_in_thread(lambda: serve(config, items=items, port=port), name="fake-server") as server:
        yield server


@contextlib.contextmanager
def async_server_in_thread(open_server: Callable[[], AbstractAsyncContextManager[T]], *, name: str) -> Iterator[T]:
    """Enter the async context `open_server()` makes on its own event loop in
    a thread, and yield what it gives (a server, for sync tests)."""
    ready = threading.Event()
    holder: dict[str, Any] = {}
    loop = asyncio.new_event_loop()

    async def main() -> None:
        try:
            async with open_server() as server:
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

    thread = threading.Thread(target=loop.run_until_complete, args=(main(),), name=name, daemon=True)
    thread.start()
    ready.wait(30)
    if "error" in holder or "server" not in holder:
        thread.join(5)
        raise RuntimeError(f"{name} did not start: {holder.get('error')!r}")
    try:
        yield holder["server"]
    finally:
        loop.call_soon_threadsafe(holder["stop"].set)
        thread.join(10)
        loop.close()
