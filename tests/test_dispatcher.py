"""engine.run.dispatcher on an in-memory corpus and a real LMDB store: cache
lookups, in-flight sharing, accounting and failures."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from engine.cache.call_cache import RESULTS_DB, CallCache, GroupCommitWriter, encode_result
from engine.contracts import CallResult, Usage
from engine.run.counters import Progress
from engine.run.dispatcher import Dispatcher
from engine.run.judge_health import FailurePolicy, JudgeHealth, RunAborted
from engine.prompts import load_prompt
from engine.run.results import iter_failures
from engine.cache.store import Store
from scheduler_harness import scripted_design

RUN_KEY = bytes.fromhex("00aa00aa00aa00aa")


class Judge:
    """An adapter double: answers "Score: 70" after `release` is set, or fails."""

    def __init__(self, kind: str = "") -> None:
        self.kind = kind
        self.calls = 0
        self.release = anyio.Event()

    async def complete(self, request) -> CallResult:  # type: ignore[no-untyped-def]
        self.calls += 1
        await self.release.wait()
        if self.kind:
            return CallResult(status="error", text=f"HTTP 503 {self.kind}", error_kind=self.kind)
        return CallResult(status="ok", text="Score: 70", usage=Usage(prompt_tokens=9, completion_tokens=2), cost_usd=0.5)

    async def aclose(self) -> None:
        pass


def run_with(tmp_path: Path, judge: Judge, body, **design):  # type: ignore[no-untyped-def]
    store = Store(tmp_path / "store")
    progress = Progress()
    health = {"sim": JudgeHealth("sim", FailurePolicy(consecutive_failures=3))}

    async def main():  # type: ignore[no-untyped-def]
        async with GroupCommitWriter(store) as writer:
            dispatcher = Dispatcher(CallCache(store), writer, {"sim": judge}, health, progress, RUN_KEY)
            out = await body(dispatcher, scripted_design(tmp_path, **design))
            await writer.flush()
            return out

    try:
        return anyio.run(main), store, progress, health["sim"]
    except BaseException:
        store.close()
        raise


def test_cached_answers_fill_the_item_and_only_missing_calls_go_out(tmp_path: Path) -> None:
    judge = Judge()
    judge.release.set()

    async def body(dispatcher, design):  # type: ignore[no-untyped-def]
        cell = design.cells[0]
        first, again = design.item(cell, 0), design.item(cell, 0)
        assert dispatcher.lookup(first) and first.missing == [0]
        dispatched = await dispatcher.dispatch("sim", first)
        await dispatcher.writer.commit(dispatched[0])
        assert not dispatcher.lookup(again)  # answered by the cache now
        return first, again, dispatched

    (first, again, (_, shared, failed)), store, progress, _ = run_with(tmp_path, judge, body)
    assert judge.calls == 1 and failed == [] and not shared
    assert first.results[0].text == "Score: 70" and again.cached and again.results[0].text == "Score: 70"
    assert (progress.calls_network, progress.calls_cached, progress.cost_usd, progress.prompt_tokens) == (1, 1, 0.5, 9)
    store.close()


def test_identical_requests_in_flight_are_called_once(tmp_path: Path) -> None:
    judge = Judge()

    async def body(dispatcher, design):  # type: ignore[no-untyped-def]
        cell = design.cells[0]
        items = [design.item(cell, 3), design.item(cell, 3)]
        results = []
        for item in items:
            assert dispatcher.lookup(item)

        async def one(item):  # type: ignore[no-untyped-def]
            results.append(await dispatcher.dispatch("sim", item))

        async with anyio.create_task_group() as tg:
            for item in items:
                tg.start_soon(one, item)
            await anyio.wait_all_tasks_blocked()
            judge.release.set()
        return items, results

    (items, results), store, progress, _ = run_with(tmp_path, judge, body)
    assert judge.calls == 1
    assert sorted(shared for _, shared, _ in results) == [False, True]
    assert all(writes and writes[0][1] == items[0].keys[0] for writes, _, _ in results)  # both commit the answer
    assert items[0].results == items[1].results
    assert progress.calls_network == 1 and progress.calls_cached == 1
    store.close()


ANSWER = CallResult(status="ok", text="Score: 55", usage=Usage(prompt_tokens=9, completion_tokens=2))


def test_an_item_looked_up_again_takes_the_answers_committed_since_its_lookup(tmp_path: Path) -> None:
    judge = Judge()

    async def body(dispatcher, design):  # type: ignore[no-untyped-def]
        held = design.item(design.cells[0], 0)
        assert dispatcher.lookup(held) and dispatcher.recheck(held)  # nothing answered yet
        # its twin's answer is committed while it waits (held by the prefix gate, or for a retry)
        await dispatcher.writer.commit([(RESULTS_DB, held.keys[0], encode_result(ANSWER))])
        assert not dispatcher.recheck(held)
        return held

    held, store, progress, _ = run_with(tmp_path, judge, body)
    assert judge.calls == 0 and held.missing == [] and held.results[0].text == "Score: 55" and held.cached
    assert progress.calls_cached == 1
    store.close()


def test_a_later_call_of_an_item_answered_meanwhile_for_another_item_is_not_made_again(tmp_path: Path) -> None:
    from engine.run.design import Item

    judge = Judge()

    async def body(dispatcher, design):  # type: ignore[no-untyped-def]
        cell = design.cells[0]
        a, b = design.item(cell, 0), design.item(cell, 1)
        two = Item(cell, 0, a.pair, a.requests + b.requests, a.keys + b.keys)  # a panel's item: two calls in turn
        assert dispatcher.lookup(two) and two.missing == [0, 1]
        async with anyio.create_task_group() as tg:
            tg.start_soon(dispatcher.dispatch, "sim", two)
            await anyio.wait_all_tasks_blocked()  # its first call is out
            await dispatcher.writer.commit([(RESULTS_DB, b.keys[0], encode_result(ANSWER))])  # another item's answer to the second
            judge.release.set()
        return two

    two, store, progress, _ = run_with(tmp_path, judge, body)
    assert judge.calls == 1 and [r.text for r in two.results] == ["Score: 70", "Score: 55"]
    assert progress.calls_network == 1 and progress.calls_cached == 1
    store.close()


async def first_item(dispatcher, design):  # type: ignore[no-untyped-def]
    """Dispatch the first cell's first document."""
    item = design.item(design.cells[0], 0)
    dispatcher.lookup(item)
    return item, await dispatcher.dispatch("sim", item)


