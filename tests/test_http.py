"""The shared HTTP machinery (adapters/http.py): header parsing, cost, and the
behaviour of every HTTP adapter against the fake provider server over real
HTTP — success, each fault class, fail-fast errors, refusals, retries bounded
by attempts and time, the circuit breaker, cancellation, AIMD and the
requests-per-minute limiter."""

from __future__ import annotations

import time

import anyio
import pytest
from http_fixtures import ADAPTERS, judge_request, spec_for

from simulation.fake_config import FakeConfig, Fault
from adapters.dialect import cost_usd
from engine.registry import create_adapter
from engine.contracts import AdapterConfigError, JudgeSpec, Prices, Usage

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("keys")]

def configure(server, **fields) -> None:
    server.set_config(FakeConfig(**fields))


async def call_once(spec: JudgeSpec, request):
    adapter = create_adapter(spec)
    try:
        return await adapter.complete(request)
    finally:
        await adapter.aclose()


# ---------------------------------------------------------------------------
# Pure parts


def test_cost_prices_cached_prompt_tokens_separately():
    prices = Prices(input=2.0, output=8.0, cached_input=0.5)
    usage = Usage(prompt_tokens=1000, completion_tokens=100, cached_tokens=400)
    assert cost_usd(prices, usage) == pytest.approx((600 * 2.0 + 400 * 0.5 + 100 * 8.0) / 1e6)
    assert cost_usd(Prices(input=2.0, output=8.0), usage) == pytest.approx((1000 * 2.0 + 100 * 8.0) / 1e6)


def test_unknown_or_bad_options_are_config_errors_naming_the_key():
    with pytest.raises(AdapterConfigError, match="backof_base_s"):
        create_adapter(spec_for("openai", "http://127.0.0.1:9", "m", options={"backof_base_s": 1}))
    with pytest.raises(AdapterConfigError, match="breaker_threshold"):
        create_adapter(spec_for("openai", "http://127.0.0.1:9", "m", options={"breaker_threshold": "many"}))


@pytest.mark.parametrize("adapter", ["openai", "azure", "anthropic", "gemini"])
def test_missing_key_names_the_variable(adapter, monkeypatch):
    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(AdapterConfigError, match=r"environment variable [A-Z_]+_API_KEY"):
        create_adapter(spec_for(adapter, "http://127.0.0.1:9", "m", api_key_env=None))


# ---------------------------------------------------------------------------
# Every adapter against the fake server


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_success(server, adapter):
    configure(server)
    spec = spec_for(adapter, server.url, "sim-ok", prices=Prices(input=1.0, output=4.0))
    result = await call_once(spec, judge_request("sim-ok", adapter=adapter))
    assert result.status == "ok", result.text
    assert result.text.startswith("Score: ")
    assert result.attempts == 1 and result.error_kind == ""
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    assert result.cost_usd == pytest.approx((result.usage.prompt_tokens * 1.0 + result.usage.completion_tokens * 4.0) / 1e6)
    assert result.model_version.startswith("sim-ok")
    assert result.finish_reason
    assert 0 < result.latency_s and result.started_at <= result.finished_at
    assert server.stats()["completed"] == 1


