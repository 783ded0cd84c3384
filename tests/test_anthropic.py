"""Anthropic Messages adapter (adapters/anthropic.py): request body (system
field, cache_control on the stable prefix), response reading, and the
provider-specific paths over real HTTP to the fake server."""

from __future__ import annotations

import time

import msgspec
import pytest
from http_fixtures import body_of, judge_request, spec_for

from adapters.anthropic import MessagesDialect, create
from simulation.fake_config import FakeConfig
from adapters.dialect import MalformedResponse
from engine.contracts import CallRequest, Decoding, Message

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("keys")]


def test_system_goes_to_the_system_field_with_cache_control():
    adapter = create(spec_for("anthropic", "https://api.anthropic.com", "claude-x"))
    request = judge_request("claude-x", temperature=0.2, stop=("END",))
    url, body = body_of(adapter, request)
    assert url == "https://api.anthropic.com/v1/messages"
    assert body["system"] == [{"type": "text", "text": request.messages[0].content, "cache_control": {"type": "ephemeral"}}]
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert "cache_control" not in body["messages"][0]["content"][0]
    assert (body["model"], body["max_tokens"], body["temperature"], body["stop_sequences"]) == ("claude-x", 16, 0.2, ["END"])
    assert "top_p" not in body and "seed" not in body  # recent models reject temperature with top_p; no seed in the API
    assert adapter._headers["anthropic-version"] == "2023-06-01" and adapter._headers["x-api-key"] == "test-key"
    assert not adapter.capabilities.seed and adapter.capabilities.prompt_caching


def test_without_system_the_turn_before_the_last_closes_the_cached_prefix():
    adapter = create(spec_for("anthropic", "http://h", "claude-x"))
    request = CallRequest(namespace="judge", adapter="anthropic", model="claude-x", revision="",
                          messages=(Message("user", "instructions"), Message("assistant", "ok"), Message("user", "the pair")),
                          decoding=Decoding())
    _, body = body_of(adapter, request)
    marks = [("cache_control" in m["content"][0]) for m in body["messages"]]
    assert marks == [False, True, False] and "system" not in body
    uncached = create(spec_for("anthropic", "http://h", "claude-x", options={"prompt_caching": False}))
    _, body = body_of(uncached, judge_request("claude-x"))
    assert "cache_control" not in body["system"][0]


DIALECT = MessagesDialect("http://h/v1/messages", "m", prompt_caching=True)


def test_reply_counts_cache_reads_and_writes_as_prompt_tokens():
    body = msgspec.json.encode({
        "model": "claude-sonnet-4-5-20250929", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": "Score: "}, {"type": "text", "text": "61"}],
        "usage": {"input_tokens": 20, "output_tokens": 4, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 900},
    })
    reply = DIALECT.read_reply(body)
    assert (reply.status, reply.text, reply.model_version, reply.finish_reason) == ("ok", "Score: 61", "claude-sonnet-4-5-20250929", "end_turn")
    assert (reply.usage.prompt_tokens, reply.usage.cached_tokens, reply.usage.completion_tokens) == (1020, 900, 4)


def test_refusal_stop_reason_is_refused_with_raw_body():
    body = b'{"model": "m", "content": [], "stop_reason": "refusal", "usage": {"input_tokens": 5, "output_tokens": 0}}'
    reply = DIALECT.read_reply(body)
    assert reply.status == "refused" and reply.text == body.decode()
    with pytest.raises(MalformedResponse):
        DIALECT.read_reply(b'{"type": "message"}')


def test_overloaded_error_type_is_its_own_kind():
    assert DIALECT.error_kind(529, b'{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}') == "overloaded"
    assert DIALECT.error_kind(400, b'{"type": "error", "error": {"type": "invalid_request_error", "message": "x"}}') is None


async def test_cache_reads_on_repeated_prefix_over_the_wire(server):
    server.set_config(FakeConfig())
    adapter = create(spec_for("anthropic", server.url, "sim-claude"))
    try:
        first = await adapter.complete(judge_request("sim-claude", adapter="anthropic"))
        second = await adapter.complete(judge_request("sim-claude", adapter="anthropic"))
    finally:
        await adapter.aclose()
    assert first.status == second.status == "ok"
    assert first.usage.cached_tokens == 0 and second.usage.cached_tokens > 0
    assert first.usage.prompt_tokens == second.usage.prompt_tokens


async def test_missing_version_header_is_a_bad_request(server):
    server.set_config(FakeConfig())
    adapter = create(spec_for("anthropic", server.url, "sim-claude", options={"anthropic_version": ""}))
    try:
        result = await adapter.complete(judge_request("sim-claude", adapter="anthropic"))
    finally:
        await adapter.aclose()
    assert (result.status, result.error_kind) == ("error", "bad_request") and "anthropic-version" in result.text


async def test_server_rate_limit_headers_slow_the_judge_before_a_429(server):
    server.set_config(FakeConfig(rpm=600, rpm_burst=2))
    adapter = create(spec_for("anthropic", server.url, "sim-claude", concurrency=1))
    started = time.monotonic()
    try:
        results = [await adapter.complete(judge_request("sim-claude", adapter="anthropic")) for _ in range(6)]
    finally:
        await adapter.aclose()
    assert all(r.status == "ok" for r in results)
    # after the burst of 2 the headers say "0 remaining": the adapter pauses instead of drawing 429s;
    # the 4 calls after the burst wait for the bucket (10 a second): at least ~0.3 s in all
    assert server.stats()["by_status"].get("429", 0) == 0
    assert time.monotonic() - started >= 0.3
