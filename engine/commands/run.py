"""`needlejudge run CONFIG [--dry-run] [--quiet]`."""

from __future__ import annotations

import argparse
import gc
import json
import shlex
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.config import ExperimentConfig

HELP = "Run an experiment config: resumes an interrupted run; a finished one makes no calls."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="experiment config (TOML)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the design size, the calls the cache already answers and upper bounds on calls and cost; call nothing",
    )
    parser.add_argument("--quiet", action="store_true", help="no live progress display (CI); print the summary only")
    parser.add_argument(
        "--replace",
        action="store_true",
        help="export over the results of another run in the output folder (without it such a run stops before any call)",
    )
    parser.add_argument("--json", action="store_true", help="print the summary / plan as JSON")
    where = parser.add_argument_group("past one machine (README, \"Past one machine\")")
    where.add_argument(
        "--executor", choices=("in-process", "run-batch", "ray"), default="in-process",
        help="run-batch: each wave of the vllm judges through `vllm run-batch` processes; "
             "ray: each wave of the API and vllm judges as a Ray Data job (needs needlejudge[ray])",
    )
    where.add_argument("--shards", type=int, default=1, help="run-batch: processes (engines) per wave")
    where.add_argument("--devices", default="", help="run-batch: each process's CUDA_VISIBLE_DEVICES, space-separated: '0 1 2 3' (one GPU each) or '0,1 2,3' (two each); sets --shards to their number")
    where.add_argument(
        "--max-shard-errors", type=float, default=None, metavar="SHARE",
        help="run-batch: stop the run when a shard's failed or unanswered calls exceed this share of it (default 0.5)",
    )
    where.add_argument("--address", default="local", help="ray: auto (a running cluster), local (start one here) or ray://HOST:PORT")
    where.add_argument("--ray-workers", type=int, default=2,
                       help="ray: actors of an API judge's HTTP stage (each with the judge's concurrency), or a vllm judge's engine replicas "
                            "(options.data_parallel_size, when set, wins)")


# A graceful stop waits at most this long for the calls in flight.
DRAIN_CAP_S = 120.0


class StopReport:
    """How a run was stopped: by which signal, drained or cut short, and what
    became of the calls in flight (answered and committed, ended without an
    answer, or abandoned)."""

    def __init__(self, drain_s: float) -> None:
        self.signal = ""
        self.drain_s = drain_s
        self.drained = False  # the calls in flight ended (their answers committed)
        self.abandoned: int | None = None  # the calls in flight when cancelled, when known
        self.in_flight: int | None = None  # at the signal, when known
        self._counts_at_signal = (0, 0)
        self._progress: Any = None

    def signalled(self, progress: Any) -> None:
        """Remember the calls in flight at the first signal, and the counters then."""
        self._progress = progress
        if progress is not None:
            self.in_flight = progress.in_flight
            self._counts_at_signal = (progress.calls_network, progress.calls_failed)

    def fate(self) -> str:
        """What became of the calls in flight, for the message."""
        if self.drained or self.abandoned == 0:
            if self.in_flight == 0:
                return "no call was in flight"
            if self._progress is None or self.in_flight is None:
                return "the calls in flight ended"
            calls, failed = self._counts_at_signal
            failed = self._progress.calls_failed - failed
            answered = self._progress.calls_network - calls - failed
            fate = f"the {self.in_flight} call(s) in flight ended: {answered} answered and committed"
            if failed:
                fate += f", {failed} without an answer (timed out or failed; the resume asks them again)"
            return fate
        count = "calls" if self.abandoned is None else f"{self.abandoned} call(s)"
        return f"{count} still in flight were abandoned (a provider may bill them; the resume asks them again)"


def drain_bound(config: ExperimentConfig) -> float:
    """The longest judge `timeout_s`, capped: a call in flight ends by then."""
    return min(DRAIN_CAP_S, max((judge.timeout_s for judge in config.judges), default=DRAIN_CAP_S))


