"""engine.run.workers: the wake-up a judge's idle workers wait on. (The worker
loop itself runs in every scheduler test: tests/test_scheduler*.py.)"""

from __future__ import annotations

import time

import anyio
import pytest

from engine.run.workers import Wakeup

pytestmark = pytest.mark.anyio


async def test_a_set_wakes_a_waiting_worker() -> None:
    wakeup = Wakeup()
    woke: list[bool] = []

    async def worker() -> None:
        await wakeup.wait(None)
        woke.append(True)

    with anyio.fail_after(2):
        async with anyio.create_task_group() as tg:
            tg.start_soon(worker)
            await anyio.sleep(0.01)
            assert not woke  # nothing set yet: still waiting
            wakeup.set()
    assert woke == [True]


async def test_a_set_already_seen_is_consumed_and_the_wait_times_out() -> None:
    wakeup = Wakeup()
    wakeup.set()  # heard by an earlier wait (e.g. the judge was woken, then found no room)
    started = time.monotonic()
    await wakeup.wait(0.05)
    assert time.monotonic() - started >= 0.04  # it did not return at once on the stale set


async def test_a_wait_with_a_timeout_returns_when_a_retry_comes_due() -> None:
    wakeup = Wakeup()
    with anyio.fail_after(2):
        await wakeup.wait(0.01)
