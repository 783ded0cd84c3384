"""Engine benchmarks (issue 4): dispatch throughput, cached re-runs, peak memory.

    python benchmarks/bench_engine.py                    # everything
    python benchmarks/bench_engine.py --only dispatch    # or cache, rss, profile

whole     A whole `needlejudge run` process (start-up, run and exports; ~5,000
          calls at concurrency 64) against an independent OpenAI-compatible
          server whose judge answers in JSON (benchmarks/json_judge_server.py:
          Starlette + uvicorn, not our fake server), vs a bare aiohttp loop
          posting the same bodies (recorded by the server from a warm-up run)
          and vs the official `openai` SDK; alternating rounds, medians. The
          bare loop twice: in this process (no start-up) and as a whole
          `python` process of its own (interpreter, aiohttp import, reading
          the bodies, the loop), the way the `needlejudge run` process is
          measured. `--engine-root` runs `needlejudge run` from another
          checkout (a "before" snapshot) against the same baselines.
breakdown A whole `needlejudge run` (the `whole` workload) in an instrumented
          process: CPU (time.process_time) of each phase: interpreter,
          imports, config, store, corpus, design, restore, the dispatch loop,
          export, cyclic GC, the commit process.
dispatch  `whole`, then judged calls/s through the warm engine (pair, render, key, cache
          miss, adapter, group commit, stopping, rows) against the fake
          provider server with zero latency (its own process), vs a bare
          aiohttp loop posting the same bodies at the same concurrency and
          vs the official `openai` SDK (AsyncOpenAI + semaphore). Also the
          engine with transport = "aiohttp" and the bare loop over the lean
          client the engine uses for http:// (adapters/plain_http.py). Same
          run, interleaved rounds, medians (and each round's own ratio). CPU
          per call of this process (for the engine: with its commit process).
commit    The engine at a judge's rate (fake server latency 0.32 s and 0.064 s
          at concurrency 64: ~200 and ~1,000 calls/s) and at the server's max,
          with its commit process vs an in-process writer thread doing the
          same puts: calls/s, CPU per call and share of a core (with the
          writer's CPU), alternating rounds.
cache     A finished ~100,000-call experiment (baseline judge `seqratio`)
          re-run: (a) the same config (stored rows, no call; unchanged
          exports are kept), the same with results.jsonl removed (every
          export written again), and (b) with
          the run's rows and cell states deleted, so every item is rebuilt
          and answered by the call cache. Times vs the first run.
rss       Peak RSS of a child process running a design of >= 1,000,000
          planned calls to the end (baseline judge), streaming.
profile   cProfile of the engine's own CPU per call on the dispatch workload.

The corpus (bundled sample, min 100 characters per sentence) is prepared
once into BENCH_DIR/corpus and copied (LMDB copy) for each fresh store.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.config import ExperimentConfig, parse_config  # noqa: E402
from engine.prepare import BUNDLED_CORPUS  # noqa: E402
from engine.store import Store  # noqa: E402

MIN_CHARS = 100.0
# the lean http:// client (adapters/plain_http.py) until its retirement: one transport (aiohttp) after it
LEAN_CLIENT = (ROOT / "adapters" / "plain_http.py").exists()


def experiment_text(
    *, store: Path, output: Path, n: int, replicates: int, judge: str, k: int = 9, kind: str = "fixed", stopping: str = ""
) -> str:
    return textwrap.dedent(
        f"""
        store = "{store}"
        output = "{output}"
        seed = 1
        k = {k}
        replicates = {replicates}
        [corpus]
        inputs = ["{BUNDLED_CORPUS}"]
        [corpus.settings]
        min_chars_per_sentence = {MIN_CHARS}
        [stopping]
        kind = "{kind}"
        """
    ) + (f"n = {n}\n" if kind == "fixed" else "") + textwrap.dedent(stopping) + textwrap.dedent(judge)


def baseline_judge(concurrency: int = 64) -> str:
    return f"""
    [[judges]]
    name = "seqratio"
    adapter = "baseline"
    model = "seqratio"
    concurrency = {concurrency}
    """


def fake_judge(url: str, concurrency: int, transport: str = "auto") -> str:
    options = f'{{ transport = "{transport}" }}' if LEAN_CLIENT else "{}"
    return f"""
    [[judges]]
    name = "sim"
    adapter = "openai-compatible"
    model = "local-sim"
    base_url = "{url}/v1"
    concurrency = {concurrency}
    timeout_s = 60.0
    options = {options}
    """


def corpus_store(bench_dir: Path) -> Path:
    """The prepared corpus (parsed once; later runs reuse it)."""
    from engine.prepare import CorpusSettings, prepare_corpus

    path = bench_dir / "corpus"
    store = Store(path)
    try:
        summary = prepare_corpus([BUNDLED_CORPUS], store, CorpusSettings(min_chars_per_sentence=MIN_CHARS), progress=True)
        print(f"corpus: {summary.kept_screening} documents ({'reused' if summary.reused else f'prepared in {summary.seconds:.0f} s'})")
    finally:
        store.close()
    return path


def fresh_store(bench_dir: Path, name: str) -> Path:
    """A new store holding only the prepared corpus."""
    target = bench_dir / name
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir(parents=True)
    source = Store(bench_dir / "corpus")
    try:
        source.env.copy(str(target))
    finally:
        source.close()
    copy = Store(target)
    try:  # only the corpus: no cached call, row or run
        with copy.env.begin(write=True) as txn:
            for db in ("results", "rows", "runs"):
                txn.drop(copy.db(db), delete=False)
    finally:
        copy.close()
    return target


def config_for(text: str) -> ExperimentConfig:
    return parse_config(text, source="<bench>")


# ---------------------------------------------------------------------------
# The fake server in its own process


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """A server in its own process on a free port, ready once `probe` answers."""

    probe = "/"

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def command(self) -> list[str]:
        raise NotImplementedError

    def __enter__(self):  # type: ignore[no-untyped-def]
        self.proc = subprocess.Popen(self.command(), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import urllib.request

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"{self.url}{self.probe}", timeout=1).read()
                return self
            except OSError:
                time.sleep(0.2)
        self.__exit__()
        raise RuntimeError(f"{type(self).__name__} did not start")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)


class FakeServerProcess(ServerProcess):
    """Our fake provider server (simulated judge), zero latency."""

    probe = "/_fake/stats"

    def command(self) -> list[str]:
        return [sys.executable, "-m", "engine.cli", "fake-server", "--port", str(self.port), "--latency", "zero"]

    def stats(self) -> dict:
        import urllib.request

        return json.loads(urllib.request.urlopen(f"{self.url}/_fake/stats", timeout=5).read())


# ---------------------------------------------------------------------------
# dispatch


def design_requests(config: ExperimentConfig, limit: int) -> list:
    """The first `limit` requests the engine would send (same items, same bodies)."""
    from engine.runner import Experiment

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


async def bare_aiohttp(url: str, bodies: list[bytes], concurrency: int) -> float:
    import aiohttp
    import msgspec

    decode = msgspec.json.decode
    headers = {"Content-Type": "application/json"}
    it = iter(bodies)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            for body in it:
                async with session.post(url, data=body, headers=headers) as response:
                    payload = decode(await response.read())
                    assert payload["choices"][0]["message"]["content"]

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for _ in range(concurrency):
                tg.start_soon(worker)
        return time.perf_counter() - start


async def bare_plain(url: str, bodies: list[bytes], concurrency: int) -> float:
    """The bare loop over the engine's lean HTTP/1.1 client instead of aiohttp."""
    import msgspec

    from adapters.plain_http import PlainHttpClient

    decode = msgspec.json.decode
    headers = {"Content-Type": "application/json"}
    it = iter(bodies)
    client = PlainHttpClient(timeout_s=300.0, keepalive_s=30.0)

    async def worker() -> None:
        for body in it:
            response = await client.post(url, body, headers)
            assert decode(response.body)["choices"][0]["message"]["content"]

    start = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for _ in range(concurrency):
            tg.start_soon(worker)
    elapsed = time.perf_counter() - start
    await client.aclose()
    return elapsed


