"""engine.run.workers: the wake-up a judge's idle workers wait on. (The worker
loop itself runs in every scheduler test: tests/test_scheduler*.py.)"""

from __future__ import annotations

import time

import anyio
import pytest

from engine.contracts import Capabilities
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


async def test_an_item_held_by_the_prefix_gate_pays_no_call_its_twin_made_and_committed_meanwhile(tmp_path, server) -> None:  # type: ignore[no-untyped-def]
    """At (0, 0) the orig and rand items of a document are one request. At
    the start every item is held for the first call; once it ends the held
    items go one by one, and here each one's answer is committed before the
    next is taken: the twin released second must come from the cache, not
    from a second call to the fake server (it was paid twice when the gate
    kept its stale lookup)."""
    from engine.cache.call_cache import CallCache, GroupCommitWriter
    from engine.cache.store import Store
    from engine.registry import create_adapter
    from engine.run.results import iter_rows
    from engine.run.scheduler import Scheduler
    from engine.run.workers import _YIELD
    from scheduler_harness import RUN_ID, make_design, outcomes, run_scheduler, server_config

    server.reset()
    design = make_design(server_config(tmp_path, server.url, concurrency=4, prefix_gate=True))
    adapter = create_adapter(design.judges["sim"].spec())
    with Store(tmp_path / "store") as store:
        async with GroupCommitWriter(store) as writer:
            scheduler = Scheduler(design, cache=CallCache(store), writer=writer, adapters={"sim": adapter}, run_id=RUN_ID,
                                  prompt_versions={name: p.version for name, p in design.prompts.items()})
            scheduler.restore()
            assert scheduler.policy.start("sim")
            workers = scheduler._workers("sim")
            scheduler._wake["sim"] = workers.wakeup
            gate = workers.gate
            assert gate is not None  # the gate is on for a backend that caches prefixes
            ready = [workers.take()]
            while (item := workers.take()) is not None:  # everything else waits for the first call's instructions...
                if item is not _YIELD:
                    ready.append(item)  # ...but its own twin, which shares it in flight
            held = [item.keys[0] for waiting in gate._waiting.values() for item in waiting]
            assert len(held) == gate.held and len(set(held)) < len(held)  # twins among the held items
            assert scheduler.progress.gate_holds == gate.held  # each hold counted for the run summary
            for item in ready:
                assert await workers.serve(item)
            await writer.flush()
            while scheduler.policy.active("sim") > 0:
                item = workers.take()
                assert item is not None  # every item served so far is committed and consumed: cells have room
                if item is not _YIELD:
                    assert await workers.serve(item)
                    await writer.flush()
            rows = list(iter_rows(store, bytes.fromhex(RUN_ID)))
            gated = outcomes(store)
        await adapter.aclose()
    stats = server.stats()
    assert stats["repeated_completions"] == 0, stats["repeated"]
    assert len(rows) == len(design.cells) * 5 and all(row.status == "ok" for row in rows)
    assert stats["completed"] == len({row.cache_keys for row in rows}) < len(rows)  # twins' rows share a call
    ungated = make_design(server_config(tmp_path, server.url, concurrency=4))
    with Store(tmp_path / "ungated") as store:  # the same rows without the gate
        await anyio.to_thread.run_sync(lambda: run_scheduler(ungated, store))
        assert outcomes(store) == gated


class Unasked:
    """An adapter the test never calls."""

    capabilities = Capabilities()


def test_an_idle_worker_raises_a_commit_that_failed_instead_of_waiting_for_room_forever(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Every cell's window is full and nothing can be consumed once a commit
    failed (a full disk): the workers waiting for room must learn of it."""
    from engine.cache.call_cache import CallCache, CommitError, GroupCommitWriter
    from engine.cache.store import Store
    from engine.run.scheduler import Scheduler
    from scheduler_harness import RUN_ID, scripted_design

    design = scripted_design(tmp_path)
    with Store(tmp_path / "store") as store:

        async def main() -> None:
            async with GroupCommitWriter(store) as writer:
                scheduler = Scheduler(design, cache=CallCache(store), writer=writer, adapters={"sim": Unasked()}, run_id=RUN_ID,
                                      prompt_versions={name: p.version for name, p in design.prompts.items()})
                scheduler.restore()
                assert scheduler.policy.start("sim")
                workers = scheduler._workers("sim")
                scheduler._wake["sim"] = workers.wakeup
                taken = []
                while (item := workers.take()) is not None:  # every window full, nothing answered
                    taken.append(item)
                assert taken
                with anyio.fail_after(10):
                    async with anyio.create_task_group() as tg:
                        tg.start_soon(workers.run)  # idle: no cell has room
                        await anyio.wait_all_tasks_blocked()
                        writer.submit_nowait([("no-such-db", b"k" * 32, b"v")])  # a commit that fails

        with pytest.raises(BaseExceptionGroup) as raised:
            anyio.run(main)
        assert raised.group_contains(CommitError, match="commit failed")
