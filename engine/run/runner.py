"""Wires a config to a run: store → corpus → prompts → design → adapters →
scheduler (with the call cache and its writer) → exported results.

Public entry points:

    config = load_config("experiment.toml")
    summary = run_experiment(config, quiet=True)        # blocking
    summary = await arun_experiment(config)              # inside an event loop
    plan = plan_experiment(config)                       # the --dry-run report
"""

from __future__ import annotations

import time
from typing import Any

import anyio

from engine.cache.call_cache import MAX_UNCOMMITTED, CallCache, GroupCommitWriter
from engine.config import ExperimentConfig
from engine.run.experiment import Experiment
from engine.run.plan import PlanReport, plan_experiment
from engine.cache.run_lock import hold_run
from engine.run.summary import RunSummary, finish_run, now_iso
from engine.run.scheduler import FailurePolicy, Progress, Scheduler, StopRequest

__all__ = ["Experiment", "PlanReport", "RunStopped", "RunSummary", "StopRequest", "arun_experiment", "plan_experiment", "run_experiment"]


class RunStopped(Exception):
    """A graceful stop (StopRequest) ended the run: every answer received is
    committed; nothing is exported (the run is not finished)."""


async def arun_experiment(
    config: ExperimentConfig,
    *,
    quiet: bool = True,
    export: bool = True,
    failure_policy: FailurePolicy | None = None,
    stop: StopRequest | None = None,
) -> RunSummary:
    """Run (or resume, or re-read) an experiment and export its results.
    One process at a time runs an experiment (engine.cache.run_lock). After `stop`
    is set, the calls in flight finish and are committed, then RunStopped."""
    started_at, t0 = now_iso(), time.perf_counter()
    experiment = Experiment(config, prepare_progress=not quiet)
    try:
        with hold_run(config.store, config.output if export else None, experiment.run_id):
            return await _run_and_finish(
                experiment, started_at, t0, quiet=quiet, export=export, failure_policy=failure_policy, stop=stop
            )
    finally:
        experiment.close()


async def _run_and_finish(
    experiment: Experiment,
    started_at: str,
    t0: float,
    *,
    quiet: bool,
    export: bool,
    failure_policy: FailurePolicy | None,
    stop: StopRequest | None,
) -> RunSummary:
    from engine.contracts import AdapterConfigError
    from engine.registry import create_adapter, create_batch_adapter, in_config

    config = experiment.config
    cache = CallCache(experiment.store)
    progress = Progress()
    adapters: dict[str, Any] = {}
    try:
        async with GroupCommitWriter(experiment.store) as writer:
            scheduler = Scheduler(
                experiment.design,
                cache=cache,
                writer=writer,
                adapters=adapters,
                run_id=experiment.run_id,
                prompt_versions=experiment.prompt_versions,
                progress=progress,
                # an explicit policy (tests, embedding code) wins over the config's [failures]
                failure_policy=failure_policy or FailurePolicy.from_config(config.failures),
                stop=stop,
            )
            scheduler.restore()
            # Adapters only for judges with work left: a finished run opens no connection.
            busy = {run.cell.judge for run in scheduler.runs if not run.done}
            if busy:
                # Started while the adapters are made, not after the first answers
                # (a kill loses every answer received but not committed).
                writer.start_process()
            for judge in config.judges:
                if judge.name in busy:
                    try:
                        spec = judge.spec()
                        # a batch judge's adapter is its provider's batch API (engine.run.batch.judge)
                        adapters[judge.name] = create_batch_adapter(spec) if spec.mode == "batch" else create_adapter(spec)
                    except AdapterConfigError as exc:  # a missing key, an unknown option...
                        raise in_config(config.source, exc) from None
            if busy:  # answers waiting for a commit: bounded by what losing one costs
                writer.max_pending = uncommitted_bound(config, busy)
            if quiet or not busy:
                await scheduler.run()
            else:
                from engine.run.progress import ProgressDisplay

                async with anyio.create_task_group() as tg:
                    tg.start_soon(ProgressDisplay(progress).run)
                    await scheduler.run()
                    tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            for adapter in adapters.values():
                await adapter.aclose()
    if stop is not None and stop.requested and not all(run.done for run in scheduler.runs):
        # drained: the writer committed every answer on its way out
        raise RunStopped("stopped before the run finished")
    return finish_run(experiment, progress, len(scheduler.runs), started_at, t0, export=export)


# Answers of free judges only (offline measures) that may wait for a commit:
# the writer's own cap, so that a judge answering thousands of calls a second
# commits in few, large transactions.
FREE_UNCOMMITTED_BOUND = MAX_UNCOMMITTED


def uncommitted_bound(config: ExperimentConfig, busy: set[str]) -> int:
    """The writer's backpressure: answers that may wait for a commit (one
    bounded submission each: GroupCommitWriter). A kill pays again for every
    answer lost, so with any busy judge whose answers cost money or
    accelerator time the bound is the calls the busy judges keep in flight,
    + 8 (issue 15). With only free judges busy a lost answer costs
    microseconds of CPU, and the tight bound would stall the loop on a commit
    round trip every few dozen answers (~1.5x the run's time at a few
    thousand answers a second)."""
    from engine.registry import free_answers

    judges = [judge for judge in config.judges if judge.name in busy]
    if all(free_answers(judge.spec()) for judge in judges):
        return FREE_UNCOMMITTED_BOUND
    return sum(judge.concurrency for judge in judges) + 8


def run_experiment(
    config: ExperimentConfig, *, quiet: bool = True, export: bool = True, failure_policy: FailurePolicy | None = None
) -> RunSummary:
    """Blocking wrapper of `arun_experiment` (its own event loop)."""
    return anyio.run(lambda: arun_experiment(config, quiet=quiet, export=export, failure_policy=failure_policy))
