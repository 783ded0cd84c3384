"""`needlejudge run CONFIG [--dry-run] [--quiet]`."""

from __future__ import annotations

import argparse
import json
import shlex
import signal
import sys
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
    parser.add_argument("--json", action="store_true", help="print the summary / plan as JSON")


def _run_stoppable(config: object, *, quiet: bool) -> tuple[object | None, str]:
    """Run the experiment; SIGTERM (and Ctrl-C, through asyncio's runner)
    cancels it, which commits every answer it holds before returning.
    Returns (summary, "") or (None, the signal's name) after a stop."""
    import asyncio

    import anyio

    from engine.runner import arun_experiment

    stopped_by = ""

    async def stoppable() -> object:
        nonlocal stopped_by
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def on_term() -> None:
            nonlocal stopped_by
            stopped_by = stopped_by or "SIGTERM"
            assert task is not None
            task.cancel()

        try:
            loop.add_signal_handler(signal.SIGTERM, on_term)
        except (ValueError, RuntimeError, NotImplementedError):  # not the main thread: SIGTERM keeps its handler
            return await arun_experiment(config, quiet=quiet)  # type: ignore[arg-type]
        try:
            return await arun_experiment(config, quiet=quiet)  # type: ignore[arg-type]
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    try:
        return anyio.run(stoppable), ""
    except KeyboardInterrupt:
        return None, stopped_by or "SIGINT"
    except asyncio.CancelledError:
        if not stopped_by:
            raise
        return None, stopped_by


def _store_failure(exc: BaseException, store: str) -> str | None:
    """A clear message for a store that cannot be used or written (corrupt,
    foreign, disk full), found in `exc` or the exception groups around it;
    None for anything else."""
    import shutil

    import lmdb

    from engine.cache import CommitError

    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _store_failure(inner, store)
            if found is not None:
                return found
        return None
    try:
        free = f"{shutil.disk_usage(store).free // 1024:,} kB free on its file system"
    except OSError:
        free = "free space unknown"
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
    print(f"calls per item: {', '.join(f'{k}={v}' for k, v in plan.calls_per_item.items()) or '-'}")
    print(f"at most {plan.upper_bound_items:,} items = {plan.upper_bound_calls:,} calls still to make")
    print(
        f"cache answers {plan.cache_answered_calls:,} of the {plan.cache_checked_calls:,} calls of each open cell's "
        "first window (its rule's minimum documents)"
    )
    print(f"cost upper bound: ${plan.upper_bound_cost_usd:,.2f} (input tokens bounded by characters/3, output by max_tokens)")
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
    except AdapterConfigError as exc:  # a judge's table in this file is wrong: say which file
        raise AdapterConfigError(f"{config.source}: {exc}") from None


def _run(args: argparse.Namespace, config: ExperimentConfig) -> int:
    import msgspec

    from engine.runner import RunSummary, plan_experiment

    resume = f"needlejudge run: resume with: needlejudge run {shlex.quote(args.config)}"
    try:
        if args.dry_run:
            return _print_plan(plan_experiment(config), as_json=args.json)
        summary, stopped_by = _run_stoppable(config, quiet=args.quiet)
    except Exception as exc:
        message = _store_failure(exc, config.store)
        if message is None:
            raise
        print(f"needlejudge run: error: {message}" + ("" if args.dry_run else f"\n{resume}"), file=sys.stderr)
        return 1
    if summary is None:
        print(
            f"needlejudge run: stopped by {stopped_by}: everything committed before the stop is kept; "
            f"calls still in flight were abandoned.\n{resume}",
            file=sys.stderr,
        )
        return 128 + signal.Signals[stopped_by].value
    assert isinstance(summary, RunSummary)
    if args.json:
        print(json.dumps(msgspec.to_builtins(summary), indent=2))
        return 0
    print(
        f"run {summary.run_id}: {summary.rows:,} rows ({summary.rows_reused:,} from earlier runs) in {summary.cells:,} cells; "
        f"{summary.calls_network:,} calls made, {summary.calls_cached:,} answered by the cache; "
        f"${summary.cost_usd_run:,.4f} this run, ${summary.cost_usd_results:,.4f} in the results; {summary.seconds:,.1f} s"
    )
    print(f"statuses: {summary.status_counts}; cells ended by: {summary.stop_reasons}")
    print(f"results: {summary.results_jsonl}" + (f", {summary.results_parquet}" if summary.results_parquet else ""))
    if summary.parquet_note:
        print(f"note: {summary.parquet_note}")
    print(f"manifest: {summary.manifest}")
    return 0
