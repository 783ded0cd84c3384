"""Wires a config to a run: store → corpus → prompts → design → adapters →
scheduler (with the call cache and its writer) → exported results.

Public entry points:

    config = load_config("experiment.toml")
    summary = run_experiment(config, quiet=True)        # blocking
    summary = await arun_experiment(config)              # inside an event loop
    plan = plan_experiment(config)                       # the --dry-run report
"""

from __future__ import annotations

import datetime as _dt
import math
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import msgspec

from engine import __version__
from engine.cache import CallCache, GroupCommitWriter
from engine.config import ExperimentConfig, dump_config
from engine.contracts import ConfigError, Prompt
from engine.design import Design
from engine.results import (
    MANIFEST_JSON,
    RESULTS_JSONL,
    RESULTS_PARQUET,
    RUNS_DB,
    export_jsonl,
    jsonl_to_parquet,
    load_cell_states,
    manifest_key,
    run_id_for,
    write_manifest,
)
from engine.scheduler import FailurePolicy, Progress, Scheduler
from engine.store import Store


class RunSummary(msgspec.Struct, kw_only=True):
    run_id: str
    output: str
    results_jsonl: str
    results_parquet: str | None
    manifest: str
    started_at: str
    finished_at: str
    seconds: float
    cells: int
    cells_reused: int  # ended in an earlier run of the same experiment
    rows: int  # rows exported (every judged document, failures included)
    rows_reused: int
    items_judged: int  # items completed in this run (network or cache)
    calls_network: int
    calls_cached: int
    items_dropped: int  # completions past a cell's stopping point (calls kept in the cache)
    calls_failed: int  # transient failures in this run (their items stayed pending, asked again)
    failures_by_kind: dict[str, int]
    status_counts: dict[str, int]
    stop_reasons: dict[str, int]
    cost_usd_run: float  # paid in this run
    cost_usd_results: float  # sum over the exported rows
    prompt_tokens: int
    completion_tokens: int
    parquet_note: str = ""


class Experiment:
    """The opened parts of an experiment (store, corpus, prompts, design)."""

    def __init__(self, config: ExperimentConfig, *, prepare_progress: bool = False) -> None:
        from engine.pairs import Corpus, document_order
        from engine.prepare import prepare_corpus
        from engine.prompts import load_prompt

        self.config = config
        self.store = Store(config.store)
        try:
            self.corpus_summary = prepare_corpus(
                [Path(p) for p in config.corpus.inputs], self.store, config.corpus.settings, progress=prepare_progress
            )
            self.corpus = Corpus.open(self.store)
            names = sorted({name for judge in config.judges for name in config.judge_prompts(judge)})
            self.prompts: dict[str, Prompt] = {}
            for name in names:
                try:
                    self.prompts[name] = load_prompt(name)
                except ConfigError as exc:
                    raise ConfigError(f"{config.source or '<config>'}: prompts: {exc}") from None
            self.prompt_versions = {name: prompt.version for name, prompt in self.prompts.items()}
            self.design = Design(config, self.corpus, self.prompts, document_order=document_order)
            self.run_id = run_id_for(self.identity())
        except BaseException:
            self.store.close()
            raise

    def identity(self) -> dict[str, Any]:
        """Everything that can change the results, and nothing else."""
        c = self.config
        return {
            "schema": "needlejudge-run-v1",
            "corpus": self.corpus_summary.fingerprint,
            "seed": c.seed,
            "needles": list(c.needles),
            "hays": list(c.hays),
            "positions": [list(p) for p in c.position_list()],
            "replicates": c.replicates,
            "stopping": msgspec.to_builtins(c.stopping),
            "checks": msgspec.to_builtins(c.checks),
            "check_position": list(c.check_position()),
            "judges": [
                {
                    "name": j.name,
                    "adapter": j.adapter,
                    "model": j.model,
                    "revision": j.revision,
                    "options": j.options,
                    "prompts": [[p, self.prompts[p].id, self.prompt_versions[p]] for p in c.judge_prompts(j)],
                }
                for j in c.judges
            ],
        }

    def close(self) -> None:
        self.store.close()


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


async def arun_experiment(
    config: ExperimentConfig, *, quiet: bool = True, export: bool = True, failure_policy: FailurePolicy | None = None
) -> RunSummary:
    """Run (or resume, or re-read) an experiment and export its results."""
    from adapters.registry import create_adapter

    started_at, t0 = _now(), time.perf_counter()
    experiment = Experiment(config, prepare_progress=not quiet)
    try:
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
                    failure_policy=failure_policy,
                )
                scheduler.restore()
                # Adapters only for judges with work left: a finished run opens no connection.
                busy = {run.cell.judge for run in scheduler.runs if not run.done}
                for judge in config.judges:
                    if judge.name in busy:
                        adapters[judge.name] = create_adapter(judge.spec())
                if quiet or not busy:
                    await scheduler.run()
                else:
                    from engine.progress import ProgressDisplay

                    async with anyio.create_task_group() as tg:
                        tg.start_soon(ProgressDisplay(progress).run)
                        await scheduler.run()
                        tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                for adapter in adapters.values():
                    await adapter.aclose()
        return _finish(experiment, scheduler, progress, started_at, t0, export=export)
    finally:
        experiment.close()


