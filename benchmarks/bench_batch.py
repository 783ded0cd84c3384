"""Batch mode vs synchronous mode on one design (issue 18).

    python benchmarks/bench_batch.py                  # 4 needles x 2 hays x 100 positions
    python benchmarks/bench_batch.py --k 4            # 25 positions (quicker)

The design: needles none/neg/con/ner x hays orig/rand x positions
0 <= i, j <= k (k = 9: 100 positions), no check cells, the bundled corpus
(prepared once into BENCH_DIR/corpus, as benchmarks/bench_engine.py does),
one commercial judge: OpenAI `gpt-4o-mini-2024-07-18` over the fake provider
server (its own process, zero latency for synchronous calls; batches end
after `--batch-delay` seconds), `prices` at its list price.

For each stopping rule (`ci` at +-3 points as the issue asks, which no cell
reaches within the bundled corpus's 88 documents; `ci` at +-12, about the
narrowest its 800 cells reach (alpha 0.05 / 800 per cell); the paper rule
with a minimum the corpus can reach (20), `fixed` n = 20), a synchronous
run and a batch run, each on a fresh store: calls, tokens, dollars, waves, wall time, and the
over-submission of the batch run: calls past what the synchronous run of
the same data needed (the rows are identical; checked). The cost table
prices the runs' own token counts: synchronous, batch (every token at the
batch discount) and batch with prompt caching (cached input tokens, as the
fake server reports them for OpenAI's automatic prefix caching, at the
cached-input price, then the batch discount).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_engine import FakeServerProcess, config_for, corpus_store, experiment_text, fresh_store  # noqa: E402

MODEL = "gpt-4o-mini-2024-07-18"
# OpenAI list prices of gpt-4o-mini, USD per million tokens (platform.openai.com/pricing):
# input 0.15, cached input 0.075, output 0.60; the Batch API bills half.
PRICES = {"input": 0.15, "cached_input": 0.075, "output": 0.60, "batch_discount": 0.5}
KEY_ENV = "NJ_BENCH_BATCH_KEY"
# name -> (kind, the rest of its [stopping] table)
RULES = {
    "ci": ("ci", "epsilon = 3.0\n"),  # the rule: +-3 points
    "ci12": ("ci", "epsilon = 12.0\n"),  # about the narrowest 800 cells reach within the corpus's 88 documents
    "paper": ("paper", "min_docs = 20\n"),  # its default minimum (100) is past the corpus
    "fixed": ("fixed", ""),  # n = 20
}


def judge_text(url: str, mode: str, poll_s: float) -> str:
    prices = ", ".join(f"{name} = {value}" for name, value in PRICES.items())
    return f"""
    [[judges]]
    name = "gpt-4o-mini"
    adapter = "openai"
    model = "{MODEL}"
    base_url = "{url}/v1"
    api_key_env = "{KEY_ENV}"
    concurrency = 64
    timeout_s = 60.0
    mode = "{mode}"
    batch_poll_s = {poll_s}
    prices = {{ {prices} }}
    """


class BatchFakeServer(FakeServerProcess):
    """The fake server with the prepared corpus (its judge recovers each item exactly)."""

    def __init__(self, store: Path) -> None:
        super().__init__()
        self.store = store

    def command(self) -> list[str]:
        return [*super().command(), "--store", str(self.store)]

    def configure(self, **changes: object) -> None:
        request = urllib.request.Request(f"{self.url}/_fake/config", data=json.dumps(changes).encode(), method="POST")
        urllib.request.urlopen(request, timeout=10).read()


def run_once(bench_dir: Path, server: BatchFakeServer, *, k: int, rule: str, mode: str, poll_s: float) -> dict:
    from engine.run.results import iter_rows
    from engine.run.runner import run_experiment
    from engine.cache.store import Store

    name = f"{rule}-{mode}"
    store = fresh_store(bench_dir, name)
    kind, stopping = RULES[rule]
    # the default needles (none, neg, con, ner), hays (orig, rand) and prompt (bands); no check cells
    text = experiment_text(store=store, output=bench_dir / f"{name}-out", n=20, replicates=1, judge=judge_text(server.url, mode, poll_s),
                           k=k, kind=kind, stopping=stopping)
    t0 = time.perf_counter()
    summary = run_experiment(config_for(text), quiet=True)
    wall = time.perf_counter() - t0
    with Store(store) as opened:
        rows = list(iter_rows(opened, bytes.fromhex(summary.run_id)))
    cached_tokens = sum(row.cached_tokens for row in rows)
    row_prompt_tokens = sum(row.prompt_tokens for row in rows)
    return {
        "rule": rule,
        "mode": mode,
        "calls": summary.calls_network,
        "rows": summary.rows,
        "needed_calls": len({key for row in rows for key in row.cache_keys}),
        "prompt_tokens": summary.prompt_tokens,
        "completion_tokens": summary.completion_tokens,
        # the share of prompt tokens the provider served from its prefix cache (of the rows' calls)
        "cached_share": cached_tokens / row_prompt_tokens if row_prompt_tokens else 0.0,
        "cost_usd_engine": summary.cost_usd_run,
        "waves": summary.batch_waves,
        "batches": summary.batches_submitted,
        "wall_s": wall,
        "stop_reasons": summary.stop_reasons,
        "outcomes": sorted((r.needle, r.hay, r.i, r.j, r.doc_index, r.status, r.score) for r in rows),
    }


def dollars(run: dict, *, batch: bool, caching: bool) -> float:
    cached = run["prompt_tokens"] * run["cached_share"] if caching else 0.0
    usd = ((run["prompt_tokens"] - cached) * PRICES["input"] + cached * PRICES["cached_input"] + run["completion_tokens"] * PRICES["output"]) / 1e6
    return usd * (PRICES["batch_discount"] if batch else 1.0)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dir", type=Path, default=Path(os.environ.get("BENCH_DIR", "/tmp/nj-bench-batch")))
    parser.add_argument("--k", type=int, default=9, help="positions 0 <= i, j <= k (default 9: 100 positions)")
    parser.add_argument("--rules", default=",".join(RULES))
    parser.add_argument("--batch-delay", type=float, default=2.0, help="seconds the fake server takes to process a batch")
    parser.add_argument("--poll-s", type=float, default=0.5)
    parser.add_argument("--sweep-only", action="store_true", help="only replay the planner's settings on the stored sync runs")
    args = parser.parse_args()
    if args.sweep_only:
        sweep(args.bench_dir)
        return 0
    os.environ.setdefault(KEY_ENV, "bench-key")
    corpus = corpus_store(args.bench_dir)
    results = []
    with BatchFakeServer(corpus) as server:
        server.configure(batch={"delay_s": args.batch_delay})
        for rule in args.rules.split(","):
            sync = run_once(args.bench_dir, server, k=args.k, rule=rule, mode="sync", poll_s=args.poll_s)
            batch = run_once(args.bench_dir, server, k=args.k, rule=rule, mode="batch", poll_s=args.poll_s)
            same = sync.pop("outcomes") == batch.pop("outcomes")
            results.append((rule, sync, batch, same))
            print(json.dumps({"rule": rule, "same_rows": same, "sync": sync, "batch": batch}), flush=True)
    print_tables(results, args)
    if {"ci", "ci12", "paper"} <= {rule for rule, *_ in results}:
        sweep(args.bench_dir)
    return 0


def print_tables(results: list, args: argparse.Namespace) -> None:
    print(f"\ncost (k = {args.k}, batch delay {args.batch_delay:g} s, prices {PRICES})")
    print("| rule | mode | calls | prompt tokens | completion tokens | $ | waves | wall s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for rule, sync, batch, _ in results:
        rows = [
            ("sync", sync, dollars(sync, batch=False, caching=False)),
            ("sync + prompt caching", sync, dollars(sync, batch=False, caching=True)),
            ("batch", batch, dollars(batch, batch=True, caching=False)),
            ("batch + prompt caching", batch, dollars(batch, batch=True, caching=True)),
        ]
        for mode, run, usd in rows:
            waves = run["waves"] if run["mode"] == "batch" else "-"
            print(f"| {rule} | {mode} | {run['calls']:,} | {run['prompt_tokens']:,} | {run['completion_tokens']:,} | {usd:.4f} | {waves} | {run['wall_s']:.0f} |")
    print("\nwaves and over-submission")
    print("| rule | rows (same in both) | calls needed | sync calls | batch calls | waves | batch over needed | batch over sync |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for rule, sync, batch, same in results:
        need = batch["needed_calls"]
        print(
            f"| {rule} | {batch['rows']:,} ({'yes' if same else 'NO'}) | {need:,} | {sync['calls']:,} | {batch['calls']:,} | {batch['waves']} | "
            f"{batch['calls'] - need:,} ({(batch['calls'] - need) / need:.1%}) | {batch['calls'] - sync['calls']:+,} ({batch['calls'] / sync['calls'] - 1:+.1%}) |"
        )


# ---------------------------------------------------------------------------
# The planner's trade-off, replayed on the synchronous runs' scores


def stored_cells(store_path: Path) -> dict[tuple, list[float | None]]:
    """Each cell's consumed documents in order: its ok score, or None (a failed document)."""
    from engine.run.results import RUNS_DB, iter_rows
    from engine.cache.store import Store

    with Store(store_path, readonly=True) as store:
        run_key = next(key[:8] for key, _ in store.items_raw(RUNS_DB))
        cells: dict[tuple, list[float | None]] = {}
        for row in iter_rows(store, run_key):
            cells.setdefault((row.needle, row.hay, row.i, row.j), []).append(row.score if row.status == "ok" else None)
    return cells


