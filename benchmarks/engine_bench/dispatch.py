"""`--only dispatch`: judged calls/s through the warm engine (pair, render,
key, cache miss, adapter, group commit, stopping, rows; `run_experiment` in
this process) against the fake provider server with zero latency (its own
process), vs a bare aiohttp loop posting the same bodies and vs the official
`openai` SDK; interleaved rounds, medians and each round's own ratio."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from pathlib import Path

import anyio

from engine_bench.common import (
    CELLS,
    FakeServerProcess,
    bare_aiohttp,
    config_for,
    experiment_text,
    fake_judge,
    fresh_store,
    openai_sdk_bodies,
    timed_cpu,
)
from engine.config import ExperimentConfig



def design_requests(config: ExperimentConfig, limit: int) -> list:
    """The first `limit` requests the engine would send (same items, same bodies)."""
    from engine.run.runner import Experiment

    experiment = Experiment(config)
    try:
        design = experiment.design
        per_cell = config.stopping.n
        out = []
        for cell in design.cells:
            doc = taken = 0
            while taken < per_cell and doc < design.doc_limit(cell):
                item = design.item(cell, doc)
                doc += 1
                if item is not None:
                    out.extend(item.requests)
                    taken += 1
            if len(out) >= limit:
                break
        return out[:limit]
    finally:
        experiment.close()


def engine_round(bench_dir: Path, url: str, calls: int, concurrency: int, n_per_cell: int) -> tuple[float, float, int]:
    """(wall s, CPU s with the commit process, calls made) of one warm-engine run
    (`run_experiment` in this process, no exports) against the fake server."""
    from engine.run.runner import run_experiment

    store = fresh_store(bench_dir, "dispatch-store")
    judge = fake_judge(url, concurrency)
    config = config_for(experiment_text(store=store, output=bench_dir / "dispatch-out", n=n_per_cell, replicates=1, judge=judge))
    times0, t0 = os.times(), time.perf_counter()
    summary = run_experiment(config, quiet=True, export=False)
    wall, times1 = time.perf_counter() - t0, os.times()
    # this process + its reaped children: the run's commit process (the fake server is not reaped yet)
    cpu = sum(times1[:4]) - sum(times0[:4])
    assert summary.calls_network + summary.calls_cached >= calls, summary  # (i,j)=(0,0): orig and rand hay are one request
    return wall, cpu, summary.calls_network


def bench_dispatch(bench_dir: Path, calls: int, concurrency: int, rounds: int) -> dict:
    from adapters.openai import ChatCompletionsDialect

    cells = CELLS
    n_per_cell = max(1, calls // cells)
    calls = cells * n_per_cell
    results: dict[str, list[tuple[float, float, int]]] = {"engine": [], "aiohttp": [], "openai_sdk": []}
    with FakeServerProcess() as server:
        probe = config_for(experiment_text(store=bench_dir / "corpus", output=bench_dir / "unused", n=n_per_cell, replicates=1, judge=fake_judge(server.url, concurrency)))
        requests = design_requests(probe, calls)
        dialect = ChatCompletionsDialect("openai-compatible", f"{server.url}/v1/chat/completions", "local-sim", max_tokens_field="max_tokens", structured_outputs="structured_outputs")
        bodies = [dialect.url_and_body(r)[1] for r in requests]
        url = f"{server.url}/v1/chat/completions"
        # warm-up: imports (the corpus fingerprint imports spaCy once), connections, page cache
        anyio.run(bare_aiohttp, url, bodies[:2000], concurrency)
        engine_round(bench_dir, server.url, cells, concurrency, 1)
        asyncio.run(openai_sdk_bodies(server.url, bodies[:500], concurrency))
        for _ in range(rounds):
            wall, cpu = timed_cpu(lambda: anyio.run(bare_aiohttp, url, bodies, concurrency))
            results["aiohttp"].append((wall, cpu, len(bodies)))
            results["engine"].append(engine_round(bench_dir, server.url, calls, concurrency, n_per_cell))
            wall, cpu = timed_cpu(lambda: asyncio.run(openai_sdk_bodies(server.url, bodies, concurrency)))
            results["openai_sdk"].append((wall, cpu, len(bodies)))
            print({k: [f"{n / w:,.0f}/s" for w, _, n in v] for k, v in results.items()}, flush=True)
        stats = server.stats()
    rate = {k: statistics.median(n / w for w, _, n in v) for k, v in results.items()}
    cpu_us = {k: statistics.median(c / n * 1e6 for _, c, n in v) for k, v in results.items()}
    # Each round runs the three back to back: a round's own ratio is immune to the
    # box's drift between rounds (this 2-core box's speed wanders by +-10%).
    def by_round(series: str) -> list[float]:
        return [(e[2] / e[0]) / (a[2] / a[0]) for e, a in zip(results[series], results["aiohttp"])]

    return {
        "calls_per_round": calls,
        "concurrency": concurrency,
        "rounds": rounds,
        "calls_per_s": rate,
        "client_cpu_us_per_call": cpu_us,
        "engine_vs_aiohttp": rate["engine"] / rate["aiohttp"],
        "engine_vs_aiohttp_by_round": by_round("engine"),
        "engine_vs_aiohttp_paired_median": statistics.median(by_round("engine")),
        "engine_vs_openai_sdk": rate["engine"] / rate["openai_sdk"],
        "server_requests": stats["requests"],
        "server_repeated_completions": stats["repeated_completions"],
    }
