"""adapters/pacing.py: the providers' rate-limit headers read into waits,
and the in-flight window the adapter narrows and widens."""

from __future__ import annotations

import time
from email.utils import formatdate

import anyio
import pytest
from hypothesis import given
from hypothesis import strategies as st

from adapters.pacing import budget_pause_s, parse_duration, retry_after_s


def test_parse_duration_reads_openai_reset_formats():
    assert parse_duration("20ms") == pytest.approx(0.02)
    assert parse_duration("1.5s") == pytest.approx(1.5)
    assert parse_duration("6m0s") == pytest.approx(360.0)
    assert parse_duration("1h2m3s") == pytest.approx(3723.0)
    assert parse_duration("2") == pytest.approx(2.0)
    assert parse_duration("soon") is None
    assert parse_duration("5sx") is None


@given(st.integers(0, 5), st.integers(0, 59), st.integers(0, 59), st.integers(0, 999))
def test_parse_duration_sums_any_combination_of_units(hours, minutes, seconds, millis):
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (seconds, "s"), (millis, "ms")) if n) or "0s"
    assert parse_duration(text) == pytest.approx(hours * 3600 + minutes * 60 + seconds + millis / 1000)


def test_retry_after_prefers_milliseconds_and_reads_http_dates():
    now = time.time()
    assert retry_after_s({"retry-after-ms": "250", "retry-after": "9"}, now) == pytest.approx(0.25)
    assert retry_after_s({"retry-after": "3"}, now) == pytest.approx(3.0)
    assert retry_after_s({"retry-after": formatdate(now + 10, usegmt=True)}, now) == pytest.approx(10.0, abs=1.0)
    assert retry_after_s({}, now) is None


def test_budget_pause_from_openai_headers_waits_for_one_request_not_the_window():
    headers = {"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "1s", "x-ratelimit-limit-requests": "1200"}
    assert budget_pause_s(headers, 100, time.time()) == pytest.approx(0.05)
    assert budget_pause_s({**headers, "x-ratelimit-remaining-requests": "7"}, 100, time.time()) == 0.0
    tokens = {"x-ratelimit-remaining-tokens": "50", "x-ratelimit-reset-tokens": "300ms"}
    assert budget_pause_s(tokens, 100, time.time()) == pytest.approx(0.3)
    assert budget_pause_s(tokens, 40, time.time()) == 0.0


def test_budget_pause_from_anthropic_headers_reads_rfc3339_resets():
    from datetime import datetime, timezone

    now = time.time()
    reset = datetime.fromtimestamp(now + 2, tz=timezone.utc).isoformat().replace("+00:00", "Z")
    headers = {"anthropic-ratelimit-requests-remaining": "0", "anthropic-ratelimit-requests-reset": reset}
    assert budget_pause_s(headers, 10, now) == pytest.approx(2.0, abs=0.01)
    assert budget_pause_s({**headers, "anthropic-ratelimit-requests-remaining": "3"}, 10, now) == 0.0




@pytest.mark.anyio
async def test_inflight_window_admits_up_to_its_limit_in_fifo_order() -> None:
    from adapters.pacing import InflightWindow

    window = InflightWindow(2)
    order: list[int] = []

    async def holder(n: int, release: anyio.Event) -> None:
        await window.acquire()
        order.append(n)
        await release.wait()
        window.release()

    releases = [anyio.Event() for _ in range(4)]
    async with anyio.create_task_group() as tg:
        for n in range(4):
            tg.start_soon(holder, n, releases[n])
            await anyio.sleep(0.01)
        assert order == [0, 1] and window.in_use == 2  # the third and fourth wait
        releases[1].set()
        await anyio.sleep(0.01)
        assert order == [0, 1, 2] and window.in_use == 2
        window.set_limit(3)  # a wider window admits the next waiter at once
        await anyio.sleep(0.01)
        assert order == [0, 1, 2, 3] and window.in_use == 3
        window.set_limit(1)  # a narrower one admits nobody until enough left
        for event in (releases[0], releases[2], releases[3]):
            event.set()
    assert window.in_use == 0


@pytest.mark.anyio
async def test_inflight_window_cancelled_waiters_leave_no_slot_behind() -> None:
    from adapters.pacing import InflightWindow

    window = InflightWindow(1)
    await window.acquire()
    with anyio.move_on_after(0.02):
        await window.acquire()  # waits, then is cancelled
    assert window.in_use == 1 and not window._waiters
    # granted, then cancelled before it resumed: no slot is lost either way
    async with anyio.create_task_group() as tg:
        scope = anyio.CancelScope()

        async def waiter() -> None:
            with scope:
                await window.acquire()
                try:
                    await anyio.sleep(1)  # the cancellation lands here or in acquire
                finally:
                    window.release()

        tg.start_soon(waiter)
        await anyio.sleep(0.01)
        window.release()  # grants the waiter...
        scope.cancel()  # ...which is cancelled before it resumes
    assert window.in_use == 0 and not window._waiters
