"""Capacity planning for the dry run: wall time and GPU-hours per judge.

A judge's throughput (calls/s) is either configured (`[judges.capacity]`
`calls_per_s`, the fleet the user plans to run on) or measured: the
uncached calls of that judge already in the store for this run, divided by
the time at least one of them was in flight (the union of their
[started_at, finished_at] intervals, so gaps between sessions do not count).
Configured wins when both exist (the fleet may have changed since the
measurement); both are reported. GPUs come from `capacity.gpus`, or for a
`vllm` judge from tensor x pipeline x data parallel sizes; API judges
have none, so no GPU-hours.
"""

from __future__ import annotations

import math

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from engine.config import Capacity

MIN_MEASURED_CALLS = 50  # fewer observed calls than this give no measured rate


class JudgeCapacity(msgspec.Struct, kw_only=True):
    judge: str
    calls: int  # upper bound of calls still to make
    calls_per_s: float | None  # the rate used (None: no estimate)
    rate_source: str  # "configured", "measured (N calls)" or "none"
    measured_calls_per_s: float | None
    gpus: int | None
    wall_hours: float | None
    gpu_hours: float | None


def busy_seconds(intervals: Iterable[tuple[float, float]]) -> float:
    """Length of the union of [start, end] intervals."""
    total = 0.0
    current_start = current_end = None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start  # type: ignore[operator]
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None:
        total += current_end - current_start  # type: ignore[operator]
    return total


def measured_rate(intervals: list[tuple[float, float]]) -> float | None:
    """Observed calls/s of a judge's calls: count over busy time (None when too few to say)."""
    valid = [(s, e) for s, e in intervals if s > 0 and e >= s]
    busy = busy_seconds(valid)
    if len(valid) < MIN_MEASURED_CALLS or busy <= 0:
        return None
    return len(valid) / busy


def judge_gpus(adapter: str, options: Mapping[str, Any], capacity: Capacity | None) -> int | None:
    if capacity is not None and capacity.gpus is not None:
        return capacity.gpus
    if adapter == "vllm":
        sizes = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size")
        return math.prod(int(options.get(size, 1)) for size in sizes)
    return None


def estimate(judge: str, calls: int, *, configured: float | None, measured: float | None, measured_calls: int, gpus: int | None) -> JudgeCapacity:
    """Wall hours = calls / rate / 3600; GPU-hours = wall hours x GPUs."""
    if configured is not None:
        rate, source = configured, "configured"
    elif measured is not None:
        rate, source = measured, f"measured ({measured_calls:,} calls)"
    else:
        rate, source = None, "none"
    wall = calls / rate / 3600 if rate else None
    return JudgeCapacity(
        judge=judge,
        calls=calls,
        calls_per_s=rate,
        rate_source=source,
        measured_calls_per_s=measured,
        gpus=gpus,
        wall_hours=wall,
        gpu_hours=wall * gpus if wall is not None and gpus is not None else None,
    )


def observed_intervals(store: Any, run_id: bytes, cache: Any) -> dict[str, list[tuple[float, float]]]:
    """Per judge, the [started_at, finished_at] of the calls this run made over the network (not cache hits)."""
    from engine.run.results import iter_rows

    keys_by_judge: dict[str, list[bytes]] = {}
    for row in iter_rows(store, run_id):
        if not row.cached:
            keys_by_judge.setdefault(row.judge, []).extend(bytes.fromhex(key) for key in row.cache_keys)
    intervals: dict[str, list[tuple[float, float]]] = {}
    for judge, keys in keys_by_judge.items():
        unique = list(dict.fromkeys(keys))
        hits = cache.get_many(unique)
        intervals[judge] = [(hit.started_at, hit.finished_at) for hit in hits if hit is not None]
    return intervals
