"""`--only whole`: a whole `needlejudge run` process (start-up, run and
exports; ~5,000 calls at concurrency 64) against an independent
OpenAI-compatible server whose judge answers in JSON
(benchmarks/json_judge_server.py: Starlette + uvicorn, not our fake
server), vs a bare aiohttp loop posting the same bodies (recorded by the
server from a warm-up run), in this process and as a whole `python`
process of its own, and vs the official `openai` SDK; alternating rounds,
medians. `--engine-root` / `--before-root` run `needlejudge run` from other
checkouts (snapshots) against the same baselines."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import anyio

from engine_bench.common import (
    CELLS,
    ROOT,
    ServerProcess,
    bare_aiohttp,
    experiment_text,
    fresh_store,
    openai_sdk_bodies,
    timed_cpu,
)



class JsonJudgeServer(ServerProcess):
    """benchmarks/json_judge_server.py (Starlette + uvicorn): an independent OpenAI-compatible server."""

    probe = "/stats"

    def __init__(self, record: Path | None = None) -> None:
        super().__init__()
        self.record = record

    def command(self) -> list[str]:
        command = [sys.executable, str(ROOT / "benchmarks" / "json_judge_server.py"), "--port", str(self.port)]
        return command + (["--record", str(self.record)] if self.record is not None else [])


def whole_run_config(bench_dir: Path, url: str, n_per_cell: int, concurrency: int) -> Path:
    """A config file for `needlejudge run`: 800 cells x n documents, bands prompt, a fresh store."""
    store = fresh_store(bench_dir, "whole-store")
    judge = f"""
    [[judges]]
    name = "json-judge"
    adapter = "openai-compatible"
    model = "json-judge"
    base_url = "{url}/v1"
    concurrency = {concurrency}
    timeout_s = 60.0
    """
    path = bench_dir / "whole.toml"
    path.write_text(experiment_text(store=store, output=bench_dir / "whole-out", n=n_per_cell, replicates=1, judge=judge))
    return path


def process_env(bench_dir: Path, root: Path = ROOT) -> dict[str, str]:
    """The environment of a measured whole process: the engine from `root`, and
    Python's bytecode cache on (in BENCH_DIR/pycache, filled by the warm-up), as
    an installed package has it. This sandbox sets PYTHONDONTWRITEBYTECODE=1,
    which would make every run compile the engine's ~50 modules from source."""
    env = dict(os.environ, PYTHONPATH=str(root), PYTHONPYCACHEPREFIX=str(bench_dir / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed_process(command: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and the children it reaped, stdout) of one process,
    started in its PYTHONPATH's checkout (`-m` and `-c` put the working directory first)."""
    before, t0 = os.times(), time.perf_counter()
    out = subprocess.run(command, env=env, cwd=env["PYTHONPATH"], capture_output=True, text=True, check=False)
    wall, after = time.perf_counter() - t0, os.times()
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return wall, cpu, out.stdout


def whole_run(config: Path, env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall s, CPU s, calls made) of one `needlejudge run` process, start-up and exports included
    (CPU: the run and, through it, its commit process)."""
    env = env or process_env(config.parent)
    wall, cpu, out = timed_process([sys.executable, "-m", "engine.cli", "run", str(config), "--quiet", "--json"], env)
    return wall, cpu, json.loads(out)["calls_network"]


# The bare aiohttp loop as a whole process: interpreter, imports, the bodies, the loop.
BARE_PROCESS = """
import asyncio, sys
import aiohttp, msgspec

async def main(url, bodies, concurrency):
    decode = msgspec.json.decode
    headers = {"Content-Type": "application/json"}
    it = iter(bodies)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:
        async def worker():
            for body in it:
                async with session.post(url, data=body, headers=headers) as response:
                    payload = decode(await response.read())
                    assert payload["choices"][0]["message"]["content"]
        await asyncio.gather(*(worker() for _ in range(concurrency)))

with open(sys.argv[2], "rb") as f:
    bodies = f.read().splitlines()
asyncio.run(main(sys.argv[1], bodies, int(sys.argv[3])))
print(len(bodies))
"""


def bare_process(url: str, bodies_file: Path, concurrency: int, env: dict[str, str]) -> tuple[float, float, int]:
    wall, cpu, out = timed_process([sys.executable, "-c", BARE_PROCESS, url, str(bodies_file), str(concurrency)], env)
    return wall, cpu, int(out)


def bench_whole(bench_dir: Path, calls: int, concurrency: int, rounds: int, engine_root: Path = ROOT, before_root: Path | None = None) -> dict:
    n_per_cell = max(1, round(calls / CELLS))
    record = bench_dir / "whole-bodies.jsonl"
    record.unlink(missing_ok=True)
    run_env, bare_env = process_env(bench_dir, engine_root), process_env(bench_dir)
    before_env = process_env(bench_dir, before_root) if before_root is not None else None
    # warm-up (page cache, the .pyc cache) and the bodies the engine sends, recorded by the server
    with JsonJudgeServer(record) as server:
        whole_run(whole_run_config(bench_dir, server.url, n_per_cell, concurrency), run_env)
    bodies = record.read_bytes().splitlines()
    results: dict[str, list[tuple[float, float, int]]] = {"needlejudge_run": [], "aiohttp": [], "aiohttp_process": [], "openai_sdk": []}
    if before_env is not None:  # the same run from the "before" checkout, in the same rounds
        results["needlejudge_run_before"] = []
        with JsonJudgeServer() as server:
            whole_run(whole_run_config(bench_dir, server.url, n_per_cell, concurrency), before_env)  # its .pyc
    with JsonJudgeServer() as server:
        url = f"{server.url}/v1/chat/completions"
        anyio.run(bare_aiohttp, url, bodies[:500], concurrency)
        bare_process(url, record, concurrency, bare_env)
        asyncio.run(openai_sdk_bodies(server.url, bodies[:200], concurrency))

        def bare() -> None:
            wall, cpu = timed_cpu(lambda: anyio.run(bare_aiohttp, url, bodies, concurrency))
            results["aiohttp"].append((wall, cpu, len(bodies)))
            results["aiohttp_process"].append(bare_process(url, record, concurrency, bare_env))

        def engine() -> None:
            runs = [("needlejudge_run", run_env)] + ([("needlejudge_run_before", before_env)] if before_env is not None else [])
            for series, env in runs if len(results["needlejudge_run"]) % 2 == 0 else runs[::-1]:
                results[series].append(whole_run(whole_run_config(bench_dir, server.url, n_per_cell, concurrency), env))

        def sdk() -> None:
            wall, cpu = timed_cpu(lambda: asyncio.run(openai_sdk_bodies(server.url, bodies, concurrency)))
            results["openai_sdk"].append((wall, cpu, len(bodies)))

        for r in range(rounds):  # alternating order: no client always runs on a warmer box
            for step in (bare, engine, sdk) if r % 2 == 0 else (sdk, engine, bare):
                step()
            print({k: [f"{n / w:,.0f}/s" for w, _, n in v] for k, v in results.items()}, flush=True)
    rate = {k: statistics.median(n / w for w, _, n in v) for k, v in results.items()}
    cpu_us = {k: statistics.median(c / n * 1e6 for _, c, n in v) for k, v in results.items()}
    def by_round(baseline: str) -> list[float]:
        return [(e[2] / e[0]) / (a[2] / a[0]) for e, a in zip(results["needlejudge_run"], results[baseline])]

    return {
        "engine_root": str(engine_root),
        "before_root": str(before_root) if before_root is not None else None,
        "calls_per_round": len(bodies),
        "concurrency": concurrency,
        "rounds": rounds,
        "walls_s": {k: [round(w, 2) for w, _, _ in v] for k, v in results.items()},
        "calls_per_s": rate,
        "cpu_us_per_call": cpu_us,
        # by round, for paired comparisons (before and after run in the same rounds)
        "cpu_us_per_call_by_round": {k: [round(c / n * 1e6) for _, c, n in v] for k, v in results.items()},
        "run_vs_aiohttp": rate["needlejudge_run"] / rate["aiohttp"],
        "run_vs_aiohttp_by_round": by_round("aiohttp"),
        "run_vs_aiohttp_process": rate["needlejudge_run"] / rate["aiohttp_process"],
        "run_vs_aiohttp_process_by_round": by_round("aiohttp_process"),
        "run_vs_openai_sdk": rate["needlejudge_run"] / rate["openai_sdk"],
        **({"before_vs_aiohttp_process": rate["needlejudge_run_before"] / rate["aiohttp_process"],
            "before_vs_aiohttp": rate["needlejudge_run_before"] / rate["aiohttp"]} if before_env is not None else {}),
    }