FLAKY = [
    ("server_error", "server"),
    ("overloaded", "server"),  # 503; Anthropic's 529 is "overloaded"
    ("rate_limit_bare", "rate_limit"),
    ("reset", "connection"),
    ("truncated", "connection"),
    ("malformed", "malformed"),
]


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("fault", [kind for kind, _ in FLAKY])
async def test_transient_fault_is_retried_then_succeeds(server, adapter, fault):
    configure(server, faults=(Fault(kind=fault, schedule=(0, 1)),))
    result = await call_once(spec_for(adapter, server.url, "sim-flaky"), judge_request("sim-flaky", adapter=adapter))
    assert result.status == "ok", result.text
    assert result.attempts == 3
    stats = server.stats()
    assert stats["requests"] == 3 and stats["completed"] == 1
    assert stats["by_outcome"][fault] == 2


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("fault,kind", FLAKY)
async def test_persistent_fault_gives_up_after_max_attempts_with_its_kind(server, adapter, fault, kind):
    configure(server, faults=(Fault(kind=fault, rate=1.0),))
    spec = spec_for(adapter, server.url, "sim-down", max_attempts=3)
    result = await call_once(spec, judge_request("sim-down", adapter=adapter))
    assert result.status == "error" and result.score is None
    assert result.error_kind == ("overloaded" if (fault, adapter) == ("overloaded", "anthropic") else kind)
    assert result.attempts == 3 and server.stats()["requests"] == 3
    assert "test-" in result.text  # names the judge


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_rate_limit_headers_set_the_wait(server, adapter):
    configure(server, faults=(Fault(kind="rate_limit", schedule=(0,), retry_after_s=0.3),))
    started = time.monotonic()
    result = await call_once(spec_for(adapter, server.url, "sim-429"), judge_request("sim-429", adapter=adapter))
    assert result.status == "ok" and result.attempts == 2
    assert time.monotonic() - started >= 0.3  # retry-after-ms (Gemini: RetryInfo in the body) was honoured
    assert server.stats()["by_status"]["429"] == 1


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_timeout_is_retried(server, adapter):
    configure(server, faults=(Fault(kind="hang", schedule=(0,), hang_s=2.0),))
    spec = spec_for(adapter, server.url, "sim-slow", timeout_s=0.3)
    result = await call_once(spec, judge_request("sim-slow", adapter=adapter))
    assert result.status == "ok" and result.attempts == 2


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_timeouts_exhaust_attempts(server, adapter):
    configure(server, faults=(Fault(kind="hang", rate=1.0, hang_s=2.0),))
    spec = spec_for(adapter, server.url, "sim-slow", timeout_s=0.2, max_attempts=2)
    result = await call_once(spec, judge_request("sim-slow", adapter=adapter))
    assert (result.status, result.error_kind, result.attempts) == ("error", "timeout", 2)


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_bad_request_fails_fast(server, adapter):
    configure(server, faults=(Fault(kind="bad_request", rate=1.0),))
    result = await call_once(spec_for(adapter, server.url, "sim-bad"), judge_request("sim-bad", adapter=adapter))
    assert (result.status, result.error_kind, result.attempts) == ("error", "bad_request", 1)
    assert f"test-{adapter}" in result.text and "400" in result.text
    assert server.stats()["requests"] == 1


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("status,kind", [(403, "forbidden"), (404, "not_found"), (413, "context_length"), (422, "bad_request")])
async def test_client_errors_fail_fast_with_their_kind(server, adapter, status, kind):
    configure(server, faults=(Fault(kind="http_error", status=status, rate=1.0),))
    result = await call_once(spec_for(adapter, server.url, "sim-4xx"), judge_request("sim-4xx", adapter=adapter))
    assert (result.status, result.error_kind, result.attempts) == ("error", kind, 1)
    assert f"test-{adapter}" in result.text and str(status) in result.text
    assert server.stats()["requests"] == 1


@pytest.mark.parametrize("adapter", ["openai", "azure", "anthropic", "gemini"])
async def test_wrong_key_fails_fast_as_auth(server, adapter):
    configure(server, valid_keys=("the-right-key",))
    result = await call_once(spec_for(adapter, server.url, "sim-auth"), judge_request("sim-auth", adapter=adapter))
    assert (result.status, result.error_kind, result.attempts) == ("error", "auth", 1)
    assert server.stats()["requests"] == 1


@pytest.mark.parametrize("adapter", ["openai", "azure", "anthropic", "gemini"])
async def test_unknown_model_fails_fast_as_not_found(server, adapter):
    configure(server)
    result = await call_once(spec_for(adapter, server.url, "missing-model"), judge_request("missing-model", adapter=adapter))
    assert (result.status, result.error_kind, result.attempts) == ("error", "not_found", 1)
    assert "test-" in result.text and "404" in result.text


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_content_filter_is_refused_with_the_raw_response(server, adapter):
    configure(server, faults=(Fault(kind="content_filter", rate=1.0),))
    result = await call_once(spec_for(adapter, server.url, "sim-filter"), judge_request("sim-filter", adapter=adapter))
    assert result.status == "refused" and result.score is None
    assert result.attempts == 1
    assert any(marker in result.text for marker in ("content_filter", "refusal", "SAFETY"))


@pytest.mark.parametrize("adapter", ADAPTERS)
async def test_unparseable_text_is_returned_verbatim_not_scored(server, adapter):
    configure(server, faults=(Fault(kind="unparseable", rate=1.0),))
    result = await call_once(spec_for(adapter, server.url, "sim-prose"), judge_request("sim-prose", adapter=adapter))
    assert result.status == "ok" and result.score is None
    assert result.text == "I would rather not put a number on this."