def engine_round(bench_dir: Path, url: str, calls: int, concurrency: int, n_per_cell: int, transport: str = "auto") -> tuple[float, float, int]:
    from engine.runner import run_experiment

    store = fresh_store(bench_dir, "dispatch-store")
    judge = fake_judge(url, concurrency, transport)
    config = config_for(experiment_text(store=store, output=bench_dir / "dispatch-out", n=n_per_cell, replicates=1, judge=judge))
    times0, t0 = os.times(), time.perf_counter()
    summary = run_experiment(config, quiet=True, export=False)
    wall, times1 = time.perf_counter() - t0, os.times()
    # this process + its reaped children: the run's commit process (the fake server is not reaped yet)
    cpu = sum(times1[:4]) - sum(times0[:4])
    assert summary.calls_network + summary.calls_cached >= calls, summary  # (i,j)=(0,0): orig and rand hay are one request
    return wall, cpu, summary.calls_network


def timed_cpu(fn):  # type: ignore[no-untyped-def]
    cpu0 = time.process_time()
    wall = fn()
    return wall, time.process_time() - cpu0


def bench_dispatch(bench_dir: Path, calls: int, concurrency: int, rounds: int) -> dict:
    from adapters.openai import ChatCompletionsDialect

    cells = 4 * 2 * 100
    n_per_cell = max(1, calls // cells)
    calls = cells * n_per_cell
    # engine: as configured by default (http:// goes through adapters/plain_http.py);
    # engine_over_aiohttp: the same run with transport = "aiohttp", for comparison
    # bare_plain: the bare loop over that lean client (what the engine's HTTP part costs at least)
    results: dict[str, list[tuple[float, float, int]]] = {"engine": [], "engine_over_aiohttp": [], "aiohttp": [], "bare_plain": [], "openai_sdk": []}
    with FakeServerProcess() as server:
        probe = config_for(experiment_text(store=bench_dir / "corpus", output=bench_dir / "unused", n=n_per_cell, replicates=1, judge=fake_judge(server.url, concurrency)))
        requests = design_requests(probe, calls)
        dialect = ChatCompletionsDialect("openai-compatible", f"{server.url}/v1/chat/completions", "local-sim", max_tokens_field="max_tokens", structured_outputs="structured_outputs")
        bodies = [dialect.url_and_body(r)[1] for r in requests]
        url = f"{server.url}/v1/chat/completions"
        # warm-up: imports (the corpus fingerprint imports spaCy once), connections, page cache
        anyio.run(bare_aiohttp, url, bodies[:2000], concurrency)
        if LEAN_CLIENT:
            anyio.run(bare_plain, url, bodies[:2000], concurrency)
            engine_round(bench_dir, server.url, cells, concurrency, 1, "aiohttp")
        engine_round(bench_dir, server.url, cells, concurrency, 1)
        asyncio.run(openai_sdk_bodies(server.url, bodies[:500], concurrency))
        for _ in range(rounds):
            wall, cpu = timed_cpu(lambda: anyio.run(bare_aiohttp, url, bodies, concurrency))
            results["aiohttp"].append((wall, cpu, len(bodies)))
            results["engine"].append(engine_round(bench_dir, server.url, calls, concurrency, n_per_cell))
            if LEAN_CLIENT:
                wall, cpu = timed_cpu(lambda: anyio.run(bare_plain, url, bodies, concurrency))
                results["bare_plain"].append((wall, cpu, len(bodies)))
                results["engine_over_aiohttp"].append(engine_round(bench_dir, server.url, calls, concurrency, n_per_cell, "aiohttp"))
            wall, cpu = timed_cpu(lambda: asyncio.run(openai_sdk_bodies(server.url, bodies, concurrency)))
            results["openai_sdk"].append((wall, cpu, len(bodies)))
            print({k: [f"{n / w:,.0f}/s" for w, _, n in v] for k, v in results.items()}, flush=True)
        stats = server.stats()
    results = {k: v for k, v in results.items() if v}
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
        **(
            {
                "engine_over_aiohttp_vs_aiohttp": rate["engine_over_aiohttp"] / rate["aiohttp"],
                "engine_over_aiohttp_vs_aiohttp_by_round": by_round("engine_over_aiohttp"),
            }
            if LEAN_CLIENT
            else {}
        ),
        "engine_vs_openai_sdk": rate["engine"] / rate["openai_sdk"],
        "server_requests": stats["requests"],
        "server_repeated_completions": stats["repeated_completions"],
    }


