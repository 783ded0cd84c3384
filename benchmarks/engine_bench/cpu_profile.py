"""`--only profile`: cProfile of the warm engine's own CPU per call on the
dispatch workload."""

from __future__ import annotations

from pathlib import Path

from engine_bench.common import CELLS, FakeServerProcess
from engine_bench.dispatch import engine_round



def bench_profile(bench_dir: Path, calls: int, concurrency: int) -> str:
    import cProfile
    import io
    import pstats

    cells = CELLS
    n = max(1, calls // cells)
    with FakeServerProcess() as server:
        profiler = cProfile.Profile()
        profiler.enable()
        wall, cpu, made = engine_round(bench_dir, server.url, cells * n, concurrency, n)
        profiler.disable()
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(25)
    return f"{made} calls, {wall:.1f} s wall, {cpu / made * 1e6:.0f} µs CPU per call (under cProfile)\n" + buffer.getvalue()
