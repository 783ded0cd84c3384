"""The fake server's request rate limit: a token bucket per model (`rpm`
requests a minute, `rpm_burst` at once), the 429 a request over it gets
(with `retry-after` and each provider's rate-limit headers), and those
headers on every answer while a limit is set."""

from __future__ import annotations

import threading
import time

from aiohttp import web

from simulation.fake_config import FakeConfig
from simulation.wire import Budget, WireDialect


class TokenBucket:
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


class RateLimits:
    """The buckets of one server run (a reset starts new ones). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buckets: dict[str, TokenBucket] = {}

    def refusal(self, wire: WireDialect, model: str, config: FakeConfig) -> web.Response | None:
        """None if `model` has a token left (it is taken), else the 429 to answer."""
        assert config.rpm
        with self._lock:
            bucket = self._buckets.get(model)
            if bucket is None:
                capacity = config.rpm_burst or max(1.0, config.rpm / 60.0)
                bucket = self._buckets[model] = TokenBucket(config.rpm / 60.0, capacity)
            if bucket.take():
                return None
            wait = bucket.wait_s()
            headers = self._headers(wire, config, bucket)
        return wire.rate_limit_response(wait, headers, bare=False)

    def headers(self, wire: WireDialect, model: str, config: FakeConfig) -> dict[str, str]:
        """The rate-limit headers of an answer to `model` ({} without a limit)."""
        if not config.rpm:
            return {}
        with self._lock:
            return self._headers(wire, config, self._buckets.get(model))

    @staticmethod
    def _headers(wire: WireDialect, config: FakeConfig, bucket: TokenBucket | None) -> dict[str, str]:
        if not config.rpm or bucket is None:
            return {}
        return wire.budget_headers(Budget(limit=int(config.rpm), remaining=int(bucket.tokens), full_in_s=bucket.full_s()))
