"""The async scheduler: streams a design's items through judges at full speed.

Three parts, as vLLM v1 splits its engine, wired together here:

- engine.run.cell_policy: which cell gets a judge's next document, and how
  many documents a cell may have outstanding (fair, windowed, lazy;
  transient failures are retried first, after their backoff);
- engine.run.dispatcher: an item's calls (cache lookup, in-flight sharing of
  identical requests, the adapter, the failure policy of
  engine.run.judge_health);
- engine.run.ordered_output: the item's verdict and row, committed before it
  counts, consumed per cell in document order.

One event loop, one anyio task group. Per judge: a fixed pool of
`JudgeSpec.concurrency` worker tasks (engine.run.workers), each taking its next
item itself and making one call at a time. A judge with `mode = "batch"`
has one task instead, running its waves over the same policy and output
stage (engine.run.batch.judge).

Failures never change the data: a refused / unparseable document, or an
error about its content, is the item's outcome (a row; the cell moves on);
a transient failure leaves the item pending: asked again after a backoff
and, should the run stop first, on the next run.

Resumable (engine.run.resume): cells continue from the store.
"""

from __future__ import annotations

from typing import Any

import anyio

from engine.cache.call_cache import CallCache, GroupCommitWriter
from engine.run.cell_policy import CellPolicy, CellRun
from engine.contracts import Adapter, ConfigError
from engine.run.counters import Progress
from engine.run.design import Design
from engine.run.dispatcher import Dispatcher
from engine.run.item_errors import terminal_answers
from engine.run.judge_health import FailurePolicy, JudgeHealth, RunAborted
from engine.run.ordered_output import OrderedOutput
from engine.run.prefix_gate import PrefixGate
from engine.run.resume import drop_stale, ended_without_state, restore_runs, state_write
from engine.run.workers import JudgeWorkers, Wakeup

__all__ = ["FailurePolicy", "Progress", "RunAborted", "Scheduler", "StopRequest"]

class StopRequest:
    """A graceful stop (engine.commands.run sets it on the first SIGINT /
    SIGTERM): workers take no new item, the calls in flight finish and are
    committed, then `Scheduler.run` returns. Set from the event loop's thread."""

    def __init__(self) -> None:
        self.requested = False
        self.progress: Progress | None = None  # the scheduler's: how many calls are in flight
        self._listeners: list[Any] = []

    @property
    def in_flight(self) -> int:
        return self.progress.in_flight if self.progress is not None else 0

    def set(self) -> None:
        if not self.requested:
            self.requested = True
            for listener in self._listeners:
                listener()

    def on_set(self, listener: Any) -> None:
        self._listeners.append(listener)