# ---------------------------------------------------------------------------
# commit: what the commit process buys over an in-process writer thread


class InThreadCommitter:
    """The writer before engine.commit_process: the writer thread does the
    puts itself (same sort, same transactions), in this process."""

    def __init__(self, store_path: Path) -> None:
        import gc

        # the run's own Store: LMDB forbids opening one environment twice in a process
        self.store = next(o for o in gc.get_objects() if isinstance(o, Store) and o.path == Path(store_path))
        self.pid = os.getpid()

    def commit(self, items: list[tuple[str, bytes, bytes]]) -> None:
        self.store.put_batch_raw(sorted(items, key=lambda item: (item[0], item[1])))

    def close(self, timeout: float = 60.0) -> int:
        return 0


class LatencyServerProcess(FakeServerProcess):
    def __init__(self, latency: str) -> None:
        super().__init__()
        self.latency = latency

    def command(self) -> list[str]:
        return [sys.executable, "-m", "engine.cli", "fake-server", "--port", str(self.port), "--latency", self.latency]


def bench_commit(bench_dir: Path, concurrency: int, rounds: int, rates: list[str]) -> dict:
    """The engine's calls/s and CPU per call (with its writer) at a judge's
    latency, writer = commit process vs an in-process writer thread."""
    import engine.cache

    real = engine.cache.CommitProcess
    cells = 4 * 2 * 100
    out: dict[str, dict] = {}
    for latency in rates:
        # about 16 s of calls per round at the rate the latency allows (concurrency / latency)
        expected_rate = 2000.0 if latency == "zero" else concurrency / float(latency.split(":")[1])
        n_per_cell = max(1, round(expected_rate * 16 / cells))
        series: dict[str, list[tuple[float, float, int]]] = {"commit_process": [], "writer_thread": []}
        with LatencyServerProcess(latency) as server:
            engine_round(bench_dir, server.url, cells, concurrency, 1, "aiohttp")  # warm-up
            for r in range(rounds):
                for name in ("commit_process", "writer_thread") if r % 2 == 0 else ("writer_thread", "commit_process"):
                    engine.cache.CommitProcess = real if name == "commit_process" else InThreadCommitter  # type: ignore[misc]
                    try:
                        series[name].append(engine_round(bench_dir, server.url, cells * n_per_cell, concurrency, n_per_cell, "aiohttp"))
                    finally:
                        engine.cache.CommitProcess = real  # type: ignore[misc]
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


