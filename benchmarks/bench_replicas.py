"""Replicas behind one judge (issue 19): how far one engine process scales
over N simulated GPU replicas.

    python benchmarks/bench_replicas.py                         # N = 1, 2, 4, 8, 16
    python benchmarks/bench_replicas.py --replicas 1 2 4 --capacity 100 --seconds 6

Each replica is a fake provider server in its own process in capacity mode
(`needlejudge fake-server --capacity C --latency fixed:L`): a simulated GPU
that serves at most C calls/s, each call waiting behind the batch already
queued. One engine process (`run_experiment`: pairs, prompts, keys, cache,
adapter, commit process, rows) runs a fresh design against one
openai-compatible judge listing the N replicas in `base_urls`, with
`replica_concurrency` calls in flight per replica.

Reported per N: calls/s (completed calls over the window from the first
request to the last answer, which leaves out the engine's start-up) against N x C, the
CPU seconds per call of the engine (this process and its commit process,
over the whole run) and of the replicas (their processes), and the CPU
those imply: where (engine + replicas) CPU per call x calls/s reaches the
cores free on this machine, the curve bends.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_engine import config_for, corpus_store, experiment_text, free_port, fresh_store  # noqa: E402

CELLS = 4 * 2 * 100  # prompts x hays x positions of the bench_engine design


class Replica:
    """One simulated GPU replica: a fake server process in capacity mode."""

    def __init__(self, capacity: float, latency_s: float) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "engine.cli", "fake-server", "--port", str(self.port),
             "--capacity", str(capacity), "--latency", f"fixed:{latency_s}"],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                self.stats()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"replica on port {self.port} did not start")

    def stats(self) -> dict:
        return json.loads(urllib.request.urlopen(f"{self.url}/_fake/stats", timeout=5).read())

    def cpu_s(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def replica_judge(urls: list[str], per_replica: int) -> str:
    listed = ", ".join(f'"{u}/v1"' for u in urls)
    return f"""
    [[judges]]
    name = "sim"
    adapter = "openai-compatible"
    model = "local-sim"
    base_urls = [{listed}]
    concurrency = {per_replica * len(urls)}
    timeout_s = 60.0
    options = {{ replica_concurrency = {per_replica} }}
    """


def one_point(bench_dir: Path, n: int, args: argparse.Namespace) -> dict:
    from engine.runner import run_experiment

    replicas = [Replica(args.capacity, args.latency) for _ in range(n)]
    try:
        for replica in replicas:
            replica.wait_ready()
        n_per_cell = max(1, round(n * args.capacity * args.seconds / CELLS))
        store = fresh_store(bench_dir, "replicas-store")
        judge = replica_judge([r.url for r in replicas], args.per_replica)
        config = config_for(experiment_text(store=store, output=bench_dir / "replicas-out", n=n_per_cell, replicates=1, judge=judge))
        server_cpu0 = sum(r.cpu_s() for r in replicas)
        times0, t0 = os.times(), time.perf_counter()
        summary = run_experiment(config, quiet=True, export=False)
        wall, times1 = time.perf_counter() - t0, os.times()
        engine_cpu = sum(times1[:4]) - sum(times0[:4])  # this process + its reaped commit process
        server_cpu = sum(r.cpu_s() for r in replicas) - server_cpu0
        stats = [r.stats() for r in replicas]
    finally:
        for replica in replicas:
            replica.stop()
    done = sum(s["completed"] for s in stats)
    window = max(s["last_completed_at"] for s in stats) - min(s["first_request_at"] for s in stats if s["first_request_at"])
    rate = done / window
    return {
        "replicas": n,
        "capacity_total": n * args.capacity,
        "calls": summary.calls_network,
        "completed": done,
        "per_replica": [s["completed"] for s in stats],
        "repeated": sum(s["repeated_completions"] for s in stats),
        "calls_per_s": rate,
        "of_capacity": rate / (n * args.capacity),
        "wall_s": wall,
        "engine_cpu_s": engine_cpu,
        "engine_cpu_ms_per_call": 1000 * engine_cpu / done,
        "engine_core_share": engine_cpu / wall,  # the fraction of one core the engine got over its run
        "replica_cpu_ms_per_call": 1000 * server_cpu / done,
        "batch_peak": max(s["batch_peak"] for s in stats),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--capacity", type=float, default=100.0, help="calls/s of one simulated replica (C)")
    parser.add_argument("--latency", type=float, default=0.01, help="a lone call's latency on a replica, seconds")
    parser.add_argument("--per-replica", type=int, default=32, help="replica_concurrency: calls in flight per replica")
    parser.add_argument("--seconds", type=float, default=6.0, help="target run length at full capacity")
    parser.add_argument("--bench-dir", default="/tmp/needlejudge-bench-replicas")
    parser.add_argument("--json", default=None, help="write the figures here too")
    args = parser.parse_args()
    bench_dir = Path(args.bench_dir)
    bench_dir.mkdir(parents=True, exist_ok=True)
    corpus_store(bench_dir)
    print(f"load average before: {os.getloadavg()}  cores: {os.cpu_count()}", flush=True)
    one_point(bench_dir, 1, argparse.Namespace(**{**vars(args), "seconds": 1.0}))  # warm-up: imports, page cache
    points = []
    for n in args.replicas:
        point = one_point(bench_dir, n, args)
        points.append(point)
        print(
            f"N={n:2d}  {point['calls_per_s']:7.1f} calls/s of N x C = {point['capacity_total']:6.0f} "
            f"({point['of_capacity']:.2f})  engine CPU {point['engine_cpu_ms_per_call']:.2f} ms/call "
            f"(a {point['engine_core_share']:.2f} core share)  "
            f"replicas CPU {point['replica_cpu_ms_per_call']:.2f} ms/call  calls {point['completed']}  "
            f"repeated {point['repeated']}  batch peak {point['batch_peak']}  load {os.getloadavg()[0]:.1f}",
            flush=True,
        )
    if len(points) > 1:  # engine CPU = start-up + per call x calls: the slope is the cost of a call
        xs, ys = [p["completed"] for p in points], [p["engine_cpu_s"] for p in points]
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        print(f"engine CPU per call (least-squares slope over the points): {1000 * slope:.2f} ms; "
              f"start-up: {my - slope * mx:.2f} s; one core's worth: {1 / slope:.0f} calls/s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "load_after": os.getloadavg(), "points": points}, indent=1))


if __name__ == "__main__":
    main()