def replay_waves(cells: dict[tuple, list[float | None]], available: dict[tuple, int], rule: str, **planner: float) -> tuple[int, int]:
    """(waves, documents submitted) of the wave loop (engine.run.batch.judge) on
    these cells' score sequences, without failures: each wave asks each live
    cell for `wave_size` documents; documents past its stop are submitted and
    dropped; `available` bounds the documents a cell has in all."""
    from engine.stopping.rules import make_rule_factory
    from engine.stopping.spec import CiSpec, FixedSpec, PaperSpec
    from engine.run.batch.wave_planner import wave_size

    kind, extra = RULES[rule]
    settings = dict(line.split(" = ") for line in extra.strip().splitlines())
    spec = {"ci": CiSpec, "paper": PaperSpec, "fixed": FixedSpec}[kind](**{k: float(v) if "." in v else int(v) for k, v in settings.items()})
    if kind == "fixed":
        spec = FixedSpec(n=20)
    new_rule = make_rule_factory(spec, len(cells))
    live = {cell: (new_rule(), 0) for cell in cells}
    waves = submitted = 0
    while live:
        waves += 1
        for cell, (rule_state, used) in list(live.items()):
            count = wave_size(rule_state, outstanding=0, cap=88, min_docs=spec.resolved_min_docs, **planner) or 1
            count = min(count, available[cell] - used)
            submitted += count
            for score in cells[cell][used : used + count]:
                if score is not None:
                    rule_state.update(score)
                if rule_state.done:
                    break
            used += count
            if rule_state.done or used >= available[cell]:
                del live[cell]
            else:
                live[cell] = (rule_state, used)
    return waves, submitted


def sweep(bench_dir: Path) -> None:
    """Waves and documents submitted per planner setting, replayed on the sync runs' scores."""
    available = {cell: len(docs) for cell, docs in stored_cells(bench_dir / "ci-sync").items()}  # ci +-3: every cell ran out
    print("\nplanner trade-off (replayed on the synchronous runs' scores; documents, not calls)")
    print("| rule | setting | waves | documents submitted | needed | over |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    settings = {
        "ci12": [{"margin": m, "growth": g} for g in (2.0, 4.0, 8.0) for m in (0.0, 0.15, 0.5)],
        "paper": [{"min_wave": w} for w in (1, 5, 10, 20)],
    }
    for rule, options in settings.items():
        cells = stored_cells(bench_dir / f"{rule}-sync")
        needed = sum(len(docs) for docs in cells.values())
        for planner in options:
            waves, submitted = replay_waves(cells, available, rule, **planner)
            label = ", ".join(f"{k} {v:g}" for k, v in planner.items())
            print(f"| {rule} | {label} | {waves} | {submitted:,} | {needed:,} | {submitted - needed:,} ({submitted / needed - 1:.1%}) |")


if __name__ == "__main__":
    raise SystemExit(main())
