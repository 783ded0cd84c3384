"""The end of a run: its exports, its summary and its manifest, one job each.

- `export_results`: writes results.jsonl and results.parquet, unless the
  files of the last export still hold this run's results (a finished run
  re-run with nothing new keeps them untouched: `reusable_exports`).
- `summarize`: the RunSummary the CLI prints (counts of this invocation
  and of the exported rows).
- `manifest_for`: everything needed to reproduce and audit the run; its
  counts are the summary's `RunCounts` fields.
"""

from __future__ import annotations

import datetime as _dt
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from engine import __version__
from engine.config import dump_config
from engine.contracts import ConfigError
from engine.run.counters import Progress
from engine.run.results import (
    MANIFEST_JSON,
    RESULTS_JSONL,
    RESULTS_PARQUET,
    RUNS_DB,
    CellState,
    export_jsonl,
    jsonl_to_parquet,
    load_cell_states,
    manifest_key,
    remove_stale_exports,
    write_manifest,
)

if TYPE_CHECKING:
    from engine.run.experiment import Experiment


class RunCounts(msgspec.Struct, kw_only=True):
    """The counts a run reports (in the summary and the manifest)."""

    cells: int
    cells_reused: int  # ended in an earlier run of the same experiment
    rows: int  # rows exported (every judged document, failures included)
    rows_reused: int
    items_judged: int  # items completed in this run (network or cache) = items_network + items_cached + items_dropped
    # The rows this run added, partitioned: rows = rows_reused + items_network + items_cached
    items_network: int  # a call was made for the row in this run (its `cached` is false)
    items_cached: int  # every answer came from the cache or a twin call (its `cached` is true)
    calls_network: int  # answers received over the network in this invocation (a resumed batch's too)
    calls_cached: int  # cache hits at lookups (an item asked again is looked up again): not a partition
    items_dropped: int  # completions past a cell's stopping point (calls kept in the cache)
    calls_failed: int  # transient failures in this run (their items stayed pending, asked again)
    failures_by_kind: dict[str, int]
    status_counts: dict[str, int]
    stop_reasons: dict[str, int]
    cost_usd_run: float  # paid in this run
    cost_usd_results: float  # sum over the exported rows
    prompt_tokens: int
    completion_tokens: int
    batch_waves: int = 0  # waves of the batch judges (mode = "batch") in this run
    batches_submitted: int = 0
    gate_holds: int = 0  # times the prefix gate held an item back (`prefix_gate = true` judges; 0 without)


def rows_sentence(counts: RunCounts) -> str:
    """The exported rows, each counted once in one bucket."""
    return (f"{counts.rows:,} rows: {counts.items_network:,} judged with calls made in this run, "
            f"{counts.items_cached:,} answered without a new call (cache, or one call shared by identical requests), "
            f"{counts.rows_reused:,} from earlier runs")  # fmt: skip


class RunSummary(RunCounts, kw_only=True):
    run_id: str
    output: str
    results_jsonl: str
    results_parquet: str | None
    manifest: str
    started_at: str
    finished_at: str
    seconds: float
    parquet_note: str = ""


class Exported(msgspec.Struct, kw_only=True):
    """What the exported files hold (or would, with `export=False`)."""

    rows: int
    status_counts: dict[str, int]
    cost_usd: float
    jsonl: Path
    parquet: Path | None
    parquet_note: str = ""
    files: dict[str, int] | None = None  # the reused files (name -> size), if reused


def now_iso() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


class OutputTaken(ConfigError):
    """The output folder holds another run's exported results."""


def check_output(output: str | Path, run_id: str, *, replace: bool) -> None:
    """Refuse to export over another run's results: OutputTaken (one line,
    naming the old run and the flag that replaces it) when `output`'s
    manifest.json names a run other than `run_id`, unless `replace`. The
    same run (a resume, a re-run) and a folder without a manifest pass."""
    manifest = Path(output) / MANIFEST_JSON
    if replace or not manifest.is_file():
        return
    try:
        previous = msgspec.json.decode(manifest.read_bytes())
    except (OSError, msgspec.DecodeError):
        previous = None
    old = previous.get("run_id") if isinstance(previous, dict) else None
    if old == run_id:
        return
    if isinstance(old, str):
        config = previous.get("config_file") or "an unknown config"
        held = f"the results of run {old} ({config}, finished {previous.get('finished_at') or 'at an unknown time'})"
    else:
        held = f"a {MANIFEST_JSON} this version cannot read"
    raise OutputTaken(
        f"output folder {output} holds {held}; this run ({run_id}) would replace them. "
        "Run again with --replace to replace them, or set `output` to another folder to keep both"
    )


def git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def reusable_exports(previous: Any, output: Path, progress: Progress, cells: int, states: dict[int, CellState]) -> dict[str, int] | None:
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


