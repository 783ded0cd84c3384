"""What the engine benchmarks share: the bench design's config text, the
prepared corpus and fresh stores, servers in their own processes, timing
helpers, and the bare aiohttp loop every speed figure is compared with."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # this checkout's engine, before any installed one

from engine.config import ExperimentConfig, parse_config  # noqa: E402
from engine.corpus.prepare import BUNDLED_CORPUS  # noqa: E402
from engine.cache.store import Store  # noqa: E402

MIN_CHARS = 100.0
CELLS = 4 * 2 * 100  # needles x hays x positions of the bench design


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




def fake_judge(url: str, concurrency: int) -> str:
    return f"""
    [[judges]]
    name = "sim"
    adapter = "openai-compatible"
    model = "local-sim"
    base_url = "{url}/v1"
    concurrency = {concurrency}
    timeout_s = 60.0
    """



def corpus_store(bench_dir: Path) -> Path:
    """The prepared corpus (parsed once; later runs reuse it)."""
    from engine.corpus.prepare import CorpusSettings, prepare_corpus

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


def timed_cpu(fn):  # type: ignore[no-untyped-def]
    cpu0 = time.process_time()
    wall = fn()
    return wall, time.process_time() - cpu0


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
