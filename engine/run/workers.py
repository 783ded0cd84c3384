"""The worker tasks of one judge: take an item, dispatch its calls, hand the
answers to the output stage.

`JudgeWorkers.run` is started `JudgeSpec.concurrency` times (each worker
makes one call at a time, so the pool size is the judge's in-flight bound).
A worker takes its next item itself, synchronously (no hand-off between
tasks), and waits only when no cell of its judge has room for another
document (or the next retry is not due). An item the cache answers
completely is consumed on the spot. While the judge is down
(engine.run.judge_health) the workers stop dispatching and one of them probes.
A judge with `prefix_gate = true` whose backend caches prompt prefixes has a
prefix gate (engine.run.prefix_gate): an item it holds for the sibling that owns its
prefix is put aside and the worker takes the next one; once released, it
goes before anything else, looked up in the cache again first (as is a
retry): an identical call of another item may have been answered while it
waited.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio

from engine.cache.call_cache import GroupCommitWriter
from engine.run.cell_policy import CellPolicy
from engine.run.counters import Progress
from engine.run.dispatcher import Dispatcher
from engine.run.judge_health import JudgeHealth
from engine.run.ordered_output import OrderedOutput
from engine.run.prefix_gate import PrefixGate

# After answering this many items from the cache in a row, a worker lets the
# loop (and the commit writer) catch up before taking more.
CACHED_ITEMS_PER_YIELD = 64
_YIELD = object()


class Wakeup:
    """Wakes a judge's idle workers: a cell got room or ended, a retry came
    due, the judge finished, or a graceful stop was requested."""

    __slots__ = ("_event",)

    def __init__(self) -> None:
        self._event = anyio.Event()

    def set(self) -> None:
        self._event.set()

    async def wait(self, timeout: float | None) -> None:
        """Wait for the next `set` (one already seen is consumed), at most `timeout` s."""
        event = self._event
        if event.is_set():
            event = self._event = anyio.Event()
        if timeout is None:
            await event.wait()
            return
        with anyio.move_on_after(timeout):
            await event.wait()


class JudgeWorkers:
    """What every worker task of one (sync) judge runs; see the module docstring."""

    def __init__(
        self,
        judge: str,
        *,
        policy: CellPolicy,
        dispatcher: Dispatcher,
        output: OrderedOutput,
        health: JudgeHealth,
        writer: GroupCommitWriter,
        progress: Progress,
        stopped: Callable[[], bool],
        gate: PrefixGate | None = None,
    ) -> None:
        self.judge = judge
        self.policy = policy
        self.dispatcher = dispatcher
        self.output = output
        self.health = health
        self.writer = writer
        self.progress = progress
        self.stopped = stopped  # a graceful stop was requested
        self.gate = gate
        self.wakeup = Wakeup()

    def take(self, *, probing: bool = False) -> Any:
        """The judge's next item that needs the network (synchronous): a due
        retry (any retry when probing), else new documents, consuming those
        the cache answers completely on the spot. None when no cell has room
        now, `_YIELD` after CACHED_ITEMS_PER_YIELD cached (or held) items.
        An item the prefix gate released goes first."""
        judge, policy, gate = self.judge, self.policy, self.gate
        if gate is not None:
            while (item := gate.released()) is not None:
                if self._needs_calls(item):
                    if gate.admit(item):
                        return item
                    self.progress.gate_holds += 1
        if policy.retries[judge]:
            item = policy.next_retry(judge, any_due=probing)
            if item is not None and self._needs_calls(item):
                return item
        lookup = self.dispatcher.lookup
        output = self.output
        for _ in range(CACHED_ITEMS_PER_YIELD):
            item = policy.issue(judge)
            if item is None:
                return item
            if lookup(item):
                if gate is None or gate.admit(item):
                    return item
                self.progress.gate_holds += 1
                continue  # held until its prefix's owner answers: take the next one meanwhile
            output.consume(item.cell.cell_no, item.doc_index, output.judge(item))
        return _YIELD

    def _needs_calls(self, item: Any) -> bool:
        """An item set aside since its lookup (held, or a retry), looked up
        again: False when identical calls of other items answered it
        meanwhile (it is consumed on the spot, as a cached item is)."""
        if self.dispatcher.recheck(item):
            return True
        output = self.output
        output.consume(item.cell.cell_no, item.doc_index, output.judge(item))
        return False

    async def run(self) -> None:
        """One worker: until the judge is finished or a stop is requested."""
        judge, policy, health = self.judge, self.policy, self.health
        stopped = self.stopped
        while not stopped():
            # Only the worker that holds the probe turn may clear it: while it
            # is held, the probe is the judge's only new call.
            probing = health.down
            if probing:
                if health.probing:  # another worker probes: wait for the judge to come back
                    await health.wait_up()
                    continue
                item = await self._probe_turn()
            else:
                item = self.take()
            if item is None:
                if policy.active(judge) <= 0:
                    self.wakeup.set()  # the judge is finished: release the idle workers
                    return
                if not probing:  # wait for room in a cell, or for the next retry to be due
                    # no room comes once a commit failed (nothing more is consumed): raise it
                    self.writer.check()
                    await self.wakeup.wait(policy.retry_due_in(judge))
                continue
            if item is _YIELD:
                if probing:
                    health.probing = False
                await self.writer.wait_for_room()
                await anyio.lowlevel.checkpoint()
                continue
            if probing:
                self.progress.judge_probes += 1
            if not await self.serve(item, probing=probing):
                return

    async def serve(self, item: Any, *, probing: bool = False) -> bool:
        """Make the item's calls and hand it on: to the output stage, or back
        to the policy for a retry. False when a shared call raised (the run
        is failing)."""
        judge, health, gate = self.judge, self.health, self.gate
        dispatched = await self.dispatcher.dispatch(judge, item, probe=probing)
        if probing:
            health.probing = False
        if gate is not None and gate.ended(item):
            self.wakeup.set()  # the siblings it held are ready
        if dispatched is None:
            return False
        writes, shared, failed = dispatched
        if failed:  # during a graceful stop too: pending, asked on the next run
            self.progress.items_retried += 1
            self.policy.retry_later(judge, item, failed)
        else:
            await self.output.complete(item, writes, shared, self.dispatcher.release)
        return True

    async def _probe_turn(self) -> Any:
        """The judge is down and this worker probes it: after a pause (or
        RunAborted once the outage is too long), the item to ask, retries
        first. The other workers wait until the judge answers."""
        health = self.health
        health.probing = True
        await health.pause_before_probe(self.policy.pending(self.judge))
        if self.stopped():  # a graceful stop ended the pause: no probe
            health.probing = False
            return None
        reset = getattr(self.dispatcher.adapters[self.judge], "reset_circuit", None)
        if reset is not None:  # an HTTP adapter's breaker: let the probe through
            reset()
        item = self.take(probing=True)
        if item is None:  # nothing left to ask
            health.probing = False
            health.answered()
        return item