def executor_for(args: argparse.Namespace) -> Any:
    """The executor the flags name (None: the judges' own workers)."""
    from engine.contracts import ConfigError

    if args.executor == "in-process":
        return None
    if args.executor == "run-batch":
        from adapters.executors import RunBatch

        if args.shards < 1:
            raise ConfigError(f"--shards {args.shards}: expected a positive number of processes")
        if args.max_shard_errors is not None and not 0 <= args.max_shard_errors < 1:
            raise ConfigError(f"--max-shard-errors {args.max_shard_errors}: expected a share in [0, 1)")
        return RunBatch(shards=args.shards, devices=args.devices.split(), max_shard_errors=args.max_shard_errors)
    from adapters.executors import RayData

    if args.address not in {"auto", "local"} and not args.address.startswith("ray://"):
        raise ConfigError(f"--address {args.address!r}: expected auto, local or a ray://HOST:PORT URL")
    return RayData(address=args.address, workers=max(1, args.ray_workers))


def _run_stoppable(config: ExperimentConfig, *, quiet: bool, replace: bool = False, executor: Any = None) -> tuple[object | None, StopReport]:
    """Run the experiment. The first SIGINT / SIGTERM stops taking new items
    and lets the calls in flight finish (at most `drain_bound`), committing
    their answers; a second signal, or the bound running out, cancels at
    once (which still commits every answer it holds). Returns (summary, _)
    or (None, the report) after a stop."""
    import asyncio

    import anyio

    from engine.run.runner import RunStopped, StopRequest, arun_experiment

    report = StopReport(drain_bound(config))
    stop = StopRequest()

    async def stoppable() -> object:
        task = asyncio.current_task()
        assert task is not None
        loop = asyncio.get_running_loop()
        timer: list[asyncio.TimerHandle] = []
        cancelled: list[bool] = []

        def cancel_now() -> None:
            if not cancelled:
                cancelled.append(True)
                report.abandoned = stop.in_flight
                task.cancel()

        def on_signal(name: str) -> None:
            if stop.requested:  # the second signal
                cancel_now()
                return
            report.signal = name
            report.signalled(stop.progress)
            waiting = (
                f"waiting up to {report.drain_s:g} s (the longest judge timeout_s, at most {DRAIN_CAP_S:g} s) for the "
                f"{stop.in_flight} call(s) in flight. Signal again to stop at once"
                if stop.in_flight
                else "no call is in flight: stopping now"
            )
            print(f"needlejudge run: {name}: taking no new items; {waiting}.", file=sys.stderr, flush=True)
            stop.set()
            timer.append(loop.call_later(report.drain_s, cancel_now))

        # A SIGINT ignored at start (a shell's background job) stays ignored;
        # otherwise this handler replaces asyncio's KeyboardInterrupt.
        signals = [signal.SIGTERM] + ([signal.SIGINT] if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN else [])
        installed = []
        try:
            try:
                for signum in signals:
                    loop.add_signal_handler(signum, on_signal, signum.name)
                    installed.append(signum)
            except (ValueError, RuntimeError, NotImplementedError):  # not the main thread: the signals keep their handlers
                pass
            summary = await arun_experiment(config, quiet=quiet, stop=stop, replace=replace, executor=executor)
            # A signal that came during the export (synchronous code on this
            # loop) waits in the loop's wakeup pipe: one pass reads it, the
            # next runs its handler. Without them it was dropped unheard.
            await asyncio.sleep(0)
            await asyncio.sleep(0)
            return summary
        finally:
            for handle in timer:
                handle.cancel()
            for signum in installed:
                loop.remove_signal_handler(signum)

    try:
        return anyio.run(stoppable), report
    except KeyboardInterrupt:  # no drain (not the main thread): Ctrl-C cancelled the run
        report.signal = report.signal or "SIGINT"
        return None, report
    except RunStopped:
        report.drained = True
        return None, report
    except asyncio.CancelledError:
        if not report.signal:
            raise
        return None, report


