"""vLLM judge throughput: the in-process adapter vs bare `LLM.generate`, and server mode.

    python benchmarks/bench_vllm.py [--pairs 1000] [--model DIR_OR_HF_ID] [--option key=value ...]
                                    [--concurrency 1000] [--server-concurrency 256] [--modes bare adapter server] [--rounds 2]

The same N rendered pairs (real pairs from the bundled Wikipedia sample via
engine.corpus.pairs, rendered by the `bands` prompt with its guided score regex) go
through, each in a fresh engine of the same model and options:

- bare:    `LLM.generate` on all prompts at once (the baseline: vLLM alone);
- adapter: adapters.vllm (AsyncLLM in our event loop), all calls driven
           concurrently as the scheduler would (`--concurrency` in flight);
- server:  a real vLLM OpenAI-compatible server on 127.0.0.1 (adapters.vllm_server)
           through the `openai-compatible` adapter with structured outputs.

Each mode runs in its own subprocess (one engine at a time, nothing shared),
first warms up on 32 other pairs, then is timed on the N pairs; the modes run
in alternating order over --rounds rounds and the rates pool the rounds. The prompts
are tokenized with the model's chat template the same way in every mode.
Reports requests/s, prompt+output tokens/s and output tokens/s, and the
adapter/bare ratio (target >= 0.9).

Without --model it builds the tiny Gemma-3 model (simulation/tiny_gemma.py) with
random weights (load_format=dummy) for the CPU; on a GPU pass e.g.
`--model google/gemma-3-4b-it --option dtype=bfloat16 --option load_format=auto`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

WARMUP = 32
CPU_OPTIONS = {"load_format": "dummy", "dtype": "float32", "max_model_len": 4096}


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    return f"{os.cpu_count()} CPUs ({cpu}), Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"


def parse_option(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep:
        raise SystemExit(f"--option {text!r}: expected key=value")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        return key, value


# -- the workload --------------------------------------------------------------


def rendered_pairs(n: int, store_path: Path) -> list:
    """n + WARMUP rendered calls (bands prompt) from real pairs of the bundled sample."""
    from bench_pairs import ensure_store

    from engine.contracts import NEEDLES
    from engine.corpus.pairs import Corpus
    from engine.prompts import load_prompt
    from engine.cache.store import Store

    ensure_store(store_path, 80.0)
    prompt = load_prompt("bands")
    calls = []
    with Store(store_path, readonly=True) as store:
        corpus = Corpus.open(store)
        positions = [(i, j) for i in range(10) for j in range(10)]
        # positions cycle over all (i, j) in 0..9, as in the experiment's design
        for attempt in range(len(positions)):
            for doc_id in corpus.doc_ids:
                for needle in NEEDLES:
                    for hay in ("orig", "rand"):
                        i, j = positions[(attempt * 7 + len(calls)) % len(positions)]
                        pair = corpus.make_pair(doc_id, needle, hay, i, j, attempt)
                        if pair is not None:
                            calls.append(prompt.render(pair.original, pair.perturbed)[0])
                        if len(calls) == n + WARMUP:
                            return calls
    raise SystemExit(f"only {len(calls)} pairs available; lower --pairs")


def requests_for(calls, adapter: str, model: str) -> list:
    from engine.contracts import CallRequest

    return [
        CallRequest(namespace=c.namespace, adapter=adapter, model=model, revision="", messages=c.messages, decoding=c.decoding)
        for c in calls
    ]


# -- one mode per subprocess ---------------------------------------------------


def run_bare(calls, model: str, options: dict) -> dict:
    from vllm import LLM
    from vllm.inputs import TokensPrompt

    from adapters.vllm import chat_token_ids, sampling_params, template_takes_system

    llm = LLM(model=model, disable_log_stats=True, **{"enable_prefix_caching": True, "seed": 0, **options})
    tokenizer = llm.get_tokenizer()

    fold = not template_takes_system(tokenizer)

    def prompts(batch):
        return [TokensPrompt(prompt_token_ids=chat_token_ids(tokenizer, c.messages, fold=fold)) for c in batch]

    warm, timed = calls[:WARMUP], calls[WARMUP:]
    llm.generate(prompts(warm), [sampling_params(c.decoding, c.decoding.max_tokens) for c in warm], use_tqdm=False)
    started = time.perf_counter()
    # tokenizing is part of the work in every mode
    outputs = llm.generate(prompts(timed), [sampling_params(c.decoding, c.decoding.max_tokens) for c in timed], use_tqdm=False)
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "requests": len(outputs),
        "ok": sum(1 for o in outputs if o.outputs and o.outputs[0].finish_reason != "abort"),
        "prompt_tokens": sum(len(o.prompt_token_ids) for o in outputs),
        "output_tokens": sum(len(o.outputs[0].token_ids) for o in outputs),
        "cached_tokens": sum(o.num_cached_tokens or 0 for o in outputs),
    }


async def drive(adapter, requests, concurrency: int) -> tuple[float, list]:
    import anyio

    limiter = anyio.CapacityLimiter(concurrency)
    results = [None] * len(requests)

    async def one(index: int) -> None:
        async with limiter:
            results[index] = await adapter.complete(requests[index])

    started = time.perf_counter()
    async with anyio.create_task_group() as tg:
        for index in range(len(requests)):
            tg.start_soon(one, index)
    return time.perf_counter() - started, results


def summarise(seconds: float, results: list) -> dict:
    return {
        "seconds": seconds,
        "requests": len(results),
        "ok": sum(1 for r in results if r.status == "ok"),
        "prompt_tokens": sum(r.usage.prompt_tokens for r in results),
        "output_tokens": sum(r.usage.completion_tokens for r in results),
        "cached_tokens": sum(r.usage.cached_tokens for r in results),
        "errors": sorted({f"{r.error_kind}: {r.text[:120]}" for r in results if r.status != "ok"})[:3],
    }


async def run_adapter(calls, model: str, options: dict, concurrency: int) -> dict:
    from adapters.vllm import create
    from engine.contracts import JudgeSpec

    requests = requests_for(calls, "vllm", model)
    async with create(JudgeSpec(name="bench", adapter="vllm", model=model, concurrency=concurrency, options=options)) as adapter:
        await drive(adapter, requests[:WARMUP], concurrency)
        seconds, results = await drive(adapter, requests[WARMUP:], concurrency)
    return summarise(seconds, results)


async def run_server(calls, model: str, options: dict, concurrency: int) -> dict:
    from engine.registry import create_adapter
    from adapters.vllm_server import VllmServer
    from engine.contracts import JudgeSpec

    spec = JudgeSpec(name="bench", adapter="vllm", model=model, concurrency=concurrency, options=options)
    async with VllmServer.for_spec(spec) as server:
        import msgspec

        adapter = create_adapter(msgspec.structs.replace(server.compatible_spec(spec), max_attempts=1, timeout_s=600.0))
        try:
            requests = requests_for(calls, "openai-compatible", model)
            await drive(adapter, requests[:WARMUP], concurrency)
            seconds, results = await drive(adapter, requests[WARMUP:], concurrency)
        finally:
            await adapter.aclose()
    return summarise(seconds, results)


def child(args) -> None:
    import anyio

    calls = rendered_pairs(args.pairs, args.store)
    options = json.loads(args.options_json)
    if args.child == "bare":
        result = run_bare(calls, args.model, options)
    elif args.child == "adapter":
        result = anyio.run(run_adapter, calls, args.model, options, args.concurrency)
    else:
        result = anyio.run(run_server, calls, args.model, options, args.server_concurrency)
    result["load_after"] = os.getloadavg()[0]
    Path(args.result_file).write_text(json.dumps(result))


# -- the driver ------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--model", default=None, help="HF id or folder; default: build the tiny Gemma-3 (CPU)")
    parser.add_argument("--option", action="append", default=[], help="engine option key=value (adapters.vllm.OPTION_TYPES)")
    parser.add_argument("--concurrency", type=int, default=1000, help="in-flight calls for the in-process adapter")
    parser.add_argument("--server-concurrency", type=int, default=256, help="in-flight HTTP calls in server mode")
    parser.add_argument("--modes", nargs="+", default=["bare", "adapter", "server"], choices=["bare", "adapter", "server"])
    parser.add_argument("--rounds", type=int, default=2, help="rounds over the modes, order alternating")
    parser.add_argument("--store", type=Path, default=Path("/tmp/needlejudge-bench-pairs-store"))
    parser.add_argument("--child", choices=["bare", "adapter", "server"], help=argparse.SUPPRESS)
    parser.add_argument("--options-json", help=argparse.SUPPRESS)
    parser.add_argument("--result-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    options = dict(parse_option(o) for o in args.option)
    if args.model is None:
        from simulation.tiny_gemma import build_tiny_gemma

        args.model = str(build_tiny_gemma(Path(tempfile.gettempdir()) / "needlejudge-tiny-gemma"))
        options = {**CPU_OPTIONS, **options}
        os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "2")
    from bench_pairs import ensure_store

    ensure_store(args.store, 80.0)  # once, before the timed children

    print(f"machine: {machine()}")
    print(f"model: {args.model}  options: {options}")
    print(f"{args.pairs} rendered pairs (bands prompt, guided score regex), warm-up {WARMUP}")
    runs: dict[str, list[dict]] = {mode: [] for mode in args.modes}
    # Alternate the order (A B C, C B A, ...) so drifting machine load hits every mode alike.
    order = [list(args.modes) if r % 2 == 0 else list(reversed(args.modes)) for r in range(args.rounds)]
    for round_modes in order:
        for mode in round_modes:
            result = run_mode(mode, args, options)
            runs[mode].append(result)
            s = result["seconds"]
            print(
                f"{mode:8s} {result['requests']} requests ({result['ok']} ok) in {s:.2f} s: "
                f"{result['requests'] / s:,.1f} req/s, {(result['prompt_tokens'] + result['output_tokens']) / s:,.0f} tok/s "
                f"(prompt {result['prompt_tokens']:,}, output {result['output_tokens']:,} = {result['output_tokens'] / s:,.1f} out tok/s, "
                f"prefix-cached {result['cached_tokens']:,}); load {result['load_before']:.1f} -> {result['load_after']:.1f}"
                + (f"; errors {result['errors']}" if result.get("errors") else ""),
                flush=True,
            )
    rates = {mode: sum(r["requests"] for r in rs) / sum(r["seconds"] for r in rs) for mode, rs in runs.items() if rs}
    for mode, rate in rates.items():
        print(f"{mode:8s} over {len(runs[mode])} round(s): {rate:,.1f} req/s")
    if "bare" in rates:
        for mode in ("adapter", "server"):
            if mode in rates:
                print(f"{mode}/bare throughput ratio: {rates[mode] / rates['bare']:.3f}")


def run_mode(mode: str, args, options: dict) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [
            sys.executable, __file__, "--child", mode, "--pairs", str(args.pairs), "--model", args.model,
            "--options-json", json.dumps(options), "--result-file", out.name, "--store", str(args.store),
            "--concurrency", str(args.concurrency), "--server-concurrency", str(args.server_concurrency),
        ]  # fmt: skip
        load_before = os.getloadavg()[0]
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode:
            print(done.stderr[-4000:], file=sys.stderr)
            raise SystemExit(f"mode {mode} failed (exit {done.returncode})")
        result = json.loads(Path(out.name).read_text())
    result["load_before"] = load_before
    return result

if __name__ == "__main__":
    main()
