"""Executors: who runs a judge's calls when not this process's own workers.

By default every judge's calls go through its adapter in this process (a
`mode = "batch"` judge: through its provider's batch API). An `Executor`
given to the run (`needlejudge run --executor ...`, `needlejudge calls
export`) takes some judges instead: each becomes a batch judge
(engine/run/batch/judge.py) whose waves go to the `BatchAdapter` the
executor makes: files for another machine, `vllm run-batch` processes, a
Ray Data job (adapters/executors.py). Planning, the cache, the stopping
rules and every store write stay here, in the driver.
"""

from __future__ import annotations

from typing import Protocol

import msgspec

from engine.contracts import BatchAdapter, JudgeSpec


class RunContext(msgspec.Struct, frozen=True, kw_only=True):
    """What an executor's waves name: the run, its design, its store folder;
    and what the judge's prompts ask (checked against the engine's limits)."""

    run_id: str
    design: str
    store: str
    max_tokens: dict[str, int] = {}  # the judge's prompts' decoding.max_tokens, by prompt name


class Executor(Protocol):
    # The judges the run runs at all (None: every judge with work left).
    judges: frozenset[str] | None

    def takes(self, spec: JudgeSpec) -> bool:
        """Whether this judge's calls go through the executor."""
        ...

    def create(self, spec: JudgeSpec, run: RunContext) -> BatchAdapter: ...
