"""The live counters of a run (plain attributes, updated on the event loop;
the progress display and the run summary read them)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.contracts import CallResult


class Progress:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.items_done = 0
        self.calls_network = 0
        self.calls_cached = 0
        self.in_flight = 0
        self.cells_total = 0
        self.cells_done = 0
        self.cells_reused = 0
        self.rows_written = 0
        self.rows_reused = 0
        # The rows this run consumed, each in one bucket: with a call made for
        # it (items_network) or none (items_cached: cache or twin answers).
        # rows_reused + items_network + items_cached = the exported rows.
        self.items_network = 0
        self.items_cached = 0
        self.items_dropped = 0  # completions past a cell's stopping point
        self.failed_items = 0  # consumed as refused / unparseable / item errors
        self.calls_failed = 0  # transient failures (the item stays pending)
        self.failures_by_kind: dict[str, int] = {}
        self.items_retried = 0
        self.judge_probes = 0  # single calls that test whether a down judge is back
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.cost_usd = 0.0
        self.batch_waves = 0  # waves of batch judges (engine.run.batch.judge)
        self.batches_submitted = 0
        self.batches_resumed = 0  # recorded by an interrupted run, fetched by this one
        self.gate_holds = 0  # items the prefix gate set aside (`prefix_gate = true`), each time it did
        self.planned_items = 0  # upper bound of items still to consume at start
        self.health: dict[str, Any] = {}  # judge -> its engine.judge_health.JudgeHealth (the scheduler's)

    def count_answer(self, result: CallResult) -> None:
        """A provider's answer to one call (synchronous or a batch entry); an
        open circuit breaker answers with no call made (attempts 0)."""
        self.calls_network += result.attempts > 0
        self.prompt_tokens += result.usage.prompt_tokens
        self.completion_tokens += result.usage.completion_tokens
        self.cost_usd += result.cost_usd

    def count_failure(self, kind: str) -> None:
        """A transient failure: the item stays pending and is asked again."""
        self.calls_failed += 1
        self.failures_by_kind[kind] = self.failures_by_kind.get(kind, 0) + 1

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started
