"""Adapter throughput and client CPU per call, against the official SDKs.

The fake provider server runs in a separate process (zero latency), so the
CPU time measured here (time.process_time of this process) is the client's
alone. For each provider and concurrency, the same N distinct judge calls
are made once through our adapter and once through the provider's official
SDK (AsyncOpenAI, AsyncAzureOpenAI, AsyncAnthropic, google-genai), in the
same run, and calls/s and client CPU ms/call are reported with the ratio.

    python benchmarks/bench_adapters.py [--calls 3000] [--concurrency 64 512] [--providers openai azure anthropic gemini]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import subprocess
import sys
import time

from engine.contracts import CallRequest, Decoding, JudgeSpec, Message
from engine.prompts.documents import pair_blocks

SYSTEM = "You rate how similar two documents are in meaning, from 0 to 100. Answer with 'Score: N'."
DOC = "The river flows north through the valley. Farmers grow wheat and barley there. The town was founded in 1820."


def requests(n: int, model: str) -> list[CallRequest]:
    out = []
    for index in range(n):
        first = f"{DOC} Item {index} is here."
        second = f"{DOC} Item {index} is not here."
        out.append(
            CallRequest(
                namespace="judge", adapter="bench", model=model, revision="",
                messages=(Message("system", SYSTEM), Message("user", "Compare.\n\n" + pair_blocks(first, second))),
                decoding=Decoding(max_tokens=8, seed=index),
            )
        )
    return out


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "engine.cli", "fake-server", "--port", "0"],
        stdout=subprocess.PIPE, text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise SystemExit(f"fake server did not start: {line!r}")
    return proc, line.strip().rsplit(" ", 1)[1]


async def bounded(calls, concurrency: int) -> None:
    semaphore = asyncio.Semaphore(concurrency)

    async def one(call):
        async with semaphore:
            await call()

    await asyncio.gather(*(one(c) for c in calls))


def ours(provider: str, url: str, concurrency: int):
    from engine.registry import create_adapter

    base = {"openai": url + "/v1", "azure": url, "anthropic": url, "gemini": url}[provider]
    spec = JudgeSpec(name=f"bench-{provider}", adapter=provider, model="sim-bench", base_url=base,
                     concurrency=concurrency, max_attempts=1)
    adapter = create_adapter(spec)

    async def run(reqs):
        results = []

        async def call(r=None):
            results.append(await adapter.complete(r))

        await bounded([lambda r=r: call(r) for r in reqs], concurrency)
        bad = [r for r in results if r.status != "ok"]
        if bad:
            raise SystemExit(f"{provider}: {len(bad)} failed calls, e.g. {bad[0].text[:300]}")

    return run, adapter.aclose


def sdk(provider: str, url: str, concurrency: int):
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    timeout = 120.0  # 512 simultaneous connects on a loaded machine exceed the SDKs' 5 s connect default
    if provider in ("openai", "azure"):
        import openai

        if provider == "openai":
            client = openai.AsyncOpenAI(base_url=url + "/v1", api_key="bench", max_retries=0, timeout=timeout,
                                        http_client=openai.DefaultAsyncHttpxClient(limits=limits))
        else:
            client = openai.AsyncAzureOpenAI(azure_endpoint=url, api_key="bench", api_version="2024-10-21", max_retries=0,
                                             timeout=timeout, http_client=openai.DefaultAsyncHttpxClient(limits=limits))

        async def one(r):
            out = await client.chat.completions.create(
                model="sim-bench", messages=[{"role": m.role, "content": m.content} for m in r.messages],
                max_tokens=r.decoding.max_tokens, temperature=0.0, seed=r.decoding.seed)
            assert out.choices[0].message.content

        close = client.close
    elif provider == "anthropic":
        import anthropic

        client = anthropic.AsyncAnthropic(base_url=url, api_key="bench", max_retries=0, timeout=timeout,
                                          http_client=anthropic.DefaultAsyncHttpxClient(limits=limits))

        async def one(r):
            out = await client.messages.create(
                model="sim-bench", max_tokens=r.decoding.max_tokens, system=r.messages[0].content,
                messages=[{"role": "user", "content": r.messages[1].content}])
            assert out.content[0].text

        close = client.close
    else:
        from google import genai
        from google.genai import types

        client = genai.Client(api_key="bench", http_options=types.HttpOptions(
            base_url=url, api_version="v1beta", timeout=120_000,
            async_client_args={"limits": limits}))

        async def one(r):
            out = await client.aio.models.generate_content(
                model="sim-bench", contents=r.messages[1].content,
                config=types.GenerateContentConfig(system_instruction=r.messages[0].content,
                                                   max_output_tokens=r.decoding.max_tokens, temperature=0.0, seed=r.decoding.seed))
            assert out.text

        async def close():
            await client.aio.aclose()

    async def run(reqs):
        await bounded([lambda r=r: one(r) for r in reqs], concurrency)

    return run, close


def process_cpu_s(pid: int) -> float:
    """User + system CPU seconds of another process (Linux /proc)."""
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def measure(factory, provider: str, url: str, concurrency: int, calls: int, server_pid: int) -> tuple[float, float, float]:
    """(calls/s, client CPU ms per call, server CPU ms per call)."""
    run, close = factory(provider, url, concurrency)
    await run(requests(min(200, calls), "warmup"))  # connections, imports, caches
    reqs = requests(calls, "sim-bench")
    server0, cpu0, wall0 = process_cpu_s(server_pid), time.process_time(), time.perf_counter()
    await run(reqs)
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    server = process_cpu_s(server_pid) - server0
    await close()
    return calls / wall, 1000.0 * cpu / calls, 1000.0 * server / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=3000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[64, 512])
    parser.add_argument("--providers", nargs="+", default=["openai", "azure", "anthropic", "gemini"])
    args = parser.parse_args()
    for name in ("OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"):
        os.environ[name] = "bench-key"
    proc, url = start_server()
    try:
        print(f"# {platform.platform()}, {os.cpu_count()} CPUs, python {platform.python_version()}, "
              f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print("| provider | concurrency | ours calls/s | SDK calls/s | ratio | ours CPU ms/call | SDK CPU ms/call | CPU ratio "
              "| server CPU ms/call |")
        print("|---|---|---|---|---|---|---|---|---|")
        for provider in args.providers:
            for concurrency in args.concurrency:
                ours_rate, ours_cpu, server_cpu = asyncio.run(measure(ours, provider, url, concurrency, args.calls, proc.pid))
                sdk_rate, sdk_cpu, _ = asyncio.run(measure(sdk, provider, url, concurrency, args.calls, proc.pid))
                print(f"| {provider} | {concurrency} | {ours_rate:.0f} | {sdk_rate:.0f} | {ours_rate / sdk_rate:.1f}× "
                      f"| {ours_cpu:.3f} | {sdk_cpu:.3f} | {sdk_cpu / ours_cpu:.1f}× | {server_cpu:.3f} |", flush=True)
        print(f"# load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
