"""No API key ever reaches logs, results, reprs, exceptions or the cache.

Distinctive fake keys are put in the environment; every adapter then runs
successful calls and every failure path against the fake server, with all
loggers captured at DEBUG, and the results are committed to a real LMDB
cache. The key text must appear nowhere we can look.
"""

from __future__ import annotations

import logging
from pathlib import Path

import msgspec
import pytest
from http_fixtures import ADAPTERS, KEY_ENVS, judge_request, spec_for

from simulation.fake_config import FakeConfig, Fault
from engine.registry import create_adapter
from engine.cache.call_cache import GroupCommitWriter, encode_result
from engine.contracts import AdapterConfigError, request_key
from engine.cache.store import Store

pytestmark = pytest.mark.anyio
SECRET = "sk-NEEDLE-SECRET-4c1f9e7a"


@pytest.fixture(autouse=True)
def secret_keys(monkeypatch):
    for name in KEY_ENVS.values():
        monkeypatch.setenv(name, SECRET)


SCENARIOS = [
    ("ok", FakeConfig()),
    ("retried", FakeConfig(faults=(Fault(kind="server_error", schedule=(0,)), Fault(kind="reset", schedule=(1,))))),
    ("timeout", FakeConfig(faults=(Fault(kind="hang", rate=1.0, hang_s=1.0),))),
    ("auth", FakeConfig(valid_keys=("some-other-key",))),
    ("refused", FakeConfig(faults=(Fault(kind="prompt_filter", rate=1.0),))),
    ("malformed", FakeConfig(faults=(Fault(kind="malformed", rate=1.0),))),
]


async def test_keys_never_leak(server, caplog, tmp_path: Path):
    caplog.set_level(logging.DEBUG)
    seen = []
    for adapter_name in ADAPTERS:
        for _, config in SCENARIOS:
            server.set_config(config)
            adapter = create_adapter(spec_for(adapter_name, server.url, "sim-secret", timeout_s=0.3, max_attempts=3))
            seen += [repr(adapter), str(adapter)]
            # positive control: the key really is in the request headers
            assert any(SECRET in value for value in adapter._headers.values())
            request = judge_request("sim-secret", adapter=adapter_name)
            try:
                result = await adapter.complete(request)
            finally:
                await adapter.aclose()
            seen.append(msgspec.json.encode(result).decode())
            seen.append(repr(result))
            seen.append(msgspec.json.encode(server.stats()).decode())
            if result.status in ("ok", "refused"):
                with Store(tmp_path / "cache") as store:
                    async with GroupCommitWriter(store) as writer:
                        await writer.commit([("results", request_key(request), encode_result(result))])
    statuses = {s.split('"status":"')[1].split('"')[0] for s in seen if s.startswith('{"status"')}
    assert statuses >= {"ok", "refused", "error"}  # every path really ran
    for text in seen:
        assert SECRET not in text
    assert caplog.records and SECRET not in caplog.text
    files = list((tmp_path / "cache").rglob("*"))
    assert files and all(SECRET.encode() not in f.read_bytes() for f in files if f.is_file())


def test_config_errors_name_the_variable_not_the_value(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    with pytest.raises(AdapterConfigError) as missing:
        create_adapter(spec_for("anthropic", "http://127.0.0.1:9", "m"))
    assert "ANTHROPIC_API_KEY" in str(missing.value)
    with pytest.raises(AdapterConfigError) as bad_option:
        create_adapter(spec_for("openai", "http://127.0.0.1:9", "m", options={"nope": 1}))
    with pytest.raises(AdapterConfigError) as custom:
        create_adapter(spec_for("openai", "http://127.0.0.1:9", "m", api_key_env="MY_JUDGE_KEY"))
    assert "MY_JUDGE_KEY" in str(custom.value)
    for error in (missing.value, bad_option.value, custom.value):
        assert SECRET not in str(error) and SECRET not in repr(error)