# ---------------------------------------------------------------------------
# whole: a `needlejudge run` process against an independent JSON judge server


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
    # the repository's only transport after plain_http.py's retirement; before it, ask for aiohttp
    options = '{ transport = "aiohttp" }' if LEAN_CLIENT else "{}"
    judge = f"""
    [[judges]]
    name = "json-judge"
    adapter = "openai-compatible"
    model = "json-judge"
    base_url = "{url}/v1"
    concurrency = {concurrency}
    timeout_s = 60.0
    options = {options}
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


async def openai_sdk_bodies(url: str, bodies: list[bytes], concurrency: int) -> float:
    """The official SDK posting the same requests (fields the SDK does not name go in extra_body)."""
    import httpx
    from openai import AsyncOpenAI

    # connect timeout 60 s (the SDK's default 5 s fails on a box this busy), no retries
    client = AsyncOpenAI(base_url=f"{url}/v1", api_key="bench", max_retries=0, timeout=httpx.Timeout(600.0, connect=60.0))
    semaphore = asyncio.Semaphore(concurrency)
    requests = [json.loads(body) for body in bodies]

    async def one(request: dict) -> None:
        request = dict(request)
        model, messages = request.pop("model"), request.pop("messages")
        temperature, max_tokens = request.pop("temperature", None), request.pop("max_tokens", None)
        async with semaphore:
            completion = await client.chat.completions.create(
                model=model, messages=messages, temperature=temperature, max_tokens=max_tokens, extra_body=request or None
            )
            assert completion.choices[0].message.content

    start = time.perf_counter()
    await asyncio.gather(*(one(r) for r in requests))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


def bench_whole(bench_dir: Path, calls: int, concurrency: int, rounds: int, engine_root: Path = ROOT, before_root: Path | None = None) -> dict:
    cells = 4 * 2 * 100
    n_per_cell = max(1, round(calls / cells))
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
        "run_vs_aiohttp": rate["needlejudge_run"] / rate["aiohttp"],
        "run_vs_aiohttp_by_round": by_round("aiohttp"),
        "run_vs_aiohttp_process": rate["needlejudge_run"] / rate["aiohttp_process"],
        "run_vs_aiohttp_process_by_round": by_round("aiohttp_process"),
        "run_vs_openai_sdk": rate["needlejudge_run"] / rate["openai_sdk"],
        **({"before_vs_aiohttp_process": rate["needlejudge_run_before"] / rate["aiohttp_process"],
            "before_vs_aiohttp": rate["needlejudge_run_before"] / rate["aiohttp"]} if before_env is not None else {}),
    }


# ---------------------------------------------------------------------------
# breakdown: where a whole `needlejudge run`'s CPU goes, phase by phase

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
import engine.cli, engine.commands.run, engine.config, engine.runner, engine.registry, engine.prepare, engine.pairs
import engine.prompts, engine.results, engine.run_summary, engine.scheduler, engine.cache, engine.experiment
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

ex, rs, sc = engine.experiment, engine.run_summary, engine.scheduler
timed(engine.config, "load_config", "config")
timed(ex.Experiment, "__init__", "experiment: store, corpus, prompts, design, run id")
timed(ex, "Store", "  store open")
timed(engine.prepare, "prepare_corpus", "  corpus fingerprint (prepared corpus reused)")
timed(engine.pairs.Corpus, "open", "  corpus open")
timed(engine.prompts, "load_prompt", "  prompts")
timed(ex, "Design", "  design")
timed(ex, "run_id_for", "  run id")
timed(sc.Scheduler, "restore", "scheduler restore (cells, document orders)")
timed(engine.cache.GroupCommitWriter, "start_process", "commit process start (this side)")
timed(engine.registry, "create_adapter", "adapter")
timed(sc.Scheduler, "run", "dispatch loop (with the writer thread)", is_async=True)
timed(engine.runner, "finish_run", "finish: exports, summary, manifest")
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
    cells = 4 * 2 * 100
    n_per_cell = max(1, round(calls / cells))
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


# ---------------------------------------------------------------------------
# cache


FORGET_RUN = """
import sys
sys.path.insert(0, {root!r})
import lmdb
from engine.store import Store
store = Store({store!r})
run_key = bytes.fromhex({run_id!r})
while True:
    try:
        with store.env.begin(write=True) as txn:
            for name in ("rows", "runs"):
                db = store.db(name)
                for key in [k for k, _ in txn.cursor(db=db) if k.startswith(run_key)]:
                    txn.delete(key, db=db)
        break
    except lmdb.MapFullError:
        store.env.set_mapsize(store.env.info()["map_size"] * 2)