def run_experiment(
    config: ExperimentConfig, *, quiet: bool = True, export: bool = True, failure_policy: FailurePolicy | None = None
) -> RunSummary:
    """Blocking wrapper of `arun_experiment` (its own event loop)."""
    return anyio.run(lambda: arun_experiment(config, quiet=quiet, export=export, failure_policy=failure_policy))


def _finish(experiment: Experiment, scheduler: Scheduler, progress: Progress, started_at: str, t0: float, *, export: bool) -> RunSummary:
    config = experiment.config
    store = experiment.store
    run_key = bytes.fromhex(experiment.run_id)
    output = Path(config.output)
    jsonl = output / RESULTS_JSONL
    parquet: Path | None = output / RESULTS_PARQUET
    parquet_note = ""
    states = load_cell_states(store, run_key)
    previous = store.get(RUNS_DB, manifest_key(run_key))
    exported = _current_exports(previous, output, progress, len(scheduler.runs), states) if export else None
    if exported is not None:
        # A finished run re-run with nothing new: its stored rows are the ones
        # already exported (same count, files unchanged), so they stay.
        counts = previous["counts"]
        status_counts, cost_results, rows = counts["status_counts"], counts["cost_usd_results"], counts["rows"]
        if RESULTS_PARQUET not in exported:
            parquet, parquet_note = None, previous.get("parquet_note", "")
    else:
        stats = export_jsonl(store, run_key, jsonl if export else None)
        status_counts, cost_results, rows = stats.status_counts, stats.cost_usd, stats.rows
        if export:
            try:
                jsonl_to_parquet(jsonl, parquet)  # type: ignore[arg-type]
            except ConfigError as exc:
                parquet, parquet_note = None, str(exc)
    stop_reasons = Counter(state.reason for state in states.values())
    finished_at = _now()
    summary = RunSummary(
        run_id=experiment.run_id,
        output=str(output),
        results_jsonl=str(jsonl),
        results_parquet=str(parquet) if parquet else None,
        manifest=str(output / MANIFEST_JSON),
        started_at=started_at,
        finished_at=finished_at,
        seconds=time.perf_counter() - t0,
        cells=len(scheduler.runs),
        cells_reused=progress.cells_reused,
        rows=rows,
        rows_reused=progress.rows_reused,
        items_judged=progress.items_done,
        calls_network=progress.calls_network,
        calls_cached=progress.calls_cached,
        items_dropped=progress.items_dropped,
        calls_failed=progress.calls_failed,
        failures_by_kind=dict(progress.failures_by_kind),
        status_counts=dict(status_counts),
        stop_reasons=dict(stop_reasons),
        cost_usd_run=progress.cost_usd,
        cost_usd_results=cost_results,
        prompt_tokens=progress.prompt_tokens,
        completion_tokens=progress.completion_tokens,
        parquet_note=parquet_note,
    )
    manifest = {
        "needlejudge_version": __version__,
        "run_id": experiment.run_id,
        "git_commit": _git_commit(),
        "config_file": config.source,
        "config": dump_config(config),
        "store": config.store,
        "spacy_model": experiment.corpus_summary.model,
        "corpus": {
            "fingerprint": experiment.corpus_summary.fingerprint,
            "documents": len(experiment.corpus.doc_ids),
            "settings": msgspec.to_builtins(experiment.corpus_summary.settings),
        },
        "prompts": {
            name: {"id": p.id, "version": p.version, "scale": p.scale} for name, p in experiment.prompts.items()
        },
        "started_at": started_at,
        "finished_at": finished_at,
        "counts": {
            key: value
            for key, value in msgspec.to_builtins(summary).items()
            if key
            in (
                "cells",
                "cells_reused",
                "rows",
                "rows_reused",
                "items_judged",
                "calls_network",
                "calls_cached",
                "items_dropped",
                "calls_failed",
                "failures_by_kind",
                "status_counts",
                "stop_reasons",
                "cost_usd_run",
                "cost_usd_results",
                "prompt_tokens",
                "completion_tokens",
            )
        },
        "cells": [msgspec.to_builtins(states[n]) for n in sorted(states)],
        "parquet_note": parquet_note,
    }
    if export:
        # what was written, to recognise unchanged exports on a later re-run
        files = [jsonl] + ([parquet] if parquet else [])
        manifest["exports"] = {"output": str(output.resolve()), "files": {f.name: f.stat().st_size for f in files}}
        manifest["exports_reused"] = exported is not None
        write_manifest(output / MANIFEST_JSON, manifest)
    store.put(RUNS_DB, manifest_key(run_key), manifest)
    return summary


