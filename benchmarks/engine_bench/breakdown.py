"""`--only breakdown`: a whole `needlejudge run` (the `whole` workload) in an
instrumented process: CPU (time.process_time) of each phase: interpreter,
imports, config, store, corpus, design, restore, the dispatch loop, export,
cyclic GC, exit, the commit process."""

from __future__ import annotations

import json
import os
import statistics
import sys
from pathlib import Path

from engine_bench.common import CELLS, ROOT
from engine_bench.whole import JsonJudgeServer, process_env, timed_process, whole_run, whole_run_config

# Runs `needlejudge run` in this process with the run's phases wrapped (CPU
# of the whole process, time.process_time, so the writer thread is in the
# dispatch loop); the commit process is in the reaped children's CPU.
BREAKDOWN_CHILD = r"""
import gc, json, os, resource, sys, time
cpu = time.process_time
marks = {"interpreter + site": cpu()}
phases = {}
collector = {"passes": 0, "cpu": 0.0, "full passes": 0, "_t": 0.0}

def on_gc(phase, info):
    if phase == "start":
        collector["_t"] = cpu()
    else:
        collector["passes"] += 1
        collector["full passes"] += info["generation"] == 2
        collector["cpu"] += cpu() - collector["_t"]

gc.callbacks.append(on_gc)
t = cpu()
import engine.cli, engine.commands.run, engine.config, engine.run.runner, engine.registry, engine.corpus.prepare, engine.corpus.pairs
import engine.prompts, engine.run.results, engine.run.summary, engine.run.scheduler, engine.cache.call_cache, engine.run.experiment
import adapters.openai, aiohttp, lmdb, msgspec
marks["imports (engine, aiohttp, numpy, msgspec, lmdb, anyio)"] = cpu() - t

def timed(owner, name, label, is_async=False):
    raw = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    fn = raw.__func__ if isinstance(raw, classmethod) else raw
    def add(t0):
        phases[label] = phases.get(label, 0.0) + cpu() - t0
    if is_async:
        async def wrapper(*a, **k):
            t0 = cpu()
            try:
                return await fn(*a, **k)
            finally:
                add(t0)
    else:
        def wrapper(*a, **k):
            t0 = cpu()
            try:
                return fn(*a, **k)
            finally:
                add(t0)
    setattr(owner, name, classmethod(wrapper) if isinstance(raw, classmethod) else wrapper)

ex, rs, sc = engine.run.experiment, engine.run.summary, engine.run.scheduler
timed(engine.config, "load_config", "config")
timed(ex.Experiment, "__init__", "experiment: store, corpus, prompts, design, run id")
timed(ex, "Store", "  store open")
timed(engine.corpus.prepare, "prepare_corpus", "  corpus fingerprint (prepared corpus reused)")
timed(engine.corpus.pairs.Corpus, "open", "  corpus open")
timed(engine.prompts, "load_prompt", "  prompts")
timed(ex, "Design", "  design")
timed(ex, "run_id_for", "  run id")
timed(sc.Scheduler, "restore", "scheduler restore (cells, document orders)")
timed(engine.cache.call_cache.GroupCommitWriter, "start_process", "commit process start (this side)")
timed(engine.registry, "create_adapter", "adapter")
timed(sc.Scheduler, "run", "dispatch loop (with the writer thread)", is_async=True)
timed(engine.run.runner, "finish_run", "finish: exports, summary, manifest")
timed(rs, "export_jsonl", "  results.jsonl")
timed(rs, "jsonl_to_parquet", "  results.parquet (with the pyarrow import)")
timed(rs, "write_manifest", "  manifest.json")
timed(rs, "git_commit", "  git rev-parse")

sys.argv = ["needlejudge"] + sys.argv[1:]
code = engine.cli.main()  # the process's own command line, as the console script calls it
children = resource.getrusage(resource.RUSAGE_CHILDREN)
collector.pop("_t")
with open(os.environ["BREAKDOWN_OUT"], "w") as f:
    json.dump({"code": code, "marks": marks, "phases": phases, "process": cpu(), "children": children.ru_utime + children.ru_stime,
               "gc": collector}, f)
sys.exit(code)
"""


def bench_breakdown(bench_dir: Path, calls: int, concurrency: int, rounds: int, engine_root: Path = ROOT) -> dict:
    """CPU ms of each phase of a whole `needlejudge run` (median of `rounds`), and the total seen from outside."""
    n_per_cell = max(1, round(calls / CELLS))
    env = process_env(bench_dir, engine_root)
    out = bench_dir / "breakdown.json"
    series: dict[str, list[float]] = {}
    with JsonJudgeServer() as server:
        whole_run(whole_run_config(bench_dir, server.url, n_per_cell, concurrency), env)  # warm-up
        for _ in range(rounds):
            config = whole_run_config(bench_dir, server.url, n_per_cell, concurrency)
            load = os.getloadavg()[0]
            wall, cpu, stdout = timed_process([sys.executable, "-c", BREAKDOWN_CHILD, "run", str(config), "--quiet", "--json"], dict(env, BREAKDOWN_OUT=str(out)))
            report = json.loads(out.read_text())
            calls_made = json.loads(stdout)["calls_network"]
            row = {**report["marks"], **report["phases"]}
            row["cyclic GC (inside the phases above)"] = report["gc"]["cpu"]
            row["process, at the end of main()"] = report["process"]
            row["commit process (and git)"] = report["children"]
            row["total CPU seen from outside"] = cpu
            row["exit (after main) = total - process - children"] = cpu - report["process"] - report["children"]
            row["wall s"] = wall
            row["calls"] = calls_made
            row["load average (1 min) at start"] = load
            row["GC passes (full)"] = f"{report['gc']['passes']} ({report['gc']['full passes']})"
            for name, value in row.items():
                series.setdefault(name, []).append(value)
            print(f"breakdown round: {cpu:.2f} s CPU, {wall:.2f} s wall, load {load:.1f}", flush=True)
    table = {}
    for name, values in series.items():
        if isinstance(values[0], str):
            table[name] = values
        elif name in ("wall s", "calls", "load average (1 min) at start"):
            table[name] = [round(v, 2) for v in values]
        else:
            table[name + " (ms, median)"] = round(statistics.median(values) * 1000)
    table["engine_root"] = str(engine_root)
    return table