left = sum(1 for name in ("rows", "runs") for k, _ in store.items_raw(name, run_key))
store.close()
assert left == 0, left
"""


def forget_run(store: Path, run_id: str) -> None:
    """Delete a run's rows and cell states (in a child process: a clean LMDB handle)."""
    subprocess.run([sys.executable, "-c", FORGET_RUN.format(root=str(ROOT), store=str(store), run_id=run_id)], check=True)


def bench_cache(bench_dir: Path) -> dict:
    from engine.runner import run_experiment

    store = fresh_store(bench_dir, "cache-store")
    # 4 needles x 2 hays x 100 positions x 2 replicates x 63 documents = 100,800 calls
    text = experiment_text(store=store, output=bench_dir / "cache-out", n=63, replicates=2, judge=baseline_judge())
    config = config_for(text)
    t0 = time.perf_counter()
    first = run_experiment(config, quiet=True)
    first_s = time.perf_counter() - t0
    first_lines = Path(first.results_jsonl).read_bytes().splitlines()
    t0 = time.perf_counter()
    again = run_experiment(config, quiet=True)
    again_s = time.perf_counter() - t0
    assert again.calls_network == 0 and again.rows == first.rows
    same_file = Path(again.results_jsonl).read_bytes().splitlines() == first_lines
    # the same with the exports written again (results.jsonl removed first)
    Path(again.results_jsonl).unlink()
    t0 = time.perf_counter()
    reexported = run_experiment(config, quiet=True)
    reexport_s = time.perf_counter() - t0
    assert reexported.calls_network == 0 and Path(reexported.results_jsonl).read_bytes().splitlines() == first_lines
    # (b) lose the run's rows and cell states: every item comes back from the call cache
    forget_run(store, first.run_id)
    t0 = time.perf_counter()
    rebuilt = run_experiment(config, quiet=True)
    rebuilt_s = time.perf_counter() - t0
    assert rebuilt.calls_network == 0 and rebuilt.calls_cached == first.calls_network + first.calls_cached, rebuilt
    rebuilt_lines = Path(rebuilt.results_jsonl).read_bytes().splitlines()
    # the same rows, except `cached`: now true (every call came from the cache)
    expected = [line.replace(b'"cached":false', b'"cached":true') for line in first_lines]
    same_rebuilt = expected == rebuilt_lines
    differences = [
        {k: (x[k], y[k]) for k in x if x[k] != y[k]}
        for x, y in ((json.loads(a), json.loads(b)) for a, b in zip(expected, rebuilt_lines) if a != b)
    ][:3]
    return {
        "calls": first.calls_network,
        "rows": first.rows,
        "first_run_s": first_s,
        "rerun_s": again_s,
        "rerun_fraction_of_first": again_s / first_s,
        "rerun_results_per_s": again.rows / again_s,
        "rerun_same_jsonl_bytes": same_file,
        "rerun_reexport_s": reexport_s,
        "rerun_reexport_fraction_of_first": reexport_s / first_s,
        "rerun_reexport_results_per_s": reexported.rows / reexport_s,
        "from_call_cache_s": rebuilt_s,
        "from_call_cache_fraction_of_first": rebuilt_s / first_s,
        "from_call_cache_results_per_s": rebuilt.rows / rebuilt_s,
        "from_call_cache_rows_equal_but_cached_flag": same_rebuilt,
        "first_differences": differences,
    }