class Scheduler:
    def __init__(
        self,
        design: Design,
        *,
        cache: CallCache,
        writer: GroupCommitWriter,
        adapters: dict[str, Adapter],
        run_id: str,
        prompt_versions: dict[str, str],
        progress: Progress | None = None,
        failure_policy: FailurePolicy | None = None,
        stop: StopRequest | None = None,
        waves: frozenset[str] = frozenset(),
        only: frozenset[str] | None = None,
    ) -> None:
        self.design = design
        # judges run in waves besides `mode = "batch"` ones (an executor's: engine.run.executor)
        self.waves = waves
        self.only = only  # the judges this run runs (None: all)
        self.cache = cache
        self.writer = writer
        self.run_id = run_id
        self._run_key = bytes.fromhex(run_id)
        self.prompt_versions = prompt_versions
        self.progress = progress or Progress()
        self.failure_policy = failure_policy or FailurePolicy()
        self.health = {
            name: JudgeHealth(name, self.failure_policy, url=spec.base_url or ", ".join(spec.base_urls), timeout_s=spec.timeout_s)
            for name, spec in design.judges.items()
        }
        self.progress.health = self.health  # the display shows a judge that is down or not answering
        self.dispatcher = Dispatcher(cache, writer, adapters, self.health, self.progress, self._run_key)
        self.runs: list[CellRun] = []
        self._stale: list[tuple[int, int]] = []
        self._wake: dict[str, Wakeup] = {}  # per judge: its workers' (batch judges: heard by nobody)
        self.batch_judges: dict[str, Any] = {}  # judge -> its engine.run.batch.judge.BatchJudge
        writer.on_failure(self._wake_workers)  # idle workers raise the failed commit
        self.stop = stop or StopRequest()
        self.stop.progress = self.progress
        self.stop.on_set(self._wake_all)

    def restore(self) -> None:
        """Build every cell's run, continuing from what the store holds."""
        restored = restore_runs(self.design, self.cache.store, self._run_key)
        self.runs, self._stale = restored.runs, restored.stale
        progress = self.progress
        progress.cells_reused += restored.cells_reused
        progress.rows_reused += restored.rows_reused
        progress.cells_total = len(self.runs)
        progress.cells_done = sum(run.done for run in self.runs)
        progress.planned_items = sum(max(0, run.cap - run.rule.n) for run in self.runs if not run.done)
        self.policy = CellPolicy(self.design, self.runs, self._end_cell, self.failure_policy.retry_delay)
        self.output = OrderedOutput(
            self.design,
            self.runs,
            self.writer,
            run_id=self.run_id,
            prompt_versions=self.prompt_versions,
            progress=progress,
            events=self.policy,
            wake=self._wake_judge,
        )

    def _end_cell(self, run: CellRun, reason: str) -> None:
        self.output.end(run, reason)

    def _wake_judge(self, judge: str) -> None:
        self._wake[judge].set()

    def _wake_workers(self) -> None:
        for wake in self._wake.values():
            wake.set()

    def _wake_all(self) -> None:  # a graceful stop: idle workers see it and return
        self._wake_workers()
        for health in self.health.values():  # ...and so do those waiting for a down judge or its probe
            health.stop()

    # -- main ------------------------------------------------------------------
    async def run(self) -> None:
        if not self.runs:
            self.restore()
        drop_stale(self.cache.store, self._run_key, self._stale)
        self._stale = []
        self.dispatcher.terminal = terminal_answers(self.cache.store, self._run_key)
        # Cells that ended during replay get their state record now.
        ended = ended_without_state(self.cache.store, self._run_key, self.runs)
        if ended:
            await self.writer.submit([state_write(self._run_key, run) for run in ended])
        try:
            async with anyio.create_task_group() as tg:
                for judge, spec in self.design.judges.items():
                    if (self.only is not None and judge not in self.only) or not self.policy.start(judge):
                        continue
                    if spec.mode == "batch" or judge in self.waves:  # waves through a batch API or an executor
                        self._wake[judge] = Wakeup()
                        tg.start_soon(self._batch_judge(judge).run)
                        continue
                    workers = self._workers(judge)
                    self._wake[judge] = workers.wakeup
                    # One call per worker at a time: the worker count is the in-flight bound.
                    for _ in range(spec.concurrency):
                        tg.start_soon(workers.run)
        except BaseExceptionGroup as group:
            # Surface the reason a run stopped (bad credentials, persistent
            # failures, a bad prompt...) as itself, not inside a group.
            found = _first_of(group, ConfigError)
            if found is not None:
                raise found from None
            raise
        await self.writer.flush()

    def _workers(self, judge: str) -> JudgeWorkers:
        return JudgeWorkers(
            judge,
            policy=self.policy,
            dispatcher=self.dispatcher,
            output=self.output,
            health=self.health[judge],
            writer=self.writer,
            progress=self.progress,
            stopped=lambda: self.stop.requested,
            gate=PrefixGate() if self._gated(judge) else None,
        )

    def _gated(self, judge: str) -> bool:
        """The judge asked for the prefix gate (`prefix_gate = true`, off by default: on
        the tiny Gemma-3 it gains 0.002 of attainable at ~1.03x CPU, its sliding
        window holding the rest; RESULTS, issue 31) and its backend caches
        prompt prefixes (a run refuses the key otherwise: engine.run.experiment;
        an embedding caller's adapter may still cache nothing)."""
        return self.design.judges[judge].prefix_gate and self.dispatcher.adapters[judge].capabilities.prompt_caching

    def _batch_judge(self, judge: str) -> Any:
        from engine.run.batch.judge import BatchJudge

        batch = BatchJudge(
            self.design.judges[judge],
            self.dispatcher.adapters[judge],  # type: ignore[arg-type]  # a BatchAdapter (engine.run.runner)
            retry_delay=self.failure_policy.retry_delay,
            policy=self.policy,
            output=self.output,
            cache=self.cache,
            writer=self.writer,
            health=self.health[judge],
            progress=self.progress,
            run_key=self._run_key,
            stopped=lambda: self.stop.requested,
            terminal=self.dispatcher.terminal,
        )
        self.stop.on_set(batch.request_stop)
        self.batch_judges[judge] = batch
        return batch


def _first_of(group: BaseExceptionGroup, kind: type[BaseException]) -> BaseException | None:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found = _first_of(exc, kind)
            if found is not None:
                return found
        elif isinstance(exc, kind):
            return exc
    return None