def _current_exports(previous: Any, output: Path, progress: Progress, cells: int, states: dict[int, Any]) -> dict[str, int] | None:
    """The files of the last export if they still hold this run's results:
    every cell had ended before this invocation, nothing was written since,
    the stored rows number what was exported, and the files at this output
    are there with the sizes written. None otherwise (export again)."""
    if not isinstance(previous, dict) or not isinstance(previous.get("exports"), dict):
        return None
    if progress.cells_reused != cells or progress.rows_written or progress.calls_network:
        return None
    exports = previous["exports"]
    files = exports.get("files") or {}
    if exports.get("output") != str(output.resolve()) or RESULTS_JSONL not in files:
        return None
    if previous.get("counts", {}).get("rows") != sum(state.rows for state in states.values()):
        return None
    for name, size in files.items():
        path = output / name
        if not path.is_file() or path.stat().st_size != size:
            return None
    return files


# ---------------------------------------------------------------------------
# Dry run


class PlanReport(msgspec.Struct, kw_only=True):
    run_id: str
    cells: int
    cells_ended: int  # ended in an earlier run of this experiment
    documents: int  # documents in the prepared corpus
    calls_per_item: dict[str, int]  # per prompt
    upper_bound_items: int  # items still to judge at most (sum over open cells of min(cap, documents))
    upper_bound_calls: int
    cache_answered_calls: int  # of the first-window items of each open cell (see plan_experiment)
    cache_checked_calls: int
    upper_bound_cost_usd: float
    est_tokens_per_call: dict[str, int]  # per judge/prompt: ceil(prompt chars / 3) + max_tokens


def plan_experiment(config: ExperimentConfig, *, window_docs: int | None = None) -> PlanReport:
    """The `--dry-run` report, without any network call.

    - upper bound: each open cell consumes at most min(its rule's document
      cap, the documents at its position) items, minus what it already
      consumed; times the calls per item of its prompt.
    - cache answered: for each open cell, the items of its first window —
      the `window_docs` documents from where it stands (default: the rule's
      minimum documents, which any run must judge) — are built and their
      calls looked up in the cache; reported as answered / checked calls.
    - cost bound: per call ceil(prompt characters / 3) input tokens (English
      runs ~4 characters per token, so this overestimates) plus the prompt's
      max_tokens output, at the judge's prices, for every call of the upper
      bound (cached calls are not subtracted: it stays a bound).
    """
    experiment = Experiment(config)
    try:
        design = experiment.design
        cache = CallCache(experiment.store)
        scheduler = Scheduler(
            design, cache=cache, writer=None, adapters={}, run_id=experiment.run_id, prompt_versions=experiment.prompt_versions  # type: ignore[arg-type]
        )
        scheduler.restore()
        calls_per_item: dict[str, int] = {}
        est_tokens: dict[str, int] = {}
        answered = checked = items_bound = calls_bound = 0
        cost = 0.0
        for run in scheduler.runs:
            if run.done:
                continue
            cell = run.cell
            judge = design.judges[cell.judge]
            remaining = max(0, min(run.cap, run.limit) - run.rule.n)
            items_bound += remaining
            probe_docs = window_docs if window_docs is not None else max(1, run.min_docs - run.rule.n)
            first = None
            probed = 0
            doc = run.next_doc
            while probed < probe_docs and doc < run.limit:
                item = design.item(cell, doc)
                doc += 1
                if item is None:
                    continue
                probed += 1
                first = first or item
                hits = cache.get_many(item.keys)
                checked += len(hits)
                answered += sum(hit is not None for hit in hits)
            if first is None:
                continue
            per_item = len(first.requests)
            calls_per_item[cell.prompt] = per_item
            calls = remaining * per_item
            calls_bound += calls
            tokens_in = [math.ceil(sum(len(m.content) for m in r.messages) / 3) for r in first.requests]
            tokens_out = [r.decoding.max_tokens for r in first.requests]
            est_tokens[f"{cell.judge}/{cell.prompt}"] = (sum(tokens_in) + sum(tokens_out)) // per_item
            prices = judge.prices
            per_item_cost = (sum(tokens_in) * prices.input + sum(tokens_out) * prices.output) / 1e6
            cost += per_item_cost * remaining
        return PlanReport(
            run_id=experiment.run_id,
            cells=len(scheduler.runs),
            cells_ended=sum(run.done for run in scheduler.runs),
            documents=len(experiment.corpus.doc_ids),
            calls_per_item=calls_per_item,
            upper_bound_items=items_bound,
            upper_bound_calls=calls_bound,
            cache_answered_calls=answered,
            cache_checked_calls=checked,
            upper_bound_cost_usd=cost,
            est_tokens_per_call=est_tokens,
        )
    finally:
        experiment.close()