# ---------------------------------------------------------------------------
# rss


RSS_CHILD = """
import json, resource, sys, threading, time
sys.path.insert(0, {root!r})
from engine.config import parse_config
from engine.runner import plan_experiment, run_experiment

peak = {{"RssAnon": 0, "RssFile": 0}}
phase = {{"name": "plan", "t0": time.perf_counter()}}
by_phase = {{}}
stop = threading.Event()

def sample():
    # RssAnon: the process's own memory; RssFile: mapped file pages (the LMDB store's mmap)
    while not stop.is_set():
        rss = anon = 0
        with open("/proc/self/status") as fh:
            for line in fh:
                key = line.split(":")[0]
                if key == "VmRSS":
                    rss = int(line.split()[1])
                if key == "RssAnon":
                    anon = int(line.split()[1])
                if key in peak:
                    kb = int(line.split()[1])
                    peak[key] = max(peak[key], kb)
                    slot = by_phase.setdefault(phase["name"], {{}})
                    if kb > slot.get(key, 0):
                        slot[key] = kb
                        slot[key + "_at_s"] = round(time.perf_counter() - phase["t0"], 1)
        # the commit process (engine.commit_process) is a child: its memory counts too
        for pid in child_pids():
            try:
                status = read_status(pid)
            except OSError:
                continue
            commit_peak[pid] = max(commit_peak.get(pid, 0), status.get("VmHWM", 0))
            for key in ("RssAnon", "RssFile"):
                commit_parts[key] = max(commit_parts[key], status.get(key, 0))
            rss += status.get("VmRSS", 0)
            anon += status.get("RssAnon", 0)
        combined[0] = max(combined[0], rss)
        combined_anon[0] = max(combined_anon[0], anon)
        stop.wait(0.2)

def read_status(pid):
    with open(f"/proc/{{pid}}/status") as fh:
        return {{line.split(":")[0]: int(line.split()[1]) for line in fh if line.startswith(("Vm", "Rss"))}}

def child_pids():
    import os
    pids = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{{tid}}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
        except OSError:
            pass
    return pids

def vm_hwm_kb():
    return read_status("self")["VmHWM"]

commit_peak = {{}}
commit_parts = {{"RssAnon": 0, "RssFile": 0}}
combined = [0]  # sampled every 0.2 s: this process + its commit process at the same moment
combined_anon = [0]  # the same for anonymous memory (RssAnon): what the pair really holds

threading.Thread(target=sample, daemon=True).start()
config = parse_config({text!r}, source="<bench-rss>")
plan = plan_experiment(config)
phase["name"], phase["t0"] = "run", time.perf_counter()
t0 = time.perf_counter()
summary = run_experiment(config, quiet=True, export=False)
seconds = time.perf_counter() - t0
if {export!r}:
    phase["name"], phase["t0"] = "export", time.perf_counter()  # the finished run again: no call, JSONL + Parquet + manifest
    t1 = time.perf_counter()
    run_experiment(config, quiet=True, export=True)
    export_s = time.perf_counter() - t1
time.sleep(0.3)
stop.set()
print(json.dumps({{"planned_calls": plan.upper_bound_calls, "cells": plan.cells, "calls": summary.calls_network,
    "rows": summary.rows, "seconds": seconds, "export_seconds": export_s if {export!r} else None,
    # VmHWM: the kernel's exact peak RSS of this process image. ru_maxrss would
    # also count the parent's RSS at fork (Linux keeps the old mm's peak across exec).
    "peak_rss_mb": vm_hwm_kb() / 1024,
    # the largest commit process's exact peak (and its sampled parts); the sum of the
    # two exact peaks bounds the pair from above (they need not peak together)
    "commit_process_peak_rss_mb": max(commit_peak.values(), default=0) / 1024,
    "commit_process_peak_anon_mb": commit_parts["RssAnon"] / 1024,
    "commit_process_peak_file_mapped_mb": commit_parts["RssFile"] / 1024,
    "sum_of_peaks_rss_mb": (vm_hwm_kb() + max(commit_peak.values(), default=0)) / 1024,
    "combined_sampled_peak_rss_mb": combined[0] / 1024,
    # the figure that matters: anonymous memory (not page cache) of the run + its commit process
    "combined_sampled_peak_anon_mb": combined_anon[0] / 1024,
    "sum_of_peaks_anon_mb": (peak["RssAnon"] + commit_parts["RssAnon"]) / 1024,
    "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "peak_anon_mb": peak["RssAnon"] / 1024, "peak_file_mapped_mb": peak["RssFile"] / 1024,
    "by_phase_mb": {{k: {{kk: (vv if kk.endswith("_s") else vv / 1024) for kk, vv in v.items()}} for k, v in by_phase.items()}}}}))
"""


