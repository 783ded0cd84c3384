"""The executors past one machine (issue 28) against the in-process path,
on the same design, as whole CLI processes (what a user pays):

    python benchmarks/bench_executors.py                    # both pairs
    python benchmarks/bench_executors.py --only vllm        # in-process vLLM vs --executor run-batch
    python benchmarks/bench_executors.py --only ray         # in-process HTTP vs --executor ray (local Ray)

- vllm: the tiny Gemma (simulation/tiny_gemma.py, load_format dummy,
  float32, eager, greedy, guided) in-process vs `--executor run-batch
  --shards 1` (one `vllm run-batch` process a wave);
- ray: an openai-compatible judge against the fake provider server (its
  own process, zero latency) with the engine's own workers vs `--executor
  ray --address local --ray-workers 2` (a Ray instance started by the run).

Design: needles none/neg x hay orig x positions 0 <= i, j <= k, `fixed`
stopping (one wave), on the bundled corpus parsed with en_core_web_sm
alone, each run on a fresh copy of it. Each path runs at two sizes (n =
SMALL and n = --n documents a cell): the fixed overhead is the small run's
time less its calls at the path's rate, the rate (calls/s) the difference
in calls over the difference in seconds. Results of each pair are checked
identical (scores and texts).
"""

from __future__ import annotations

import argparse
import json
import os
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
    print(f"  {name:<22} n={n:<3} {summary['calls_network']:>5} calls  {seconds:7.1f} s  waves {summary.get('batch_waves', 0)}", flush=True)
    return {"calls": summary["calls_network"], "seconds": seconds, "rows": rows}


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
                                   {"small_s": f["small"]["seconds"], "large_s": f["large"]["seconds"], "large_calls": f["large"]["calls"]}
                                   for p, f in out.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=("vllm", "ray"))
    parser.add_argument("--n", type=int, default=12, help="documents a cell in the large run")
    parser.add_argument("--k", type=int, default=1, help="positions 0 <= i, j <= k: (k+1)^2 per needle")
    parser.add_argument("--dir", type=Path, default=Path(os.environ.get("NEEDLEJUDGE_BENCH_DIR", tempfile.gettempdir())) / "nj-bench-executors")
    parser.add_argument("--small", type=int, default=SMALL, help="documents a cell in the small run")
    args = parser.parse_args()
    globals()["SMALL"] = args.small
    args.dir.mkdir(parents=True, exist_ok=True)
    report = {}
    if args.only in (None, "vllm"):
        from simulation.tiny_gemma import build_tiny_gemma

        model = build_tiny_gemma(args.dir / "tiny")
        judge = f'[[judges]]\nname = "tiny"\nadapter = "vllm"\nmodel = "{model}"\nconcurrency = 64\noptions = {VLLM_OPTIONS}\n'
        print("vllm: in-process vs --executor run-batch")
        report["vllm"] = pair(args.dir, args.k, args.n, "run-batch", judge, ["--executor", "run-batch", "--shards", "1"],
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
