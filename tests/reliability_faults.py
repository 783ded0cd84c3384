"""The fault matrix (issue 15): one run of a small design per fault scenario
against the fake provider server, resumed until it completes, with its
outcomes counted. Shared by tests/test_reliability_faults.py (a few mixes)
and benchmarks/bench_reliability.py (every kind at 10% and 30%).

Outcomes of the first run, per scenario:
  ok_first      ok at the first attempt
  retried_ok    ok after more than one attempt (the fault was retried)
  refused / unparseable / error:KIND   rows with that status
  pending:KIND  calls that failed transiently after their retries: recorded
                beside the run, the item left pending and asked again
  unfinished    items of the fault-free run with no row after the first run
  scored_failures  rows with a score that is not an ok answer whose raw
                text parses to that score (must be 0)
  crashed       a traceback, or an exit by a signal
then: the resumes needed until a run exits 0 with nothing pending, and
whether the final results equal the fault-free run's (science columns).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from reliability_fixtures import (
    SCIENCE_COLUMNS,
    FakeServerProcess,
    copy_store,
    experiment_toml,
    results,
    run_to_end,
    score_parses,
    store_records,
)

TIMEOUT_S = 0.5  # the judge's timeout in every scenario; a hang lasts longer
HANG_S = 1.5
TRANSIENT_KINDS = ("rate_limit", "rate_limit_bare", "server_error", "bad_gateway", "overloaded", "hang", "reset", "truncated", "malformed")
TERMINAL_KINDS = ("content_filter", "prompt_filter", "unparseable")


def fault(kind: str, rate: float = 0.0, **fields: Any) -> dict[str, Any]:
    """A fake-server Fault as builtins; `bad_gateway` is a 502 server error."""
    if kind == "bad_gateway":
        return {"kind": "server_error", "status": 502, "rate": rate, **fields}
    if kind == "hang":
        return {"kind": kind, "rate": rate, "hang_s": HANG_S, **fields}
    if kind == "rate_limit":  # retry-after: 1 and retry-after-ms: 50
        return {"kind": kind, "rate": rate, "retry_after_s": 0.05, **fields}
    return {"kind": kind, "rate": rate, **fields}


def transient_mix(total: float) -> list[dict[str, Any]]:
    """Every transient kind, sharing `total` (roughly: a request draws each kind)."""
    share = total / len(TRANSIENT_KINDS)
    return [fault(kind, share) for kind in TRANSIENT_KINDS]


def breaker_burst(start: int = 20, length: int = 100) -> list[dict[str, Any]]:
    """Consecutive 500s, long enough to open the adapter's circuit breaker
    (by default 20 failed calls x 4 attempts), then none."""
    return [fault("server_error", schedule=list(range(start, start + length)))]


def failures_beside(store_path: Path) -> Counter[str]:
    """Transient failures recorded beside the run (engine.run.results.iter_failures), by kind."""
    from engine.cache.call_cache import decode_result
    from engine.run.results import RUNS_DB
    from engine.cache.store import Store

    kinds: Counter[str] = Counter()
    with Store(store_path) as store:
        for key, raw in store.items_raw(RUNS_DB):
            if key[8:9] == b"F":  # run_id (8 bytes) + b"F" + cell, document, time
                kinds[decode_result(raw).error_kind] += 1
    return kinds


def item_key(row: dict[str, Any]) -> tuple:
    return tuple(row[c] for c in SCIENCE_COLUMNS[:-2])  # cell columns, doc_id, doc_index


def science_by_item(rows: list[dict[str, Any]]) -> dict[tuple, tuple]:
    return {item_key(row): (row["status"], row["score"]) for row in rows}


def scored_failures(rows: list[dict[str, Any]]) -> int:
    return sum(row["score"] is not None and (row["status"] != "ok" or not score_parses(row)) for row in rows)


def run_scenario(
    server: FakeServerProcess,
    folder: Path,
    source_store: Any,
    *,
    corpus: Path,
    min_chars: float,
    reference: dict[tuple, tuple] | None,
    faults: list[dict[str, Any]],
    rpm: float | None = None,
    seed: int = 1,
    max_resumes: int = 4,
    **design: Any,
) -> dict[str, Any]:
    """Run one scenario on a fresh store; resume (same faults, the server's
    fault counters carry on) until a run exits 0 with nothing pending."""
    store = copy_store(source_store, folder / "store")
    config = folder / "exp.toml"
    config.write_text(experiment_toml(store=store, output=folder / "out", url=server.url, corpus=corpus,
                                      min_chars=min_chars, timeout_s=TIMEOUT_S, **design))
    server.configure(seed=seed, faults=faults, rpm=rpm, rpm_burst=5 if rpm else None)
    code, _, err = run_to_end(config)
    first = list(store_records(store).values())
    outcome: Counter[str] = Counter()
    for row in first:
        if row["status"] == "ok":
            outcome["retried_ok" if row["attempts"] > 1 else "ok_first"] += 1
        elif row["status"] == "error":
            outcome[f"error:{row['error_kind']}"] += 1
        else:
            outcome[row["status"]] += 1
    for kind, count in failures_beside(store).items():
        outcome[f"pending:{kind}"] = count
    seen = {item_key(row) for row in first}
    if reference is not None:
        outcome["unfinished"] = sum(key not in seen for key in reference)
    crashed = "Traceback" in err or code < 0
    first_stderr = err[-4000:]
    exits = [code]
    messages = [err.strip().splitlines()[-1] if err.strip() else ""]
    resumes = 0
    while code != 0 and resumes < max_resumes:
        resumes += 1
        code, _, err = run_to_end(config)
        crashed = crashed or "Traceback" in err or code < 0
        exits.append(code)
        messages.append(err.strip().splitlines()[-1] if err.strip() else "")
    stats = server.stats()
    final = results(folder / "out" / "results.jsonl") if code == 0 else list(store_records(store).values())
    final_science = science_by_item(final)
    failed_rows = [row for row in first + final if row["status"] != "ok"]
    report: dict[str, Any] = {
        "outcomes": dict(outcome),
        "injected": {k: v for k, v in stats["by_outcome"].items() if k not in ("ok",)},
        "requests": stats["requests"],
        "exits": exits,
        "messages": messages,
        "first_stderr": first_stderr,
        "crashed": crashed,
        "resumes": resumes,
        "scored_failures": scored_failures(first) + scored_failures(final),
        "failures_without_raw_text": sum(not row["raw_text"] for row in failed_rows),
        "final_rows": len(final),
        "final_statuses": dict(Counter(row["status"] for row in final)),
    }
    if reference is not None:
        report["same_as_fault_free"] = final_science == reference
        report["differing_items"] = len(set(final_science.items()) ^ set(reference.items()))
        # a failure never changes a score: every ok answer equals the fault-free one for its item
        report["ok_scores_differing"] = sum(
            value[0] == "ok" and key in reference and reference[key] != value for key, value in final_science.items()
        )
    return report
