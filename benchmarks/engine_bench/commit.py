"""`--only commit`: the engine at a judge's rate (fake-server latencies) and
at the server's max, writer = the commit process vs an in-process writer
thread doing the same puts: calls/s, CPU per call, share of a core."""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

from engine_bench.common import CELLS, FakeServerProcess
from engine_bench.dispatch import engine_round
from engine.cache.store import Store



class InThreadCommitter:
    """The writer before engine.cache.commit_process: the writer thread does the
    puts itself (same sort, same transactions), in this process."""

    def __init__(self, store_path: Path) -> None:
        import gc

        # the run's own Store: LMDB forbids opening one environment twice in a process
        # (the open one: a closed Store of an earlier round at the same path may not be collected yet)
        self.store = next(o for o in gc.get_objects() if isinstance(o, Store) and o.path == Path(store_path) and _is_open(o))
        self.pid = os.getpid()

    def commit(self, items: list[tuple[str, bytes, bytes]]) -> None:
        self.store.put_batch_raw(sorted(items, key=lambda item: (item[0], item[1])))

    def close(self, timeout: float = 60.0) -> int:
        return 0


def _is_open(store: Store) -> bool:
    import lmdb

    try:
        store.env.info()
    except lmdb.Error:
        return False
    return True


class LatencyServerProcess(FakeServerProcess):
    def __init__(self, latency: str) -> None:
        super().__init__()
        self.latency = latency

    def command(self) -> list[str]:
        return [sys.executable, "-m", "engine.cli", "fake-server", "--port", str(self.port), "--latency", self.latency]


def bench_commit(bench_dir: Path, concurrency: int, rounds: int, rates: list[str]) -> dict:
    """The engine's calls/s and CPU per call (with its writer) at a judge's
    latency, writer = commit process vs an in-process writer thread."""
    import engine.cache.call_cache

    real = engine.cache.call_cache.CommitProcess
    cells = CELLS
    out: dict[str, dict] = {}
    for latency in rates:
        # about 16 s of calls per round at the rate the latency allows (concurrency / latency)
        expected_rate = 2000.0 if latency == "zero" else concurrency / float(latency.split(":")[1])
        n_per_cell = max(1, round(expected_rate * 16 / cells))
        series: dict[str, list[tuple[float, float, int]]] = {"commit_process": [], "writer_thread": []}
        with LatencyServerProcess(latency) as server:
            engine_round(bench_dir, server.url, cells, concurrency, 1)  # warm-up
            for r in range(rounds):
                for name in ("commit_process", "writer_thread") if r % 2 == 0 else ("writer_thread", "commit_process"):
                    engine.cache.call_cache.CommitProcess = real if name == "commit_process" else InThreadCommitter  # type: ignore[misc]
                    try:
                        series[name].append(engine_round(bench_dir, server.url, cells * n_per_cell, concurrency, n_per_cell))
                    finally:
                        engine.cache.call_cache.CommitProcess = real  # type: ignore[misc]
                print(latency, {k: [f"{n / w:,.0f}/s {c / n * 1e6:,.0f} µs" for w, c, n in v] for k, v in series.items()}, flush=True)
        out[latency] = {
            name: {
                "calls_per_s": statistics.median(n / w for w, _, n in v),
                "cpu_us_per_call": statistics.median(c / n * 1e6 for _, c, n in v),
                "cpu_share_of_a_core": statistics.median(c / w for w, c, _ in v),
            }
            for name, v in series.items()
        }
        print(f"commit {latency}: {json.dumps(out[latency])}", flush=True)
    return out