def failing(kind: str) -> Judge:
    judge = Judge(kind=kind)
    judge.release.set()
    return judge


def test_a_transient_failure_is_recorded_but_not_an_outcome(tmp_path: Path) -> None:
    (item, (writes, _, failed)), store, progress, health = run_with(tmp_path, failing("server"), first_item)
    assert failed == [0] and writes == []
    assert item.results == [None]  # no outcome for the item
    assert progress.calls_failed == 1 and progress.failures_by_kind == {"server": 1}
    assert health.consecutive == 1 and not health.down
    [record] = list(iter_failures(store, RUN_KEY))
    assert (record.cell_no, record.doc_index, record.result.text) == (0, 0, "HTTP 503 server")
    assert CallCache(store).get(item.keys[0]) is None  # a failure is never cached
    store.close()


def test_a_fatal_failure_stops_the_run(tmp_path: Path) -> None:
    with pytest.raises(RunAborted, match="judge 'sim': the provider rejected the call \\(auth\\)"):
        run_with(tmp_path, failing("auth"), first_item)


def test_the_answers_of_an_item_with_a_failed_call_are_kept(tmp_path: Path) -> None:
    """A two-call (triples) item whose second call fails: the first answer is
    committed to the cache now, the item is asked again for the second only."""

    class HalfFailing(Judge):
        async def complete(self, request) -> CallResult:  # type: ignore[no-untyped-def]
            self.calls += 1
            await anyio.lowlevel.checkpoint()
            if self.calls == 2:
                return CallResult(status="error", text="timed out", error_kind="timeout")
            return CallResult(status="ok", text='{"triples": []}')

    judge = HalfFailing()

    async def body(dispatcher, design):  # type: ignore[no-untyped-def]
        design.prompts["bands"] = load_prompt("triples")  # the judge's prompt, as a two-call one
        item = design.item(design.cells[0], 2)
        assert dispatcher.lookup(item) and item.missing == [0, 1]
        return item, await dispatcher.dispatch("sim", item)

    (item, (writes, _, failed)), store, progress, _ = run_with(tmp_path, judge, body)
    assert failed == [1] and len(writes) == 1
    cache = CallCache(store)
    assert cache.get(item.keys[0]) is not None and cache.get(item.keys[1]) is None
    assert encode_result(cache.get(item.keys[0])) == writes[0][2]  # type: ignore[arg-type]
    store.close()


def test_a_down_judge_gets_no_call_but_a_probes_first(tmp_path: Path) -> None:
    """Two-call (triples) items while the judge is down: an item that is not
    the probe sends nothing; the probe sends its first call only and, that
    call failing, leaves the second unsent for the retry."""
    judge = failing("server")

    async def body(dispatcher, design):  # type: ignore[no-untyped-def]
        design.prompts["bands"] = load_prompt("triples")
        dispatcher.health["sim"].failed(CallResult(status="error", text="breaker", error_kind="circuit_open"))
        assert dispatcher.health["sim"].down
        items = [design.item(design.cells[0], n) for n in (2, 3)]
        for item in items:
            assert dispatcher.lookup(item) and item.missing == [0, 1]
        waiting = await dispatcher.dispatch("sim", items[0])
        calls_before_probe = judge.calls
        probe = await dispatcher.dispatch("sim", items[1], probe=True)
        return calls_before_probe, waiting, probe

    (calls_before_probe, waiting, probe), store, progress, health = run_with(tmp_path, judge, body)
    assert calls_before_probe == 0 and waiting == ([], False, [0, 1])
    assert judge.calls == 1 and probe == ([], False, [0, 1])
    assert progress.calls_failed == 1 and health.down  # only the probe's call was made (and recorded)
    store.close()