async def test_total_retry_time_bounds_the_attempts(server):
    configure(server, faults=(Fault(kind="server_error", rate=1.0),))
    spec = spec_for("openai", server.url, "sim-down", max_attempts=50, max_retry_time_s=0.5,
                    options={"backoff_base_s": 0.1, "backoff_cap_s": 0.1})
    started = time.monotonic()
    result = await call_once(spec, judge_request("sim-down"))
    assert result.status == "error" and result.error_kind == "server"
    assert 2 <= result.attempts < 10
    assert time.monotonic() - started < 1.0


async def test_circuit_breaker_stops_the_judge_after_a_burst_of_failures(server):
    configure(server)
    adapter = create_adapter(spec_for("openai", server.url, "missing-x", options={"breaker_threshold": 3}))
    try:
        results = [await adapter.complete(judge_request("missing-x")) for _ in range(5)]
    finally:
        await adapter.aclose()
    assert [r.error_kind for r in results] == ["not_found"] * 3 + ["circuit_open"] * 2
    assert "circuit breaker" in results[-1].text and "test-openai" in results[-1].text
    assert server.stats()["requests"] == 3  # the open breaker made no calls


async def test_reset_circuit_lets_the_next_call_through(server):
    configure(server, faults=(Fault(kind="bad_request", schedule=(0, 1)),))
    adapter = create_adapter(spec_for("openai", server.url, "sim-probe", options={"breaker_threshold": 2}))
    try:
        failed = [await adapter.complete(judge_request("sim-probe")) for _ in range(3)]
        assert [r.error_kind for r in failed] == ["bad_request", "bad_request", "circuit_open"] and adapter.circuit_open
        adapter.reset_circuit()  # the scheduler's probe
        probe = await adapter.complete(judge_request("sim-probe"))
    finally:
        await adapter.aclose()
    assert probe.status == "ok" and not adapter.circuit_open
    assert server.stats()["requests"] == 3


async def test_success_resets_the_breaker_count(server):
    configure(server, faults=(Fault(kind="bad_request", schedule=(0, 1, 3, 4)),))
    adapter = create_adapter(spec_for("openai", server.url, "sim-mixed", options={"breaker_threshold": 3}))
    try:
        statuses = [(await adapter.complete(judge_request("sim-mixed"))).status for _ in range(6)]
    finally:
        await adapter.aclose()
    assert statuses == ["error", "error", "ok", "error", "error", "ok"]


async def test_cancellation_propagates_and_frees_the_slot(server):
    configure(server, faults=(Fault(kind="hang", schedule=(0,), hang_s=3.0),))
    adapter = create_adapter(spec_for("openai", server.url, "sim-cancel", concurrency=1))
    try:
        started = time.monotonic()
        with anyio.move_on_after(0.3) as scope:
            await adapter.complete(judge_request("sim-cancel"))
        assert scope.cancelled_caught and time.monotonic() - started < 1.0
        # the only in-flight slot was released: the next call goes through
        with anyio.fail_after(3):
            result = await adapter.complete(judge_request("sim-cancel"))
        assert result.status == "ok" and result.attempts == 1
    finally:
        await adapter.aclose()


async def test_rate_limits_halve_the_in_flight_limit_and_successes_restore_it(server):
    configure(server, faults=(Fault(kind="rate_limit", schedule=(0,), retry_after_s=0.05),))
    adapter = create_adapter(spec_for("openai", server.url, "sim-aimd", concurrency=16))
    try:
        result = await adapter.complete(judge_request("sim-aimd"))
        assert result.status == "ok"
        assert adapter.concurrency_limit == 8
        # additive increase: +1/limit per success, so 8 -> 16 takes about 8 + 9 + ... + 15 = 92 successes
        for _ in range(60):
            await adapter.complete(judge_request("sim-aimd"))
        assert 12 <= adapter.concurrency_limit < 16
        for _ in range(40):
            await adapter.complete(judge_request("sim-aimd"))
        assert adapter.concurrency_limit == 16
    finally:
        await adapter.aclose()


async def test_faults_never_repeat_a_completed_call(server):
    faults = tuple(Fault(kind=kind, rate=0.08) for kind in ("server_error", "reset", "truncated", "malformed", "rate_limit_bare"))
    configure(server, seed=7, faults=faults)
    adapter = create_adapter(spec_for("openai", server.url, "sim-many", concurrency=32, max_attempts=10))
    results = []

    async def one(request):
        results.append(await adapter.complete(request))

    try:
        async with anyio.create_task_group() as tg:
            for _ in range(300):
                tg.start_soon(one, judge_request("sim-many"))
    finally:
        await adapter.aclose()
    assert all(r.status == "ok" for r in results)
    stats = server.stats()
    assert stats["completed"] == 300 and stats["repeated_completions"] == 0
    assert stats["requests"] > 300  # faults really happened
    assert sum(r.attempts for r in results) == stats["requests"]