def _store_failure(exc: BaseException, store: str, output: str) -> str | None:
    """A clear message for a store or output folder that cannot be used or
    written (corrupt, foreign, disk full), found in `exc` or the exception
    groups around it; None for anything else."""
    import errno

    import lmdb
    import msgspec

    from engine.cache.call_cache import CommitError
    from engine.contracts import ConfigError
    from engine.run.writable import free_text

    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _store_failure(inner, store, output)
            if found is not None:
                return found
        return None
    if isinstance(exc, ConfigError):  # already says what is wrong (engine.cli prints it)
        return None
    if isinstance(exc, (msgspec.DecodeError, msgspec.ValidationError)):  # only stored records are decoded by now
        return (f"store {store}: a damaged record ({type(exc).__name__}: {exc}). Run `needlejudge cache verify {store} "
                "--delete-corrupt`: it removes what is damaged, and the next run recomputes it from the cached calls")
    free = free_text(Path(store))
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM):
        # the export (the only file writes of a run outside the store)
        return (f"output {exc.filename or output}: cannot be written ({exc.strerror}; {free_text(Path(output))}). Nothing is "
                f"lost: every answer so far is committed in the store {store}; free some space or change `output`, then run "
                "again (answers already paid for are not asked again)")
    if isinstance(exc, CommitError):
        return f"store {store}: could not commit ({exc}; {free}). Everything committed before is kept; fix the cause and resume"
    if isinstance(exc, lmdb.Error):
        return (f"store {store}: not usable as a needlejudge store ({type(exc).__name__}: {exc}; {free}). "
                "Check the path, or point `store` at an empty folder")
    return None


def _print_plan(plan: Any, *, as_json: bool) -> int:
    if as_json:
        import msgspec

        print(json.dumps(msgspec.to_builtins(plan), indent=2))
        return 0
    print(f"run {plan.run_id}: {plan.cells:,} cells ({plan.cells_ended:,} already ended), {plan.documents:,} documents in the corpus")
    for line in plan.document_lines:
        print(line)
    if plan.corpus_prepared_s:
        print(f"corpus: prepared again by this dry run in {plan.corpus_prepared_s:,.1f} s (its inputs, settings, needle rules or "
              "model packages changed since the store was prepared); the run will reuse it")
    print(f"calls per item: {', '.join(f'{k}={v}' for k, v in plan.calls_per_item.items()) or '-'}")
    print(f"at most {plan.upper_bound_items:,} items = {plan.upper_bound_calls:,} calls still to make")
    print(
        f"cache answers {plan.cache_answered_calls:,} of the {plan.cache_checked_calls:,} calls of each open cell's "
        "first window (its rule's minimum documents)"
    )
    priced = " for the other judges" if plan.unpriced_judges else ""
    print(f"cost upper bound: ${plan.upper_bound_cost_usd:,.2f}{priced} (input tokens bounded by characters/3, output by max_tokens)")
    for name in plan.unpriced_judges:
        print(f"cost unknown: no prices for judge {name} (set its prices = {{ input = ..., output = ... }}, USD per million tokens)")
    for name, batch in plan.batch.items():
        print(
            f"judge {name}: batch mode, priced at {batch.price_factor:g}x the synchronous prices (batch discount, "
            f"included above); about {batch.waves} wave(s) of provider turnaround (polled every {batch.poll_s:g} s)"
        )
    for line in capacity_lines(plan.capacity):
        print(line)
    return 0


def capacity_lines(capacity: list[Any]) -> list[str]:
    """Per judge: wall time and GPU-hours for its calls at the rate used, and where the rate came from."""
    lines = []
    for judge in capacity:
        if judge.calls_per_s is None:
            lines.append(f"judge {judge.judge}: {judge.calls:,} calls; no time estimate (set [judges.capacity] calls_per_s, or run some calls first to measure it)")
            continue
        gpu = f", {judge.gpu_hours:,.2f} GPU-hours on {judge.gpus} GPU(s)" if judge.gpu_hours is not None else ""
        measured = (
            f"; measured {judge.measured_calls_per_s:,.4g} calls/s"
            if judge.measured_calls_per_s is not None and judge.rate_source == "configured"
            else ""
        )
        lines.append(
            f"judge {judge.judge}: {judge.calls:,} calls at {judge.calls_per_s:,.4g} calls/s ({judge.rate_source}{measured}) "
            f"= {judge.wall_hours:,.2f} h wall{gpu}"
        )
    if len(lines) > 1:
        lines.append("judges run side by side: the run's wall time is about the longest judge's")
    return lines


