"""Reliability figures (issue 15), every one from real processes: `needlejudge
run` and the fake provider server (`needlejudge fake-server`) each in its own
process on 127.0.0.1. The tables go into RELIABILITY.md.

    python benchmarks/bench_reliability.py                 # everything (~15 min on 2 busy cores)
    python benchmarks/bench_reliability.py --only crash    # or faults, load, storage, input

crash    SIGKILL `needlejudge run` at --kills seeded random moments (a random
         number of server requests in), resuming each time: rows lost, final
         results vs an uninterrupted run, calls paid twice per kill against
         the calls in flight and the answers not yet committed at the kill.
         Then SIGINT and SIGTERM: exit status, message, paid twice after.
faults   Every fault kind of the fake server at 10% and 30% (and 429s from
         its rpm bucket, a transient mix at 30%, a breaker-opening burst):
         fault x outcome counts, crashes, failures turned into scores, final
         data vs the fault-free run.
load     --load-calls calls at --load-concurrency against the fake server
         with latency: open fds, RssAnon of the run and of its commit
         process, and calls/s per 10 s window, sampled every second.
storage  Two processes on one store (same experiment; different ones), a
         tiny LMDB map that must grow mid-run, a corrupt and a foreign store
         file, a full disk (tmpfs).
input    Every malformed config and corpus case of
         tests/reliability_bad_input.py and the message it gets.

The corpus (bundled sample, min 100 characters per sentence) is prepared
once into BENCH_DIR/corpus and copied for each fresh store. The tables are
drawn by benchmarks/reliability_tables.py.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from reliability_faults import (  # noqa: E402
    TERMINAL_KINDS,
    TRANSIENT_KINDS,
    breaker_burst,
    fault,
    run_scenario,
    science_by_item,
    transient_mix,
)
from reliability_fixtures import (  # noqa: E402
    FakeServerProcess,
    RunProcess,
    cached_calls,
    copy_store,
    experiment_toml,
    open_fds,
    paid_twice,
    proc_status,
    results,
    run_to_end,
    science,
    settled_stats,
    store_rows,
    wait_for_requests,
)

from reliability_tables import markdown  # noqa: E402

from engine.corpus.prepare import BUNDLED_CORPUS  # noqa: E402

MIN_CHARS = 100.0


def prepared_corpus(bench_dir: Path) -> Path:
    from engine.corpus.prepare import CorpusSettings, prepare_corpus
    from engine.cache.store import Store

    path = bench_dir / "corpus"
    with Store(path) as store:
        summary = prepare_corpus([BUNDLED_CORPUS], store, CorpusSettings(min_chars_per_sentence=MIN_CHARS))
    print(f"corpus: {summary.kept_screening} documents ({'reused' if summary.reused else f'prepared in {summary.seconds:.0f} s'})", flush=True)
    return path


def write_config(folder: Path, corpus: Path, url: str, **design: Any) -> Path:
    store = copy_store(corpus, folder / "store")
    path = folder / "exp.toml"
    path.write_text(experiment_toml(store=store, output=folder / "out", url=url, corpus=BUNDLED_CORPUS, min_chars=MIN_CHARS, **design))
    return path


# ---------------------------------------------------------------------------
# crash

CRASH_DESIGN = dict(needles='["none", "neg", "con", "ner"]', positions="k = 4", n=10, checks=(10, 10, 10), concurrency=16)


def bench_crash(bench_dir: Path, corpus: Path, kills: int, seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with FakeServerProcess(latency="fixed:0.02") as server:
        reference_config = write_config(bench_dir / "crash-reference", corpus, server.url, **CRASH_DESIGN)
        server.reset()
        t0 = time.perf_counter()
        code, _, err = run_to_end(reference_config)
        assert code == 0, err
        calls = server.stats()["requests"]
        expected = science(reference_config.parent / "out" / "results.jsonl")
        out["reference"] = {"calls": calls, "rows": len(expected), "seconds": round(time.perf_counter() - t0, 1)}
        print(f"crash: uninterrupted run {calls} calls, {len(expected)} rows", flush=True)

        config = write_config(bench_dir / "crash", corpus, server.url, **CRASH_DESIGN)
        store = config.parent / "store"
        rng = random.Random(seed)
        server.reset()
        kept: dict[bytes, tuple] = {}
        per_kill: list[dict[str, Any]] = []
        lost = 0
        while len(per_kill) < kills:
            run = RunProcess(config)
            stats = server.stats()
            remaining = max(2, calls - stats["distinct_completed"])
            target = stats["requests"] + rng.randint(1, max(2, remaining // 2))
            if not wait_for_requests(server, target, run):
                run.wait()
                print("crash: the run finished before its kill moment; starting over is not needed", flush=True)
                break
            at_kill = server.stats()
            run.signal(signal.SIGKILL)
            code, _, _ = run.wait()
            after = settled_stats(server)
            rows = store_rows(store)
            lost += sum(rows.get(key) != value for key, value in kept.items())
            kept = rows
            if per_kill:
                per_kill[-1]["paid_twice"] = paid_twice(at_kill) - per_kill[-1]["repeats_before"]
            per_kill.append({
                "kill": len(per_kill) + 1,
                "exit": code,
                "requests_at_kill": at_kill["requests"],
                "in_flight_at_kill": at_kill["requests"] - sum(at_kill["by_status"].values()),
                "uncommitted": after["distinct_completed"] - cached_calls(store),
                "rows_kept": len(rows),
                "repeats_before": paid_twice(after),
            })
        code, _, err = run_to_end(config)
        assert code == 0, err
        final_stats = server.stats()
        if per_kill:
            per_kill[-1]["paid_twice"] = paid_twice(final_stats) - per_kill[-1]["repeats_before"]
        final = store_rows(store)
        lost += sum(final.get(key) != value for key, value in kept.items())
        out["kills"] = per_kill
        out["rows_lost"] = lost
        out["identical_to_uninterrupted"] = science(config.parent / "out" / "results.jsonl") == expected
        out["paid_twice_total"] = paid_twice(final_stats)
        out["concurrency"] = CRASH_DESIGN["concurrency"]
        out["requests_total"] = final_stats["requests"]
        out["graceful"] = []
        for trial in range(3):
            for signum, group in ((signal.SIGINT, False), (signal.SIGTERM, False), (signal.SIGINT, True), (signal.SIGTERM, True)):
                moment = calls * (trial + 1) // 4
                out["graceful"].append(graceful_stop(bench_dir, corpus, server, signum, moment, group=group))
                print(f"crash: {json.dumps(out['graceful'][-1])}", flush=True)
    return out


def graceful_stop(bench_dir: Path, corpus: Path, server: FakeServerProcess, signum: int, moment: int, *, group: bool = False) -> dict[str, Any]:
    import os

    name = signal.Signals(signum).name + (" to the process group" if group else "")
    config = write_config(bench_dir / f"stop-{signum}-{group}", corpus, server.url, **CRASH_DESIGN)
    server.reset()
    run = RunProcess(config)
    wait_for_requests(server, moment, run)
    at_signal = server.stats()
    if group:
        run.children()
        os.killpg(run.pid, signum)
    else:
        run.signal(signum)
    t0 = time.perf_counter()
    code, _, err = run.wait(120)
    stopped_in = time.perf_counter() - t0
    stopped = settled_stats(server)
    cached = cached_calls(config.parent / "store")
    resumed, _, resume_err = run_to_end(config)
    final = server.stats()
    return {
        "signal": name,
        "at_request": moment,
        "exit": code,
        "stopped_in_s": round(stopped_in, 2),
        "message": " / ".join(line for line in err.strip().splitlines() if line)[-400:],
        "answered_at_signal": at_signal["distinct_completed"],
        "committed": cached,
        "abandoned_in_flight": stopped["distinct_completed"] - cached,
        "resume_exit": resumed,
        "paid_twice_after_resume": paid_twice(final),
    }


# ---------------------------------------------------------------------------
# faults

FAULT_DESIGN = dict(concurrency=8)


def bench_faults(bench_dir: Path, corpus: Path) -> dict[str, Any]:
    scenarios: list[tuple[str, list[dict[str, Any]], dict[str, Any]]] = []
    for kind in (*TRANSIENT_KINDS, *TERMINAL_KINDS):
        for rate in (0.10, 0.30):
            scenarios.append((f"{kind} {rate:.0%}", [fault(kind, rate)], {}))
    scenarios.append(("429 from the rpm bucket (x-ratelimit-*, retry-after)", [], {"rpm": 1200.0}))
    scenarios.append(("transient mix 30%", transient_mix(0.30), {}))
    scenarios.append(("breaker: 100 consecutive 500s", breaker_burst(length=100), {}))
    out: dict[str, Any] = {}
    with FakeServerProcess(latency="fixed:0.01") as server:
        base = run_scenario(server, bench_dir / "faults-free", corpus, corpus=BUNDLED_CORPUS, min_chars=MIN_CHARS, reference=None, faults=[], **FAULT_DESIGN)
        reference = science_by_item(results(bench_dir / "faults-free" / "out" / "results.jsonl"))
        out["fault-free"] = base
        print(f"faults: fault-free run {base['requests']} calls", flush=True)
        for number, (name, faults, extra) in enumerate(scenarios):
            t0 = time.perf_counter()
            report = run_scenario(server, bench_dir / f"faults-{number}", corpus, corpus=BUNDLED_CORPUS, min_chars=MIN_CHARS,
                                  reference=reference, faults=faults, **extra, **FAULT_DESIGN)
            report["seconds"] = round(time.perf_counter() - t0, 1)
            out[name] = report
            print(f"faults: {name}: {json.dumps(report)}", flush=True)
    return out


# ---------------------------------------------------------------------------
# load


def bench_load(bench_dir: Path, corpus: Path, calls: int, concurrency: int, latency: str) -> dict[str, Any]:
    # k = 9: 800 experimental cells; n documents each, and replicates, to reach `calls`
    replicates = 2
    n = max(1, math.ceil(calls / (800 * replicates)))
    design = dict(needles='["none", "neg", "con", "ner"]', positions="k = 9", n=n, checks=(0, 0, 0), replicates=replicates,
                  concurrency=concurrency, timeout_s=60.0)
    samples: list[dict[str, Any]] = []
    with FakeServerProcess(latency=latency) as server:
        config = write_config(bench_dir / "load", corpus, server.url, **design)
        server.reset()
        run = RunProcess(config, "--json")
        stop = threading.Event()

        def sample() -> None:
            t0 = time.monotonic()
            while not stop.is_set():
                children = run.children()
                row = {
                    "t": round(time.monotonic() - t0, 1),
                    "fds": open_fds(run.pid),
                    "rss_anon_kb": proc_status(run.pid, "RssAnon"),
                    "commit_rss_anon_kb": sum(proc_status(pid, "RssAnon") or 0 for pid in children),
                    "server_fds": open_fds(server.pid),
                    "server_rss_anon_kb": proc_status(server.pid, "RssAnon"),
                }
                try:
                    row["requests"] = server.stats()["requests"]
                except OSError:
                    row["requests"] = None
                samples.append(row)
                stop.wait(1.0)

        sampler = threading.Thread(target=sample, daemon=True)
        t0 = time.perf_counter()
        sampler.start()
        code, out, err = run.wait(3600)
        wall = time.perf_counter() - t0
        stop.set()
        sampler.join()
        stats = server.stats()
    summary = json.loads(out) if code == 0 else {}
    windows = []
    points = [s for s in samples if s["requests"] is not None]
    start = 0
    for index, point in enumerate(points):
        if point["t"] - points[start]["t"] >= 10.0:
            windows.append((point["requests"] - points[start]["requests"]) / (point["t"] - points[start]["t"]))
            start = index
    live = [s for s in samples if s["rss_anon_kb"]]
    return {
        "exit": code,
        "stderr_tail": err[-500:],
        "wall_s": round(wall, 1),
        "requests": stats["requests"],
        "calls_network": summary.get("calls_network"),
        "rows": summary.get("rows"),
        "statuses": summary.get("status_counts"),
        "concurrency": concurrency,
        "latency": latency,
        "fd_limit": _fd_limit(),
        "fds_max": max((s["fds"] or 0) for s in samples),
        "server_fds_max": max((s["server_fds"] or 0) for s in samples),
        "rss_anon_mb": _quartiles([s["rss_anon_kb"] / 1024 for s in live]),
        "commit_rss_anon_mb": _quartiles([s["commit_rss_anon_kb"] / 1024 for s in live if s["commit_rss_anon_kb"]]),
        "rate_per_10s": [round(w) for w in windows],
        "samples": samples,
    }


def _fd_limit() -> tuple[int, int]:
    import resource

    return resource.getrlimit(resource.RLIMIT_NOFILE)


def _quartiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    ordered = sorted(values)
    pick = lambda q: round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 1)  # noqa: E731
    third = max(1, len(ordered) // 3)
    return {"min": pick(0), "median": pick(0.5), "max": round(ordered[-1], 1),
            "first_third_max": round(max(ordered[:third]), 1), "last_third_max": round(max(values[-third:]), 1)}


# ---------------------------------------------------------------------------
# main


def machine() -> str:
    cpu = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = open("/proc/loadavg").read().split()[:3]
    return f"{platform.machine()} {cpu}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}, load average {' '.join(load)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bench-dir", type=Path, default=Path("/tmp/needlejudge-bench-reliability"))
    parser.add_argument("--only", default="crash,faults,load,storage,input")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--load-calls", type=int, default=100_000)
    parser.add_argument("--load-concurrency", type=int, default=1000)
    parser.add_argument("--load-latency", default="uniform:0.05,0.25")
    parser.add_argument("--json-out", type=Path, default=None, help="write every figure as JSON here")
    parser.add_argument("--render", type=Path, nargs="+", default=None, help="print the tables of earlier --json-out files (merged) and exit")
    args = parser.parse_args()
    if args.render:
        merged: dict[str, Any] = {}
        for path in args.render:
            merged.update(json.loads(path.read_text()))
        print(markdown(merged))
        return
    args.bench_dir.mkdir(parents=True, exist_ok=True)
    parts = set(args.only.split(","))
    print(f"machine: {machine()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}", flush=True)
    corpus = prepared_corpus(args.bench_dir)
    figures: dict[str, Any] = {"machine": machine(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if "crash" in parts:
        figures["crash"] = bench_crash(args.bench_dir, corpus, args.kills, args.seed)
        print(json.dumps(figures["crash"], indent=1), flush=True)
    if "faults" in parts:
        figures["faults"] = bench_faults(args.bench_dir, corpus)
    if "load" in parts:
        figures["load"] = bench_load(args.bench_dir, corpus, args.load_calls, args.load_concurrency, args.load_latency)
        print(json.dumps({k: v for k, v in figures["load"].items() if k != "samples"}, indent=1), flush=True)
    if "storage" in parts:
        from reliability_storage import storage_figures

        figures["storage"] = storage_figures(args.bench_dir, corpus, BUNDLED_CORPUS, MIN_CHARS)
        print(json.dumps(figures["storage"], indent=1), flush=True)
    if "input" in parts:
        from reliability_bad_input import bad_input_table

        figures["input"] = bad_input_table(args.bench_dir / "input")
        for case in figures["input"]:
            print(f"| {case['case']} | {case['exit']} | {case['message']} |", flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(figures, indent=1))
    print(markdown(figures))


if __name__ == "__main__":
    main()
