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
from pathlib import Path
from typing import Any

import anyio

from engine.cache.call_cache import MAX_UNCOMMITTED, CallCache, GroupCommitWriter
from engine.config import ExperimentConfig, JudgeConfig
from engine.run.executor import Executor, RunContext
from engine.run.experiment import Experiment
from engine.run.plan import PlanReport, plan_experiment
from engine.cache.run_lock import hold_run
from engine.run.summary import OutputTaken, RunSummary, check_output, finish_run, now_iso
from engine.run.scheduler import FailurePolicy, Progress, Scheduler, StopRequest
from engine.run.writable import check_writable

__all__ = ["Experiment", "OutputTaken", "PlanReport", "RunStopped", "RunSummary", "StopRequest", "arun_experiment", "plan_experiment", "run_experiment"]


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
    replace: bool = False,
    executor: Executor | None = None,
) -> RunSummary:
    """Run (or resume, or re-read) an experiment and export its results.
    One process at a time runs an experiment (engine.cache.run_lock). After `stop`
    is set, the calls in flight finish and are committed, then RunStopped.
    An output folder holding another run's results is refused before any
    call (OutputTaken) unless `replace`. `executor`: the judges it takes run
    in waves through it (engine.run.executor)."""
    started_at, t0 = now_iso(), time.perf_counter()
    experiment = Experiment(config, prepare_progress=not quiet)
    try:
        # Before anything is written or paid for: room, and a real write, in the store and output folder.
        check_writable(experiment.store, Path(config.output) if export else None)
        with hold_run(config.store, config.output if export else None, experiment.run_id):
            if export:
                check_output(config.output, experiment.run_id, replace=replace)
            return await _run_and_finish(
                experiment, started_at, t0, quiet=quiet, export=export, failure_policy=failure_policy, stop=stop,
                executor=executor,
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
    executor: Executor | None = None,
) -> RunSummary:
    from engine.contracts import AdapterConfigError
    from engine.run.panel import panel_adapter
    from engine.registry import create_judge_adapter, in_config

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
                only=executor.judges if executor is not None else None,
            )
            scheduler.restore()
            # Adapters only for judges with work left: a finished run opens no connection.
            busy = {run.cell.judge for run in scheduler.runs if not run.done}
            if executor is not None and executor.judges is not None:
                busy &= executor.judges
            if busy:
                # Started while the adapters are made, not after the first answers
                # (a kill loses every answer received but not committed).
                writer.start_process()
            # a busy panel needs its members' adapters, busy or not
            needed = busy | {m for judge in config.judges if judge.panel is not None and judge.name in busy for m in judge.panel.members}
            for judge in config.judges:
                if judge.name in needed and judge.panel is None:
                    try:
                        spec = judge.spec()
                        if executor is not None and executor.takes(spec):  # its waves go to the executor
                            adapters[judge.name] = executor.create(spec, run_context(experiment, judge))
                            scheduler.waves |= {judge.name}
                            continue
                        # a batch judge's adapter is its provider's batch API (engine.run.batch.judge)
                        adapters[judge.name] = create_judge_adapter(judge.spec())
                    except AdapterConfigError as exc:  # a missing key, an unknown option...
                        raise in_config(config.source, exc) from None
            panel_adapters = {judge.name: panel_adapter(experiment.design, judge.name, adapters) for judge in config.judges if judge.panel and judge.name in busy}
            if busy:  # answers waiting for a commit: bounded by what losing one costs
                writer.max_pending = uncommitted_bound(config, busy)
            adapters.update(panel_adapters)  # after the members: closing a panel's adapter closes nothing
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


def run_context(experiment: Experiment, judge: JudgeConfig) -> RunContext:
    config = experiment.config
    names = set(config.judge_prompts(judge)) | ({config.tournament.prompt} if config.tournament is not None else set())
    max_tokens = {name: prompt.decoding.max_tokens for name, prompt in experiment.prompts.items()
                  if name in names and getattr(prompt, "decoding", None) is not None}
    return RunContext(run_id=experiment.run_id, design=experiment.design_fingerprint(), store=str(config.store), max_tokens=max_tokens)


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
    by_name = {judge.name: judge for judge in config.judges}
    singles = [by_name[m] for judge in judges for m in (judge.panel.members if judge.panel else (judge.name,))]
    if all(free_answers(judge.spec()) for judge in singles):
        return FREE_UNCOMMITTED_BOUND
    return sum(judge.concurrency for judge in judges) + 8


def run_experiment(
    config: ExperimentConfig,
    *,
    quiet: bool = True,
    export: bool = True,
    failure_policy: FailurePolicy | None = None,
    replace: bool = False,
    executor: Executor | None = None,
) -> RunSummary:
    """Blocking wrapper of `arun_experiment` (its own event loop)."""
    return anyio.run(lambda: arun_experiment(config, quiet=quiet, export=export, failure_policy=failure_policy, replace=replace,
                                             executor=executor))
