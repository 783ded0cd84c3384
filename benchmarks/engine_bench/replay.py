"""`--only cache`: a finished ~100,000-call experiment (baseline judge
`seqratio`) re-run: the same config (stored rows, no call; unchanged
exports kept), the same with results.jsonl removed (every export written
again), and with the run's rows and cell states deleted, so every item is
rebuilt and answered by the call cache. Times vs the first run."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from engine_bench.common import ROOT, baseline_judge, config_for, experiment_text, fresh_store



FORGET_RUN = """
import sys
sys.path.insert(0, {root!r})
import lmdb
from engine.cache.store import Store
store = Store({store!r})
run_key = bytes.fromhex({run_id!r})
while True:
    try:
        with store.env.begin(write=True) as txn:
            for name in ("rows", "runs"):
                db = store.db(name)
                for key in [k for k, _ in txn.cursor(db=db) if k.startswith(run_key)]:
                    txn.delete(key, db=db)
        break
    except lmdb.MapFullError:
        store.env.set_mapsize(store.env.info()["map_size"] * 2)
left = sum(1 for name in ("rows", "runs") for k, _ in store.items_raw(name, run_key))
store.close()
assert left == 0, left
"""


def forget_run(store: Path, run_id: str) -> None:
    """Delete a run's rows and cell states (in a child process: a clean LMDB handle)."""
    subprocess.run([sys.executable, "-c", FORGET_RUN.format(root=str(ROOT), store=str(store), run_id=run_id)], check=True)


def bench_cache(bench_dir: Path) -> dict:
    from engine.run.runner import run_experiment

    store = fresh_store(bench_dir, "cache-store")
    # 4 needles x 2 hays x 100 positions x 2 replicates x 63 documents = 100,800 calls
    text = experiment_text(store=store, output=bench_dir / "cache-out", n=63, replicates=2, judge=baseline_judge())
    config = config_for(text)
    t0 = time.perf_counter()
    first = run_experiment(config, quiet=True)
    first_s = time.perf_counter() - t0
    first_lines = Path(first.results_jsonl).read_bytes().splitlines()
    t0 = time.perf_counter()
    again = run_experiment(config, quiet=True)
    again_s = time.perf_counter() - t0
    assert again.calls_network == 0 and again.rows == first.rows
    same_file = Path(again.results_jsonl).read_bytes().splitlines() == first_lines
    # the same with the exports written again (results.jsonl removed first)
    Path(again.results_jsonl).unlink()
    t0 = time.perf_counter()
    reexported = run_experiment(config, quiet=True)
    reexport_s = time.perf_counter() - t0
    assert reexported.calls_network == 0 and Path(reexported.results_jsonl).read_bytes().splitlines() == first_lines
    # (b) lose the run's rows and cell states: every item comes back from the call cache
    forget_run(store, first.run_id)
    t0 = time.perf_counter()
    rebuilt = run_experiment(config, quiet=True)
    rebuilt_s = time.perf_counter() - t0
    assert rebuilt.calls_network == 0 and rebuilt.calls_cached == first.calls_network + first.calls_cached, rebuilt
    rebuilt_lines = Path(rebuilt.results_jsonl).read_bytes().splitlines()
    # the same rows, except `cached`: now true (every call came from the cache)
    expected = [line.replace(b'"cached":false', b'"cached":true') for line in first_lines]
    same_rebuilt = expected == rebuilt_lines
    differences = [
        {k: (x[k], y[k]) for k in x if x[k] != y[k]}
        for x, y in ((json.loads(a), json.loads(b)) for a, b in zip(expected, rebuilt_lines) if a != b)
    ][:3]
    return {
        "calls": first.calls_network,
        "rows": first.rows,
        "first_run_s": first_s,
        "rerun_s": again_s,
        "rerun_fraction_of_first": again_s / first_s,
        "rerun_results_per_s": again.rows / again_s,
        "rerun_same_jsonl_bytes": same_file,
        "rerun_reexport_s": reexport_s,
        "rerun_reexport_fraction_of_first": reexport_s / first_s,
        "rerun_reexport_results_per_s": reexported.rows / reexport_s,
        "from_call_cache_s": rebuilt_s,
        "from_call_cache_fraction_of_first": rebuilt_s / first_s,
        "from_call_cache_results_per_s": rebuilt.rows / rebuilt_s,
        "from_call_cache_rows_equal_but_cached_flag": same_rebuilt,
        "first_differences": differences,
    }