async def test_requests_per_minute_limiter_keeps_within_5_percent_below_the_server_limit(server):
    """Both sides are token buckets holding one second's worth, so the rate is
    measured after the first two seconds (a bucket allows its burst on top)."""
    rpm = 1200.0
    configure(server, rpm=rpm)
    adapter = create_adapter(spec_for("openai", server.url, "sim-rpm", concurrency=64, rpm=rpm))
    finished: list[float] = []
    duration, settle = 10.0, 2.0

    async def worker():
        while True:
            result = await adapter.complete(judge_request("sim-rpm"))
            assert result.status == "ok", result.text
            finished.append(time.monotonic())

    try:
        started = time.monotonic()
        with anyio.move_on_after(duration):  # cancels the workers waiting on the limiter
            async with anyio.create_task_group() as tg:
                for _ in range(64):
                    tg.start_soon(worker)
    finally:
        await adapter.aclose()
    stats = server.stats()
    steady = [t for t in finished if started + settle <= t < started + duration]
    achieved = len(steady) / (duration - settle) * 60.0
    assert stats["completed"] >= len(finished)  # calls cancelled in flight may have been answered
    print(f"achieved {achieved:.0f}/min, 429s: {stats['by_status'].get('429', 0)} of {stats['requests']}")
    assert 0.95 * rpm <= achieved <= 1.02 * rpm, (achieved, stats)
    # no 429 storm: the client's bucket is the server's size, so only the arrival jitter of the
    # first calls (each opening its connection) lets a few through
    assert stats["by_status"].get("429", 0) <= 0.025 * stats["requests"], stats


def test_one_adapter_serves_runs_on_successive_event_loops(server, keys):
    configure(server)
    adapter = create_adapter(spec_for("openai", server.url, "sim-loops"))

    async def one():
        return await adapter.complete(judge_request("sim-loops"))

    first = anyio.run(one)
    second = anyio.run(one)  # the first loop is closed: a new session is made for the new loop
    anyio.run(adapter.aclose)
    assert first.status == second.status == "ok"


async def test_tokens_per_minute_limiter_bounds_estimated_tokens(server):
    from adapters.http import estimated_tokens

    configure(server)
    tpm = 6000.0  # 100 tokens/s, a 6-second bucket of 600
    adapter = create_adapter(spec_for("openai", server.url, "sim-tpm", concurrency=8, tpm=tpm))
    per_call = estimated_tokens(judge_request("sim-tpm"))
    done = 0

    async def worker():
        nonlocal done
        while True:
            await adapter.complete(judge_request("sim-tpm"))
            done += 1

    seconds = 3.0
    try:
        with anyio.move_on_after(seconds):
            async with anyio.create_task_group() as tg:
                for _ in range(8):
                    tg.start_soon(worker)
    finally:
        await adapter.aclose()
    allowed = (600 + tpm / 60 * seconds) / per_call  # bucket + refill
    assert allowed - 3 <= done <= allowed + 1, (done, allowed, per_call)


def test_the_transport_option_is_deprecated_and_ignored(caplog):
    with caplog.at_level("WARNING", logger="needlejudge.adapters"):
        adapter = create_adapter(spec_for("openai-compatible", "http://127.0.0.1:9", "m", options={"transport": "aiohttp"}))
    assert adapter.capabilities.guided_decoding  # created as if the option were absent
    assert "'transport' is deprecated" in caplog.text and "aiohttp" in caplog.text


async def test_a_key_that_cannot_go_in_a_header_fails_the_call_as_bad_request_without_showing_it(server, monkeypatch):
    configure(server)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret\r\nX-Injected: 1")
    result = await call_once(spec_for("openai", server.url, "sim-ok"), judge_request("sim-ok"))
    assert (result.status, result.error_kind) == ("error", "bad_request"), result.text
    assert "secret" not in result.text and "Injected" not in result.text
    assert "cannot send the request" in result.text
    assert server.stats()["requests"] == 0


def test_a_retired_option_is_an_error_saying_why():
    with pytest.raises(AdapterConfigError, match=r"item_metadata.*removed.*--store"):
        create_adapter(spec_for("openai-compatible", "http://127.0.0.1:9", "m", options={"item_metadata": True}))
