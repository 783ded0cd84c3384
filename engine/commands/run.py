"""`needlejudge run CONFIG [--dry-run] [--quiet]`."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

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

    from engine.runner import plan_experiment, run_experiment

    if args.dry_run:
        plan = plan_experiment(config)
        if args.json:
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
        return 0
    summary = run_experiment(config, quiet=args.quiet)
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
