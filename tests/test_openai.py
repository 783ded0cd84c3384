"""OpenAI, Azure OpenAI and OpenAI-compatible adapters (adapters/openai.py):
request bodies, response reading, and the provider-specific paths over real
HTTP to the fake server."""

from __future__ import annotations

import msgspec
import pytest
from http_fixtures import body_of, judge_request, spec_for, triples_request

from simulation import judge as sim
from simulation.fake_config import FakeConfig, Fault
from adapters.dialect import MalformedResponse
from adapters.openai import ChatCompletionsDialect, create, create_azure, create_compatible
from engine.contracts import AdapterConfigError

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("keys")]


# ---------------------------------------------------------------------------
# Request bodies


def test_openai_body_carries_every_decoding_parameter():
    adapter = create(spec_for("openai", "http://h", "gpt-x"))
    request = judge_request("gpt-x", seed=42, temperature=0.5, top_p=0.9, max_tokens=7, stop=("\n\n",))
    url, body = body_of(adapter, request)
    assert url == "http://h/v1/chat/completions"
    assert body["model"] == "gpt-x"
    assert body["messages"][0] == {"role": "system", "content": request.messages[0].content}
    assert (body["temperature"], body["top_p"], body["max_completion_tokens"], body["seed"], body["stop"]) == (0.5, 0.9, 7, 42, ["\n\n"])
    assert "response_format" not in body and "max_tokens" not in body


def test_openai_body_omits_defaults_and_maps_json_formats():
    adapter = create(spec_for("openai", "http://h", "gpt-x"))
    _, body = body_of(adapter, judge_request("gpt-x", seed=None))
    assert "top_p" not in body and "seed" not in body and "stop" not in body
    _, body = body_of(adapter, judge_request("gpt-x", response_format="json"))
    assert body["response_format"] == {"type": "json_object"}
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    _, body = body_of(adapter, judge_request("gpt-x", json_schema=msgspec.json.encode(schema).decode()))
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "response", "schema": schema, "strict": True}}


def test_azure_url_names_deployment_and_api_version_and_sends_no_model():
    adapter = create_azure(spec_for("azure", "https://res.openai.azure.com", "gpt-4o",
                                    options={"deployment": "judge-dep", "api_version": "2025-01-01-preview"}))
    url, body = body_of(adapter, judge_request("gpt-4o"))
    assert url == "https://res.openai.azure.com/openai/deployments/judge-dep/chat/completions?api-version=2025-01-01-preview"
    assert "model" not in body and body["max_tokens"] == 16
    assert adapter._headers["api-key"] == "test-key" and "Authorization" not in adapter._headers


def test_azure_needs_an_endpoint(monkeypatch):
    monkeypatch.delenv("AZURE_OPENAI_ENDPOINT", raising=False)
    with pytest.raises(AdapterConfigError, match="AZURE_OPENAI_ENDPOINT"):
        create_azure(spec_for("azure", "", "gpt-4o", base_url=None))


def test_compatible_sends_vllm_structured_outputs():
    adapter = create_compatible(spec_for("openai-compatible", "http://h", "google/gemma-3-4b-it"))
    _, body = body_of(adapter, judge_request("m", guided_regex=r"[0-9]{1,3}"))
    assert body["structured_outputs"] == {"regex": "[0-9]{1,3}"} and "response_format" not in body
    _, body = body_of(adapter, judge_request("m", json_schema='{"type":"object"}'))
    assert body["structured_outputs"] == {"json": {"type": "object"}}
    assert body["max_tokens"] == 16 and adapter.capabilities.guided_decoding


def test_compatible_legacy_guided_fields_and_option_validation():
    adapter = create_compatible(spec_for("openai-compatible", "http://h", "m", options={"structured_outputs": "legacy"}))
    _, body = body_of(adapter, judge_request("m", guided_regex="[0-9]+"))
    assert body["guided_regex"] == "[0-9]+" and "structured_outputs" not in body
    with pytest.raises(AdapterConfigError, match="structured_outputs"):
        create_compatible(spec_for("openai-compatible", "http://h", "m", options={"structured_outputs": "xgrammar"}))
    with pytest.raises(AdapterConfigError, match="base_url"):
        create_compatible(spec_for("openai-compatible", "", "m", base_url=None))


# ---------------------------------------------------------------------------
# Response reading


DIALECT = ChatCompletionsDialect("openai", "http://h", "m", max_tokens_field="max_tokens", structured_outputs=None)