# The ci rule's variant of the rss design: hedged capital, alpha split over all
# its cells, every cell capped at the 95 documents the fixed rule judges.
RSS_CI_STOPPING = """
epsilon = 2.0
method = "hedged"
max_docs = 95
"""


def bench_rss(bench_dir: Path, replicates: int, export: bool, rule: str = "fixed") -> dict:
    store = fresh_store(bench_dir, "rss-store")
    # 4 x 2 x 100 x replicates cells, each up to all 95 documents (fixed n = 95)
    text = experiment_text(
        store=store,
        output=bench_dir / "rss-out",
        n=95,
        replicates=replicates,
        judge=baseline_judge(),
        kind=rule,
        stopping=RSS_CI_STOPPING if rule == "ci" else "",
    )
    child = RSS_CHILD.format(root=str(ROOT), text=text, export=export)
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------
# profile


def bench_profile(bench_dir: Path, calls: int, concurrency: int) -> str:
    import cProfile
    import io
    import pstats

    cells = 800
    n = max(1, calls // cells)
    with FakeServerProcess() as server:
        profiler = cProfile.Profile()
        profiler.enable()
        wall, cpu, made = engine_round(bench_dir, server.url, cells * n, concurrency, n)
        profiler.disable()
    buffer = io.StringIO()
    pstats.Stats(profiler, stream=buffer).sort_stats("tottime").print_stats(25)
    return f"{made} calls, {wall:.1f} s wall, {cpu / made * 1e6:.0f} µs CPU per call (under cProfile)\n" + buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="dispatch,cache,rss", help="comma list of dispatch (= whole + the warm engine), whole, breakdown, commit, cache, rss, profile")
    parser.add_argument("--dir", default=os.environ.get("NEEDLEJUDGE_BENCH_DIR", "/tmp/needlejudge-bench"), type=Path)
    parser.add_argument("--calls", type=int, default=16000, help="dispatch: calls per round (warm engine vs the fake server)")
    parser.add_argument(
        "--commit-latencies", default="fixed:0.32,fixed:0.064,zero", help="commit: fake-server latencies (64 in flight: ~200, ~1,000 calls/s, max)"
    )
    parser.add_argument("--whole-calls", type=int, default=5000, help="dispatch/whole: calls of the whole `needlejudge run`")
    parser.add_argument(
        "--engine-root", type=Path, default=ROOT, help="whole/breakdown: run `needlejudge run` from this checkout (e.g. a snapshot of main)"
    )
    parser.add_argument("--before-root", type=Path, default=None, help="whole: also run `needlejudge run` from this checkout in every round")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rss-replicates", type=int, default=14, help="rss: 800 x this many cells of 95 documents")
    parser.add_argument("--rss-rule", choices=["fixed", "ci"], default="fixed", help="rss: the design's stopping rule")
    args = parser.parse_args()
    args.dir = args.dir.resolve()  # the measured processes start in their own checkout
    args.dir.mkdir(parents=True, exist_ok=True)
    corpus_store(args.dir)
    import engine.nlp  # noqa: F401  (warm: every run's corpus fingerprint imports it; not part of any timing)
    import adapters.baseline  # noqa: F401
    import adapters.openai  # noqa: F401
    report: dict = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "load_avg": os.getloadavg()}
    for part in args.only.split(","):
        t0 = time.perf_counter()
        if part == "dispatch":
            report["whole"] = bench_whole(args.dir, args.whole_calls, args.concurrency, args.rounds)
            print(f"whole: {json.dumps(report['whole'], indent=2)}", flush=True)
            report["dispatch"] = bench_dispatch(args.dir, args.calls, args.concurrency, args.rounds)
        elif part == "commit":
            report["commit"] = bench_commit(args.dir, args.concurrency, args.rounds, args.commit_latencies.split(","))
        elif part == "whole":
            report["whole"] = bench_whole(args.dir, args.whole_calls, args.concurrency, args.rounds, args.engine_root, args.before_root)
        elif part == "breakdown":
            report["breakdown"] = bench_breakdown(args.dir, args.whole_calls, args.concurrency, args.rounds, args.engine_root)
        elif part == "cache":
            report["cache"] = bench_cache(args.dir)
        elif part == "rss":
            report["rss"] = bench_rss(args.dir, args.rss_replicates, export=True, rule=args.rss_rule)
        elif part == "profile":
            print(bench_profile(args.dir, args.calls, args.concurrency))
            continue
        else:
            raise SystemExit(f"unknown part {part!r}")
        print(f"{part}: {json.dumps(report[part], indent=2)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    report["load_avg_end"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