def main(args: argparse.Namespace) -> int:
    from engine.config import load_config
    from engine.contracts import AdapterConfigError

    config = load_config(args.config)  # a bad config fails before numpy, the store or the adapters load
    try:
        return _run(args, config)
    except AdapterConfigError as exc:  # a judge's table in this file is wrong: say which file, once
        if str(exc).startswith(f"{config.source}: "):
            raise
        raise AdapterConfigError(f"{config.source}: {exc}") from None


# The young generation's collection threshold while a run goes (CPython's default: 700).
GC_YOUNG_THRESHOLD = 10_000


def _quiet_gc() -> None:
    """Fewer cyclic-GC passes during a run. Its calls allocate containers at
    a high rate (requests, responses, rows), so with CPython's default
    thresholds the collector runs hundreds of times per few thousand calls,
    and its full passes walk every module's objects (benchmarks/RESULTS.md,
    "A whole run's CPU, phase by phase"). The objects made so far (modules,
    the config) are frozen out of the collector, and the young generation is
    collected every GC_YOUNG_THRESHOLD allocations. Garbage without cycles is
    freed at once either way; cycles still are, a little later. Only when
    the process is this command's (engine.cli.main from the command line):
    an in-process caller's collector is left alone."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, middle, old)


def _run(args: argparse.Namespace, config: ExperimentConfig) -> int:
    import msgspec

    from engine.run.runner import RunSummary, plan_experiment

    if getattr(args, "whole_process", False):
        _quiet_gc()
    resume = f"resume with: needlejudge run {shlex.quote(args.config)}"
    try:
        if args.dry_run:
            return _print_plan(plan_experiment(config, replace=args.replace), as_json=args.json)
        summary, stopped = _run_stoppable(config, quiet=args.quiet, replace=args.replace, executor=executor_for(args))
    except Exception as exc:
        message = _store_failure(exc, config.store, config.output)
        if message is None:
            raise
        print(f"needlejudge run: error: {message}" + ("" if args.dry_run else f"; {resume}"), file=sys.stderr)
        return 2
    if summary is None:
        print(
            f"needlejudge run: stopped by {stopped.signal}: everything answered before the stop is committed; "
            f"{stopped.fate()}; {resume}",
            file=sys.stderr,
        )
        return 128 + signal.Signals[stopped.signal].value
    assert isinstance(summary, RunSummary)
    if stopped.signal:  # it came as the run was finishing (the last calls, the export): it finished first
        print(f"needlejudge run: {stopped.signal} arrived as the run was finishing; it finished first: its results are "
              "complete and exported", file=sys.stderr)
    if args.json:
        print(json.dumps(msgspec.to_builtins(summary), indent=2))
        return 0
    from engine.run.summary import rows_sentence

    print(f"run {summary.run_id}: {summary.cells:,} cells, {rows_sentence(summary)}")
    print(
        f"calls: {summary.calls_network:,} made, {summary.calls_failed:,} of them failed and asked again, "
        f"{summary.items_dropped:,} item(s) judged past their cell's stopping point (kept in the cache); "
        f"${summary.cost_usd_run:,.4f} this run, ${summary.cost_usd_results:,.4f} in the results; {summary.seconds:,.1f} s"
    )
    print(f"statuses: {summary.status_counts}; cells ended by: {summary.stop_reasons}")
    if summary.batch_waves:
        print(f"batch judges: {summary.batch_waves:,} wave(s), {summary.batches_submitted:,} batch(es) submitted")
    if summary.gate_holds:
        print(f"prefix gate: items held back {summary.gate_holds:,} time(s) for a call sharing their prefix")
    print(f"results: {summary.results_jsonl}" + (f", {summary.results_parquet}" if summary.results_parquet else ""))
    if summary.parquet_note:
        print(f"note: {summary.parquet_note}")
    print(f"manifest: {summary.manifest}")
    return 0
