"""Gemini generateContent adapter (adapters/gemini.py): request body
(systemInstruction, roles, generationConfig), response reading (blocked
prompts, SAFETY, thoughts), and RetryInfo delays, over real HTTP."""

from __future__ import annotations

import msgspec
import pytest
from http_fixtures import body_of, judge_request, spec_for

from simulation.fake_config import FakeConfig, Fault
from adapters.gemini import GenerateContentDialect, create, retry_delay_from_body
from adapters.dialect import MalformedResponse
from engine.contracts import AdapterConfigError, CallRequest, Decoding, Message

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("keys")]


def test_body_maps_system_roles_and_generation_config():
    adapter = create(spec_for("gemini", "https://generativelanguage.googleapis.com", "gemini-2.5-flash"))
    request = CallRequest(namespace="judge", adapter="gemini", model="gemini-2.5-flash", revision="",
                          messages=(Message("system", "rules"), Message("user", "q"), Message("assistant", "a"), Message("user", "q2")),
                          decoding=Decoding(seed=9, top_p=0.8, max_tokens=5, stop=("X",), response_format="json"))
    url, body = body_of(adapter, request)
    assert url == "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent"
    assert body["systemInstruction"] == {"parts": [{"text": "rules"}]}
    assert [c["role"] for c in body["contents"]] == ["user", "model", "user"]
    assert body["generationConfig"] == {"temperature": 0.0, "maxOutputTokens": 5, "topP": 0.8, "seed": 9,
                                        "stopSequences": ["X"], "responseMimeType": "application/json"}
    assert adapter._headers["x-goog-api-key"] == "test-key" and adapter.capabilities.seed


def test_json_schema_and_model_prefixes():
    adapter = create(spec_for("gemini", "http://h", "models/gemini-x", options={"api_version": "v1"}))
    url, body = body_of(adapter, judge_request("m", json_schema='{"type":"object"}'))
    assert url == "http://h/v1/models/gemini-x:generateContent"
    assert body["generationConfig"]["responseJsonSchema"] == {"type": "object"}


def test_google_api_key_is_the_fallback(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    assert create(spec_for("gemini", "http://h", "m"))._headers["x-goog-api-key"] == "g-key"
    monkeypatch.delenv("GOOGLE_API_KEY")
    with pytest.raises(AdapterConfigError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        create(spec_for("gemini", "http://h", "m"))


DIALECT = GenerateContentDialect("http://h")


def test_reply_counts_thoughts_as_output_and_skips_thought_parts():
    body = msgspec.json.encode({
        "candidates": [{"content": {"role": "model", "parts": [{"text": "thinking...", "thought": True}, {"text": "Score: 12"}]},
                        "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 800, "candidatesTokenCount": 3, "thoughtsTokenCount": 40, "cachedContentTokenCount": 512},
        "modelVersion": "gemini-2.5-flash-001",
    })
    reply = DIALECT.read_reply(body)
    assert (reply.status, reply.text, reply.model_version, reply.finish_reason) == ("ok", "Score: 12", "gemini-2.5-flash-001", "STOP")
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.cached_tokens) == (800, 43, 512)


def test_blocked_prompt_and_safety_finish_are_refusals():
    blocked = b'{"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}, "usageMetadata": {"promptTokenCount": 9}}'
    reply = DIALECT.read_reply(blocked)
    assert (reply.status, reply.finish_reason, reply.text) == ("refused", "PROHIBITED_CONTENT", blocked.decode())
    safety = b'{"candidates": [{"finishReason": "SAFETY", "safetyRatings": []}]}'
    assert DIALECT.read_reply(safety).status == "refused"
    for malformed in (b"{}", b'{"candidates": [{"finishReason": "STOP"}]}'):
        with pytest.raises(MalformedResponse):
            DIALECT.read_reply(malformed)


def test_retry_info_delay_and_invalid_key_reason():
    body = b'{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "17s"}]}}'
    assert retry_delay_from_body(body) == 17.0
    assert retry_delay_from_body(b'{"error": {"code": 429}}') is None
    invalid = b'{"error": {"code": 400, "status": "INVALID_ARGUMENT", "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}]}}'
    assert DIALECT.error_kind(400, invalid) == "auth"


async def test_prompt_block_over_the_wire(server):
    server.set_config(FakeConfig(faults=(Fault(kind="prompt_filter", rate=1.0),)))
    adapter = create(spec_for("gemini", server.url, "sim-gem"))
    try:
        result = await adapter.complete(judge_request("sim-gem", adapter="gemini"))
    finally:
        await adapter.aclose()
    assert (result.status, result.finish_reason) == ("refused", "SAFETY") and "blockReason" in result.text


async def test_rate_limited_gemini_waits_the_body_retry_delay(server):
    import time

    server.set_config(FakeConfig(faults=(Fault(kind="rate_limit", schedule=(0,), retry_after_s=0.4),)))
    adapter = create(spec_for("gemini", server.url, "sim-gem"))
    started = time.monotonic()
    try:
        result = await adapter.complete(judge_request("sim-gem", adapter="gemini"))
    finally:
        await adapter.aclose()
    assert result.status == "ok" and result.attempts == 2
    assert time.monotonic() - started >= 0.4
