"""simulation.rate_limits: the fake server's per-model token buckets, the
429 over the limit and the budget headers (HTTP behaviour per provider is
in tests/test_fake_server.py)."""

from __future__ import annotations

import pytest

from simulation.fake_config import FakeConfig
from simulation.rate_limits import RateLimits, TokenBucket
from simulation.wire_anthropic import MessagesWire
from simulation.wire_openai import ChatCompletionsWire


def test_a_bucket_gives_its_capacity_then_says_how_long_to_wait() -> None:
    bucket = TokenBucket(rate=0.01, capacity=3.0)  # one token per 100 s: no refill during the test
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    assert bucket.tokens == pytest.approx(0.0, abs=1e-3)
    assert bucket.wait_s() == pytest.approx(100.0, rel=1e-3)  # one token at 0.01/s
    assert bucket.full_s() == pytest.approx(300.0, rel=1e-3)  # three tokens


def test_a_bucket_refills_at_its_rate() -> None:
    bucket = TokenBucket(rate=1000.0, capacity=1.0)
    assert bucket.take()
    bucket.stamp -= 0.002  # 2 ms later: two tokens' worth, capped at the capacity
    assert bucket.take() and bucket.tokens == pytest.approx(0.0, abs=0.1)


def test_each_model_has_its_own_bucket_and_the_refusal_is_a_429_with_budget_headers() -> None:
    limits, wire, config = RateLimits(), ChatCompletionsWire(), FakeConfig(rpm=60, rpm_burst=2)
    assert [limits.refusal(wire, "a", config) for _ in range(2)] == [None, None]
    refused = limits.refusal(wire, "a", config)
    assert refused is not None and refused.status == 429
    assert refused.headers["x-ratelimit-remaining-requests"] == "0" and int(refused.headers["retry-after"]) >= 1
    assert limits.refusal(wire, "b", config) is None  # another model, another bucket
    assert limits.headers(wire, "b", config)["x-ratelimit-remaining-requests"] == "1"
    assert limits.headers(MessagesWire(), "b", config)["anthropic-ratelimit-requests-remaining"] == "1"


def test_without_a_limit_or_a_bucket_there_are_no_budget_headers() -> None:
    limits, wire = RateLimits(), ChatCompletionsWire()
    assert limits.headers(wire, "a", FakeConfig()) == {}
    assert limits.headers(wire, "never-called", FakeConfig(rpm=60)) == {}
