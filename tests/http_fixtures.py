"""Helpers shared by the HTTP adapter tests: judge specs pointed at a
server, distinct judge requests, test keys. (Their fixtures, `server`,
`keys` and `anyio_backend`, live in conftest.py.)"""

from __future__ import annotations

import itertools

import msgspec

from engine.contracts import CallRequest, Decoding, JudgeSpec, Message, Pair
from engine.prompts.documents import document_block, pair_blocks

ADAPTERS = ("openai", "azure", "openai-compatible", "anthropic", "gemini")
KEY_ENVS = {"openai": "OPENAI_API_KEY", "azure": "AZURE_OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY", "gemini": "GEMINI_API_KEY"}
_counter = itertools.count()


def body_of(adapter, request) -> tuple[str, dict]:
    """The URL and decoded JSON body an adapter would send for `request`."""
    url, raw = adapter._dialect.url_and_body(request)
    return url, msgspec.json.decode(raw)


def spec_for(adapter: str, url: str, model: str, **overrides) -> JudgeSpec:
    base = {"openai": f"{url}/v1", "openai-compatible": f"{url}/v1"}.get(adapter, url)
    fields = dict(name=f"test-{adapter}", adapter=adapter, model=model, base_url=base, timeout_s=5.0,
                  max_attempts=4, max_retry_time_s=30.0)
    options = {"backoff_base_s": 0.01, "backoff_cap_s": 0.2}
    if adapter == "openai-compatible":
        fields["api_key_env"] = "OPENAI_API_KEY"
    options.update(overrides.pop("options", {}))
    fields.update(overrides)
    return JudgeSpec(**fields, options=options)


def set_keys(monkeypatch, value: str = "test-key") -> None:
    for name in KEY_ENVS.values():
        monkeypatch.setenv(name, value)


def judge_request(model: str, *, adapter: str = "openai", seed: int | None = 1, **decoding) -> CallRequest:
    """A distinct pair call (a fresh document id each time)."""
    n = next(_counter)
    pair = Pair(doc_id=f"doc-{n}", needle="neg", hay="orig", i=1, j=2,
                original=f"Alpha {n} rose. The river was wide. Boats sailed. Night fell.",
                perturbed=f"Alpha {n} rose. The river was not wide. Boats sailed. Night fell.",
                needle_before="The river was wide.", needle_after="The river was not wide.", seed=0)
    messages = (Message("system", "You rate semantic similarity from 0 to 100. Answer 'Score: N'."),
                Message("user", "Compare these.\n\n" + pair_blocks(pair.original, pair.perturbed)))
    return CallRequest(namespace="judge", adapter=adapter, model=model, revision="", messages=messages,
                       decoding=Decoding(seed=seed, **decoding))


def triples_request(model: str, text: str, *, adapter: str = "openai") -> CallRequest:
    messages = (Message("system", "Extract (subject; relation; object) triples as JSON."),
                Message("user", "Document:\n\n" + document_block("document", text)))
    return CallRequest(namespace="triples", adapter=adapter, model=model, revision="", messages=messages,
                       decoding=Decoding(max_tokens=512, response_format="json"))