def export_results(experiment: Experiment, progress: Progress, cells: int, states: dict[int, CellState], *, export: bool) -> Exported:
    store, output = experiment.store, Path(experiment.config.output)
    run_key = bytes.fromhex(experiment.run_id)
    jsonl, parquet = output / RESULTS_JSONL, output / RESULTS_PARQUET
    previous = store.get(RUNS_DB, manifest_key(run_key))
    files = reusable_exports(previous, output, progress, cells, states) if export else None
    if files is not None:
        # A finished run re-run with nothing new: its stored rows are the ones
        # already exported (same count, files unchanged), so they stay.
        counts = previous["counts"]
        kept = parquet if RESULTS_PARQUET in files else None
        note = "" if kept else previous.get("parquet_note", "")
        return Exported(rows=counts["rows"], status_counts=counts["status_counts"], cost_usd=counts["cost_usd_results"],
                        jsonl=jsonl, parquet=kept, parquet_note=note, files=files)
    stats = export_jsonl(store, run_key, jsonl if export else None)
    exported = Exported(rows=stats.rows, status_counts=stats.status_counts, cost_usd=stats.cost_usd, jsonl=jsonl, parquet=parquet)
    if export:
        try:
            jsonl_to_parquet(jsonl, parquet)
        except ConfigError as exc:
            exported.parquet, exported.parquet_note = None, str(exc)
    return exported


def summarize(experiment: Experiment, progress: Progress, cells: int, states: dict[int, CellState], exported: Exported,
              started_at: str, t0: float) -> RunSummary:
    output = Path(experiment.config.output)
    return RunSummary(
        run_id=experiment.run_id,
        output=str(output),
        results_jsonl=str(exported.jsonl),
        results_parquet=str(exported.parquet) if exported.parquet else None,
        manifest=str(output / MANIFEST_JSON),
        started_at=started_at,
        finished_at=now_iso(),
        seconds=time.perf_counter() - t0,
        cells=cells,
        cells_reused=progress.cells_reused,
        rows=exported.rows,
        rows_reused=progress.rows_reused,
        items_judged=progress.items_done,
        items_network=progress.items_network,
        items_cached=progress.items_cached,
        calls_network=progress.calls_network,
        calls_cached=progress.calls_cached,
        items_dropped=progress.items_dropped,
        calls_failed=progress.calls_failed,
        failures_by_kind=dict(progress.failures_by_kind),
        status_counts=dict(exported.status_counts),
        stop_reasons=dict(Counter(state.reason for state in states.values())),
        cost_usd_run=progress.cost_usd,
        cost_usd_results=exported.cost_usd,
        prompt_tokens=progress.prompt_tokens,
        completion_tokens=progress.completion_tokens,
        batch_waves=progress.batch_waves,
        batches_submitted=progress.batches_submitted,
        gate_holds=progress.gate_holds,
        parquet_note=exported.parquet_note,
    )


def manifest_for(experiment: Experiment, summary: RunSummary, states: dict[int, CellState]) -> dict[str, Any]:
    config = experiment.config
    everything = msgspec.to_builtins(summary)
    return {
        "needlejudge_version": __version__,
        "run_id": experiment.run_id,
        "git_commit": git_commit(),
        "config_file": config.source,
        "config": dump_config(config),
        "store": config.store,
        "spacy_model": experiment.corpus_summary.model,
        "corpus": {
            "fingerprint": experiment.corpus_summary.fingerprint,
            "documents": len(experiment.corpus.doc_ids),
            # which of them the cells drew from (engine.run.document_set), and in words for the report
            "cell_documents": {**msgspec.to_builtins(experiment.design.coverage), "lines": experiment.design.coverage.lines()},
            "settings": msgspec.to_builtins(experiment.corpus_summary.settings),
        },
        "prompts": {name: {"id": p.id, "version": p.version, "scale": p.scale} for name, p in experiment.prompts.items()},
        "panels": experiment.panels_manifest(),
        "started_at": summary.started_at,
        "finished_at": summary.finished_at,
        "counts": {name: everything[name] for name in RunCounts.__struct_fields__},
        "cells": [msgspec.to_builtins(states[n]) for n in sorted(states)],
        "parquet_note": summary.parquet_note,
    }


def finish_run(experiment: Experiment, progress: Progress, cells: int, started_at: str, t0: float, *, export: bool) -> RunSummary:
    """Export, summarise and record the run's manifest (in the store, and
    beside the exports when it exports)."""
    store = experiment.store
    if export:
        remove_stale_exports(Path(experiment.config.output))  # a killed export's temp files
    states = load_cell_states(store, bytes.fromhex(experiment.run_id))
    exported = export_results(experiment, progress, cells, states, export=export)
    summary = summarize(experiment, progress, cells, states, exported, started_at, t0)
    manifest = manifest_for(experiment, summary, states)
    if export:
        # what was written, to recognise unchanged exports on a later re-run
        files = [exported.jsonl] + ([exported.parquet] if exported.parquet else [])
        output = Path(experiment.config.output)
        manifest["exports"] = {"output": str(output.resolve()), "files": {f.name: f.stat().st_size for f in files}}
        manifest["exports_reused"] = exported.files is not None
        write_manifest(output / MANIFEST_JSON, manifest)
    store.put(RUNS_DB, manifest_key(bytes.fromhex(experiment.run_id)), manifest)
    return summary
