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
          vs the official `openai` SDK (AsyncOpenAI + semaphore). Same
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
Each benchmark lives in its own module of benchmarks/engine_bench/.
"""

from __future__ import annotations

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # engine_bench, when imported from elsewhere

from engine_bench import breakdown, commit, cpu_profile, dispatch, replay, rss, whole  # noqa: E402
from engine_bench.common import (  # noqa: E402,F401  (re-exported: bench_batch.py and bench_replicas.py import them from here)
    ROOT,
    FakeServerProcess,
    config_for,
    corpus_store,
    experiment_text,
    free_port,
    fresh_store,
)


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
    import engine.corpus.nlp  # noqa: F401  (warm: every run's corpus fingerprint imports it; not part of any timing)
    import adapters.baseline  # noqa: F401
    import adapters.openai  # noqa: F401
    report: dict = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "load_avg": os.getloadavg()}
    for part in args.only.split(","):
        t0 = time.perf_counter()
        if part == "dispatch":
            report["whole"] = whole.bench_whole(args.dir, args.whole_calls, args.concurrency, args.rounds)
            print(f"whole: {json.dumps(report['whole'], indent=2)}", flush=True)
            report["dispatch"] = dispatch.bench_dispatch(args.dir, args.calls, args.concurrency, args.rounds)
        elif part == "commit":
            report["commit"] = commit.bench_commit(args.dir, args.concurrency, args.rounds, args.commit_latencies.split(","))
        elif part == "whole":
            report["whole"] = whole.bench_whole(args.dir, args.whole_calls, args.concurrency, args.rounds, args.engine_root, args.before_root)
        elif part == "breakdown":
            report["breakdown"] = breakdown.bench_breakdown(args.dir, args.whole_calls, args.concurrency, args.rounds, args.engine_root)
        elif part == "cache":
            report["cache"] = replay.bench_cache(args.dir)
        elif part == "rss":
            report["rss"] = rss.bench_rss(args.dir, args.rss_replicates, export=True, rule=args.rss_rule)
        elif part == "profile":
            print(cpu_profile.bench_profile(args.dir, args.calls, args.concurrency))
            continue
        else:
            raise SystemExit(f"unknown part {part!r}")
        print(f"{part}: {json.dumps(report[part], indent=2)} ({time.perf_counter() - t0:.0f} s)", flush=True)
    report["load_avg_end"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
