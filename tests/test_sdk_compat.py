"""Wire compatibility of the fake provider server, proven by the official
SDKs: openai (AsyncOpenAI, AzureOpenAI), anthropic and google-genai parse its
answers and map its errors to their own exception classes."""

from __future__ import annotations

import anthropic
import openai
import pytest
from google import genai
from google.genai import errors as genai_errors
from google.genai import types
from http_fixtures import judge_request

from simulation.fake_config import FakeConfig, Fault

pytestmark = pytest.mark.anyio


REQUEST = judge_request("sim-sdk")
SYSTEM, USER = REQUEST.messages[0].content, REQUEST.messages[1].content


async def test_openai_sdk_parses_answers_and_errors(server):
    server.set_config(FakeConfig(faults=(Fault(kind="rate_limit", models="sim-429", rate=1.0, retry_after_s=2.0),)))
    client = openai.AsyncOpenAI(base_url=f"{server.url}/v1", api_key="sk-sdk", max_retries=0)
    try:
        out = await client.chat.completions.create(
            model="sim-sdk", messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}],
            max_completion_tokens=8, seed=1)
        assert out.choices[0].message.content.startswith("Score: ") and out.choices[0].finish_reason == "stop"
        assert out.usage.prompt_tokens > 0 and out.usage.prompt_tokens_details.cached_tokens == 0
        assert out.system_fingerprint == "fp_fake"
        with pytest.raises(openai.NotFoundError) as not_found:
            await client.chat.completions.create(model="missing-1", messages=[{"role": "user", "content": "x"}])
        assert not_found.value.code == "model_not_found"
        with pytest.raises(openai.RateLimitError) as limited:
            await client.chat.completions.create(model="sim-429", messages=[{"role": "user", "content": "x"}])
        assert limited.value.response.headers["retry-after-ms"] == "2000"
        with pytest.raises(openai.BadRequestError):
            await client.chat.completions.create(model="sim-sdk", messages=[{"role": "robot", "content": "x"}])
    finally:
        await client.close()


def test_azure_sdk_parses_answers_and_content_filter(server):
    server.set_config(FakeConfig(faults=(Fault(kind="content_filter", models="filtered-dep", rate=1.0),), valid_keys=("az-sdk",)))
    client = openai.AzureOpenAI(azure_endpoint=server.url, api_key="az-sdk", api_version="2024-10-21", max_retries=0)
    try:
        out = client.chat.completions.create(model="sim-dep", messages=[{"role": "user", "content": USER}], max_tokens=8)
        assert out.choices[0].message.content.startswith("Score: ") and out.model == "sim-dep"
        filtered = client.chat.completions.create(model="filtered-dep", messages=[{"role": "user", "content": USER}])
        assert filtered.choices[0].finish_reason == "content_filter" and filtered.choices[0].message.content is None
        with pytest.raises(openai.AuthenticationError):
            openai.AzureOpenAI(azure_endpoint=server.url, api_key="wrong", api_version="2024-10-21", max_retries=0
                               ).chat.completions.create(model="sim-dep", messages=[{"role": "user", "content": "x"}])
    finally:
        client.close()
    assert server.stats()["by_provider"]["azure"] == 3


async def test_anthropic_sdk_parses_answers_refusals_and_errors(server):
    server.set_config(FakeConfig(faults=(Fault(kind="content_filter", models="sim-refuse", rate=1.0),
                                         Fault(kind="overloaded", models="sim-busy", rate=1.0))))
    client = anthropic.AsyncAnthropic(base_url=server.url, api_key="ant-sdk", max_retries=0)
    try:
        out = await client.messages.create(
            model="sim-sdk", max_tokens=8, system=[{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": USER}])
        assert out.content[0].text.startswith("Score: ") and out.stop_reason == "end_turn"
        again = await client.messages.create(
            model="sim-sdk", max_tokens=8, system=[{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}],
            messages=[{"role": "user", "content": USER}])
        assert out.usage.cache_creation_input_tokens > 0 and again.usage.cache_read_input_tokens > 0
        refused = await client.messages.create(model="sim-refuse", max_tokens=8, messages=[{"role": "user", "content": USER}])
        assert refused.stop_reason == "refusal"
        with pytest.raises(anthropic.InternalServerError) as busy:
            await client.messages.create(model="sim-busy", max_tokens=8, messages=[{"role": "user", "content": USER}])
        assert busy.value.status_code == 529
        with pytest.raises(anthropic.NotFoundError):
            await client.messages.create(model="missing-c", max_tokens=8, messages=[{"role": "user", "content": USER}])
    finally:
        await client.close()


async def test_google_genai_sdk_parses_answers_blocks_and_errors(server):
    server.set_config(FakeConfig(faults=(Fault(kind="prompt_filter", models="sim-blocked", rate=1.0),)))
    client = genai.Client(api_key="gem-sdk", http_options=types.HttpOptions(base_url=server.url, api_version="v1beta"))
    try:
        out = await client.aio.models.generate_content(
            model="sim-sdk", contents=USER,
            config=types.GenerateContentConfig(system_instruction=SYSTEM, max_output_tokens=8, seed=1, temperature=0.0))
        assert out.text.startswith("Score: ") and out.model_version == "sim-sdk"
        assert out.usage_metadata.prompt_token_count > 0 and out.candidates[0].finish_reason == types.FinishReason.STOP
        blocked = await client.aio.models.generate_content(model="sim-blocked", contents=USER)
        assert blocked.prompt_feedback.block_reason == types.BlockedReason.SAFETY and not blocked.candidates
        with pytest.raises(genai_errors.ClientError) as missing:
            await client.aio.models.generate_content(model="missing-g", contents=USER)
        assert missing.value.code == 404 and missing.value.status == "NOT_FOUND"
    finally:
        await client.aio.aclose()
