"""The executors past one machine (issue 28) against the in-process path,
on the same design, as whole CLI processes (what a user pays):

    python benchmarks/bench_executors.py                    # both pairs
    python benchmarks/bench_executors.py --only vllm        # in-process vLLM vs --executor run-batch
    python benchmarks/bench_executors.py --only ray         # in-process HTTP vs --executor ray (local Ray)
    python benchmarks/bench_executors.py --only ray-vllm    # in-process vLLM vs --executor ray (ray.data.llm, local Ray)
    python benchmarks/bench_executors.py --only run-batch --n 160   # one large run-batch wave: run_batch's own rate

- vllm: the tiny Gemma (simulation/tiny_gemma.py, load_format dummy,
  float32, eager, greedy, guided) in-process vs `--executor run-batch
  --shards 1` (one `vllm run-batch` process a wave);
- ray: an openai-compatible judge against the fake provider server (its
  own process, zero latency) with the engine's own workers vs `--executor
  ray --address local --ray-workers 2` (a Ray instance started by the run);
- ray-vllm: the tiny Gemma in-process vs `--executor ray --address local
  --ray-workers 1` (one ray.data.llm engine replica, a Ray instance started
  by the run).

Design: needles none/neg x hay orig x positions 0 <= i, j <= k, `fixed`
stopping (one wave), on the bundled corpus parsed with en_core_web_sm
alone, each run on a fresh copy of it. Each path runs at two sizes (n =
SMALL and n = --n documents a cell): the fixed overhead is the small run's
time less its calls at the path's rate, the rate (calls/s) the difference
in calls over the difference in seconds. Results of each pair are checked
identical (scores and texts).

For the vLLM paths the engine's own rate is also read inside each run,
where an engine start's noise does not reach it: in-process and through
Ray from the calls' `finished_at` in the cache (the calls after the first
window of 64 in flight over the time from that window's end to the last),
through run-batch from run_batch's own progress line in each shard's log
(`Running batch: 100% Completed | N/N [MM:SS<...]`: N / elapsed). The
run's fixed overhead is then its seconds less its calls at that rate.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from engine_bench.common import FakeServerProcess  # noqa: E402

SMALL = 2  # documents a cell in the small run (--small)
KEY_ENV = "NJ_BENCH_EXECUTORS_KEY"
VLLM_OPTIONS = '{ load_format = "dummy", dtype = "float32", max_model_len = 2048, enforce_eager = true, seed = 0 }'


def design(store: Path, output: Path, n: int, k: int, judge: str) -> str:
    from engine.corpus.prepare import BUNDLED_CORPUS

    return textwrap.dedent(f"""
        store = "{store}"
        output = "{output}"
        seed = 1
        needles = ["none", "neg"]
        hays = ["orig"]
        k = {k}
        prompts = ["bands"]
        [corpus]
        inputs = ["{BUNDLED_CORPUS}"]
        [corpus.settings]
        min_chars_per_sentence = 100.0
        model = "en_core_web_sm"
        ner_scan_radius = 10
        [stopping]
        kind = "fixed"
        n = {n}
        """) + textwrap.dedent(judge)


def prepared(bench: Path, k: int) -> Path:
    """The corpus prepared once (a run of 0 calls: a fixed n = 0 design would be refused, so a dry run)."""
    corpus = bench / "corpus"
    if not (corpus / "store" / "data.mdb").exists():
        corpus.mkdir(parents=True, exist_ok=True)
        config = corpus / "exp.toml"
        config.write_text(design(corpus / "store", corpus / "out", 1, k, '[[judges]]\nname = "b"\nadapter = "baseline"\nmodel = "seqratio"\n'))
        subprocess.run([sys.executable, "-m", "engine.cli", "run", str(config), "--dry-run"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return corpus / "store"


def fresh(bench: Path, k: int, name: str) -> Path:
    from engine.cache.store import Store

    target = bench / name
    subprocess.run(["rm", "-rf", str(target)], check=True)
    (target / "store").mkdir(parents=True)
    source = Store(prepared(bench, k))
    try:
        source.env.copy(str(target / "store"))
    finally:
        source.close()
    return target


def run(bench: Path, k: int, name: str, n: int, judge: str, flags: list[str], env: dict[str, str]) -> dict:
    folder = fresh(bench, k, name)
    config = folder / "exp.toml"
    config.write_text(design(folder / "store", folder / "out", n, k, judge))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "engine.cli", "run", str(config), "--quiet", "--json", *flags],
                          cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{name}: exit {done.returncode}\n{done.stderr[-3000:]}")
    text = done.stdout
    summary = json.loads(text[text.rindex("\n{") + 1:] if not text.startswith("{") else text)  # vLLM logs to stdout too
    rows = [(r["needle"], r["i"], r["j"], r["doc_id"], r["score"], r["raw_text"])
            for r in map(json.loads, Path(summary["results_jsonl"]).read_text().splitlines())]
    engine = engine_rate(folder / "store")
    print(f"  {name:<22} n={n:<3} {summary['calls_network']:>5} calls  {seconds:7.1f} s  waves {summary.get('batch_waves', 0)}"
          + (f"  engine {engine:.1f} calls/s (fixed {seconds - summary['calls_network'] / engine:.1f} s)" if engine else ""), flush=True)
    return {"calls": summary["calls_network"], "seconds": seconds, "rows": rows, "engine_calls_per_s": engine}


IN_FLIGHT = 64  # the vLLM judge's concurrency (in-process; Ray: batch 8 x 8 batches an engine)
RUN_BATCH_DONE = re.compile(r"Running batch: 100% Completed \| (\d+)/\d+ \[(\d+):(\d+)<")


def engine_rate(store: Path) -> float:
    """Calls a second of the engine itself, inside the run (0: not a vLLM run, or too few calls)."""
    logs = sorted((store / "waves").glob("*/wave-*/calls-*.log"))
    if logs:  # run-batch: run_batch's own progress line, per shard
        done = [RUN_BATCH_DONE.findall(path.read_text(errors="replace")) for path in logs]
        calls = sum(int(found[-1][0]) for found in done if found)
        seconds = sum(int(found[-1][1]) * 60 + int(found[-1][2]) for found in done if found)
        return calls / seconds if seconds else 0.0
    from engine.cache.call_cache import RESULTS_DB, decode_result
    from engine.cache.store import Store

    with Store(store, readonly=True) as opened:
        finished = sorted(r.finished_at for r in (decode_result(raw) for _, raw in opened.items_raw(RESULTS_DB)) if r.model_version and "vllm" in r.model_version)
    # from the end of the first window of calls in flight: its calls entered the engine together
    first = min(IN_FLIGHT, len(finished) // 2) - 1
    return (len(finished) - 1 - first) / (finished[-1] - finished[first]) if first >= 0 and finished[-1] > finished[first] else 0.0


def pair(bench: Path, k: int, n: int, label: str, judge: str, flags: list[str], env: dict[str, str]) -> dict:
    out = {}
    for path, extra in (("in-process", []), (label, flags)):
        small = run(bench, k, f"{path}-small", SMALL, judge, extra, env)
        large = run(bench, k, f"{path}-large", n, judge, extra, env)
        spent = large["seconds"] - small["seconds"]
        rate = (large["calls"] - small["calls"]) / spent if spent > 0 else float("nan")  # nan: below the noise
        out[path] = {"small": small, "large": large, "calls_per_s": rate,
                     "overhead_s": small["seconds"] - small["calls"] / rate if rate > 0 else float("nan")}
    same = out["in-process"]["large"]["rows"] == out[label]["large"]["rows"] and out["in-process"]["small"]["rows"] == out[label]["small"]["rows"]
    print(f"  results identical: {same}")
    for path, figures in out.items():
        print(f"  {path:<12} {figures['calls_per_s']:8.2f} calls/s, fixed overhead {figures['overhead_s']:6.1f} s "
              f"(n={SMALL}: {figures['small']['seconds']:.1f} s, n={n}: {figures['large']['seconds']:.1f} s for {figures['large']['calls']} calls)")
    return {"identical": same, **{p: {k2: v for k2, v in f.items() if k2 not in {"small", "large"}} |
                                   {"small_s": f["small"]["seconds"], "large_s": f["large"]["seconds"], "large_calls": f["large"]["calls"],
                                    "engine_calls_per_s": [f["small"]["engine_calls_per_s"], f["large"]["engine_calls_per_s"]]}
                                   for p, f in out.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("vllm", "ray", "ray-vllm", "run-batch"))
    parser.add_argument("--n", type=int, default=12, help="documents a cell in the large run")
    parser.add_argument("--k", type=int, default=1, help="positions 0 <= i, j <= k: (k+1)^2 per needle")
    parser.add_argument("--dir", type=Path, default=Path(os.environ.get("NEEDLEJUDGE_BENCH_DIR", tempfile.gettempdir())) / "nj-bench-executors")
    parser.add_argument("--small", type=int, default=SMALL, help="documents a cell in the small run")
    args = parser.parse_args()
    globals()["SMALL"] = args.small
    args.dir.mkdir(parents=True, exist_ok=True)
    report = {}
    if args.only in (None, "vllm", "ray-vllm", "run-batch"):
        from simulation.tiny_gemma import build_tiny_gemma

        model = build_tiny_gemma(args.dir / "tiny")
        judge = f'[[judges]]\nname = "tiny"\nadapter = "vllm"\nmodel = "{model}"\nconcurrency = {IN_FLIGHT}\noptions = {VLLM_OPTIONS}\n'
        if args.only == "run-batch":
            print("run-batch: one wave of n documents a cell")
            large = run(args.dir, args.k, "run-batch-rate", args.n, judge, ["--executor", "run-batch", "--shards", "1"], {"VLLM_CPU_KVCACHE_SPACE": "1"})
            report["run-batch"] = {key: value for key, value in large.items() if key != "rows"}
        elif args.only != "ray-vllm":
            print("vllm: in-process vs --executor run-batch")
            report["vllm"] = pair(args.dir, args.k, args.n, "run-batch", judge, ["--executor", "run-batch", "--shards", "1"],
                                  {"VLLM_CPU_KVCACHE_SPACE": "1"})
        if args.only in (None, "ray-vllm"):
            print("ray-vllm: in-process vs --executor ray (ray.data.llm, local)")
            report["ray-vllm"] = pair(args.dir, args.k, args.n, "ray", judge, ["--executor", "ray", "--address", "local", "--ray-workers", "1"],
                                      {"VLLM_CPU_KVCACHE_SPACE": "1"})
    if args.only in (None, "ray"):
        with FakeServerProcess() as server:
            judge = (f'[[judges]]\nname = "sim"\nadapter = "openai-compatible"\nmodel = "sim-judge"\nbase_url = "{server.url}/v1"\n'
                     f'api_key_env = "{KEY_ENV}"\nconcurrency = 16\n')
            print("ray: in-process HTTP workers vs --executor ray (local)")
            report["ray"] = pair(args.dir, args.k, args.n, "ray", judge, ["--executor", "ray", "--address", "local", "--ray-workers", "2"],
                                 {KEY_ENV: "bench-key"})
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
