"""The counting every run path must keep (issue 32), checked from a run's
summary, its exported rows and its store: the summary's counters partition
the rows (each row counted once, in one bucket) and the rows' usage counts
each call behind them once (engine.run.usage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engine.cache.call_cache import CallCache
from engine.cache.store import Store


def assert_counts_partition(summary: Any, store: str | Path, *, fresh: bool = False) -> list[dict[str, Any]]:
    """Check the partition and the usage of `summary`'s run; `fresh`: no
    earlier invocation of this run (every row's `cached` is this run's).
    Returns the exported rows."""
    rows = [json.loads(line) for line in Path(summary.results_jsonl).read_text().splitlines()]
    assert summary.rows == len(rows) == summary.rows_reused + summary.items_network + summary.items_cached, summary
    assert summary.items_judged == summary.items_network + summary.items_cached + summary.items_dropped, summary
    if fresh:
        assert summary.rows_reused == 0
        assert sum(not row["cached"] for row in rows) == summary.items_network
    opened = Store(store, readonly=True)
    try:
        keys = list(dict.fromkeys(key for row in rows for key in row["cache_keys"]))
        hits = dict(zip(keys, CallCache(opened).get_many([bytes.fromhex(key) for key in keys])))
    finally:
        opened.close()
    # rows whose calls are all cached (a terminal error is not: made again for each row)
    full = [row for row in rows if all(hits[key] is not None for key in row["cache_keys"])]
    calls = [hits[key] for key in dict.fromkeys(key for row in full for key in row["cache_keys"])]
    assert sum(row["prompt_tokens"] for row in full) == sum(c.usage.prompt_tokens for c in calls)
    assert sum(row["completion_tokens"] for row in full) == sum(c.usage.completion_tokens for c in calls)
    assert sum(row["cost_usd"] for row in full) == pytest.approx(sum(c.cost_usd for c in calls))
    return rows
