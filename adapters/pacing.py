"""How fast a judge may go: the in-flight window the adapter narrows and
widens (AIMD), the requests- and tokens-per-minute limiters, and what the
providers' rate-limit headers say about the wait (`retry-after`,
`x-ratelimit-*`, `anthropic-ratelimit-*`). Pure parsing and small state; the
HTTP adapter (adapters/http.py) applies them."""

from __future__ import annotations

import email.utils
import math
import re
import time
from collections import deque
from collections.abc import Mapping

import anyio
from aiolimiter import AsyncLimiter

from engine.contracts import AdapterConfigError

MAX_JUDGE_PAUSE_S = 60.0

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|h|m|s)")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: str) -> float | None:
    """OpenAI's reset durations ("20ms", "1.5s", "6m0s") or plain seconds."""
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    parts = _DURATION_PART.findall(value)
    if not parts or "".join(n + u for n, u in parts) != value:
        return None
    return sum(float(n) * _DURATION_UNITS[u] for n, u in parts)


def _seconds_until(value: str, now: float) -> float | None:
    """An RFC 3339 / HTTP date as seconds from `now` (anthropic-ratelimit-*-reset, retry-after dates)."""
    from datetime import datetime

    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value).timestamp()
        except (TypeError, ValueError):
            return None
    return max(when - now, 0.0)


def retry_after_s(headers: Mapping[str, str], now: float) -> float | None:
    """`retry-after-ms` (milliseconds) or `retry-after` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        return _seconds_until(value, now)


def _int_header(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name)
    if value is None:
        return None
    try:
        return int(float(value))
    except ValueError:
        return None


def budget_pause_s(headers: Mapping[str, str], tokens_needed: int, now: float) -> float:
    """How long to hold new sends because the provider says the budget is spent.

    Reads OpenAI/Azure `x-ratelimit-remaining-{requests,tokens}` with
    `x-ratelimit-reset-*` (durations) and Anthropic
    `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-remaining`
    with `-reset` (RFC 3339 times). Returns 0 when there is budget left.
    """
    pause = 0.0
    for kind, need in (("requests", 1), ("tokens", tokens_needed)):
        remaining = _int_header(headers, f"x-ratelimit-remaining-{kind}")
        if remaining is not None and 0 <= remaining < need:
            reset = parse_duration(headers.get(f"x-ratelimit-reset-{kind}", "") or "")
            limit = _int_header(headers, f"x-ratelimit-limit-{kind}")
            if reset is not None:
                # the budget refills continuously: wait for what we need, not for the full window
                if limit and limit > 0 and kind == "requests":
                    reset = min(reset, 60.0 / limit)
                pause = max(pause, reset)
    for kind, need in (("requests", 1), ("tokens", tokens_needed), ("input-tokens", tokens_needed)):
        remaining = _int_header(headers, f"anthropic-ratelimit-{kind}-remaining")
        if remaining is not None and 0 <= remaining < need:
            reset = _seconds_until(headers.get(f"anthropic-ratelimit-{kind}-reset", "") or "", now)
            limit = _int_header(headers, f"anthropic-ratelimit-{kind}-limit")
            if reset is not None:
                if limit and limit > 0 and kind == "requests":
                    reset = min(reset, 60.0 / limit)
                pause = max(pause, reset)
    return min(pause, 60.0)


# ---------------------------------------------------------------------------
# The adapter


class InflightWindow:
    """The adaptive (AIMD) in-flight limit of one judge.

    Under the limit, `acquire` takes a slot without suspending: an anyio
    CapacityLimiter would pass twice through the event loop per call, which
    costs more than the rest of the adapter's bookkeeping. Over the limit,
    callers wait in FIFO order; a cancelled waiter gives back a slot it was
    granted meanwhile."""

    __slots__ = ("limit", "in_use", "_waiters")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.in_use = 0
        self._waiters: deque[anyio.Event] = deque()

    async def acquire(self) -> None:
        if self.in_use < self.limit and not self._waiters:
            self.in_use += 1
            return
        granted = anyio.Event()
        self._waiters.append(granted)
        try:
            await granted.wait()
        except BaseException:
            if granted.is_set():
                self.release()
            else:
                self._waiters.remove(granted)
            raise

    def release(self) -> None:
        self.in_use -= 1
        self._grant()

    def set_limit(self, limit: int) -> None:
        self.limit = limit
        self._grant()

    def _grant(self) -> None:
        while self._waiters and self.in_use < self.limit:
            self.in_use += 1
            self._waiters.popleft().set()


def limiter(per_minute: float, window_s: float) -> AsyncLimiter:
    """A leaky bucket holding `window_s` worth of the rate (at least one unit),
    so a fresh judge does not burst a whole minute's budget at once."""
    if per_minute <= 0 or not math.isfinite(per_minute):
        raise AdapterConfigError(f"rate limits must be positive per-minute numbers, got {per_minute!r}")
    per_second = per_minute / 60.0
    window = max(window_s, 1.0 / per_second)
    return AsyncLimiter(per_second * window, window)


class Pacer:
    """One judge's pace: the AIMD in-flight window (halved on rate-limit
    feedback, at most once a second; +1/limit per success), a judge-wide
    pause gate (the key is throttled, not one call), and the rpm/tpm limiters."""

    def __init__(self, concurrency: int, min_concurrency: int, *, rpm: float | None, tpm: float | None) -> None:
        self._concurrency = concurrency
        self._min = min_concurrency
        self._window = float(concurrency)
        self._last_decrease = 0.0
        self._pause_until = 0.0  # monotonic clock
        self._rpm = limiter(rpm, window_s=1.0) if rpm else None
        self._tpm = limiter(tpm, window_s=6.0) if tpm else None
        self.inflight = InflightWindow(self.limit)

    @property
    def limit(self) -> int:
        """The current (adaptive) in-flight limit."""
        return max(int(self._window), self._min)

    def pause(self, seconds: float) -> None:
        # capped: a provider asking for an hour (a spent daily quota) must not freeze the
        # judge silently; calls keep failing as rate_limit and the breaker stops the judge
        if seconds > 0:
            self._pause_until = max(self._pause_until, time.monotonic() + min(seconds, MAX_JUDGE_PAUSE_S))

    async def wait_for_budget(self, tokens: int) -> None:
        while True:
            wait = self._pause_until - time.monotonic()
            if wait <= 0:
                break
            await anyio.sleep(wait)
        if self._rpm is not None:
            await self._rpm.acquire()
        if self._tpm is not None:
            await self._tpm.acquire(min(tokens, self._tpm.max_rate))

    def decrease(self) -> None:
        now = time.monotonic()
        # one decrease per burst: all the 429s of one window are one signal
        if now - self._last_decrease < 1.0:
            return
        self._last_decrease = now
        self._window = max(float(self._min), self._window / 2)
        self._apply()

    def increase(self) -> None:
        if self._window < self._concurrency:
            self._window = min(float(self._concurrency), self._window + 1.0 / self._window)
            self._apply()

    def _apply(self) -> None:
        if self.inflight.limit != self.limit:
            self.inflight.set_limit(self.limit)