def test_reply_reads_usage_cached_tokens_and_fingerprint():
    body = msgspec.json.encode({
        "model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_abc",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Score: 40"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1500, "completion_tokens": 3, "prompt_tokens_details": {"cached_tokens": 1024}},
    })
    reply = DIALECT.read_reply(body)
    assert (reply.status, reply.text, reply.finish_reason) == ("ok", "Score: 40", "stop")
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.usage.cached_tokens) == (1500, 3, 1024)
    assert reply.model_version == "gpt-4o-2024-08-06+fp_abc"


def test_refusals_keep_the_raw_response():
    filtered = msgspec.json.encode({"model": "m", "choices": [{"message": {"content": None}, "finish_reason": "content_filter"}]})
    assert DIALECT.read_reply(filtered).status == "refused"
    assert DIALECT.read_reply(filtered).text == filtered.decode()
    refusal = msgspec.json.encode({"model": "m", "choices": [{"message": {"content": None, "refusal": "I can't help."}, "finish_reason": "stop"}]})
    assert DIALECT.read_reply(refusal).status == "refused"


def test_malformed_replies_raise():
    for body in (b"{}", b'{"choices": []}', b'{"choices": [{"message": {"content": null}, "finish_reason": "stop"}]}', b"<html>"):
        with pytest.raises(MalformedResponse):
            DIALECT.read_reply(body)


def test_error_codes_refine_the_status_classification():
    assert DIALECT.error_kind(400, b'{"error": {"code": "context_length_exceeded", "message": "too long"}}') == "context_length"
    assert DIALECT.error_kind(400, b'{"error": {"code": "content_filter", "message": "filtered"}}') == "refused"
    assert DIALECT.error_kind(400, b'{"error": {"code": null, "message": "x"}}') is None
    assert DIALECT.error_kind(500, b"oops") is None


# ---------------------------------------------------------------------------
# Over the wire


async def test_azure_deployment_reaches_the_server(server):
    server.set_config(FakeConfig())
    adapter = create_azure(spec_for("azure", server.url, "gpt-4o", options={"deployment": "sim-dep"}))
    try:
        result = await adapter.complete(judge_request("gpt-4o", adapter="azure"))
    finally:
        await adapter.aclose()
    assert result.status == "ok" and result.model_version.startswith("sim-dep")
    assert server.stats()["by_model"] == {"sim-dep": 1}


async def test_azure_prompt_filter_400_is_a_refusal_not_an_error(server):
    server.set_config(FakeConfig(faults=(Fault(kind="prompt_filter", rate=1.0),)))
    adapter = create_azure(spec_for("azure", server.url, "sim-az"))
    try:
        result = await adapter.complete(judge_request("sim-az", adapter="azure"))
    finally:
        await adapter.aclose()
    assert result.status == "refused" and "ResponsibleAIPolicyViolation" in result.text
    assert result.attempts == 1


async def test_compatible_server_without_key_and_guided_regex(server, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    server.set_config(FakeConfig())
    adapter = create_compatible(spec_for("openai-compatible", server.url, "local-gemma", api_key_env=None))
    assert "Authorization" not in adapter._headers
    try:
        result = await adapter.complete(judge_request("local-gemma", adapter="openai-compatible", guided_regex=r"[0-9]{1,3}"))
    finally:
        await adapter.aclose()
    assert result.status == "ok" and result.text.isdigit() and 0 <= int(result.text) <= 100


async def test_openai_refuses_guided_regex_without_calling(server):
    server.set_config(FakeConfig())
    adapter = create(spec_for("openai", server.url, "sim-x"))
    try:
        result = await adapter.complete(judge_request("sim-x", guided_regex="[0-9]+"))
    finally:
        await adapter.aclose()
    assert (result.status, result.error_kind) == ("error", "unsupported")
    assert server.stats()["requests"] == 0


async def test_prefix_cache_usage_and_json_triples(server):
    server.set_config(FakeConfig())
    adapter = create(spec_for("openai", server.url, "sim-x"))
    text = "Ada Lovelace wrote notes on the engine. She was born in London."
    try:
        first = await adapter.complete(judge_request("sim-x"))
        second = await adapter.complete(judge_request("sim-x"))
        extracted = await adapter.complete(triples_request("sim-x", text))
    finally:
        await adapter.aclose()
    assert first.usage.cached_tokens == 0 and second.usage.cached_tokens > 0  # same system prompt
    assert msgspec.json.decode(extracted.text) == {"triples": sim.triples(text)}
