"""Replicas behind one judge (issue 19): how far one engine process scales
over N simulated GPU replicas, and what one failing replica of four costs.

    python benchmarks/bench_replicas.py                      # scaling: N = 1, 2, 4, 8, 16 at C = 50 calls/s
    python benchmarks/bench_replicas.py --capacity 25 --replicas 1 2 4
    python benchmarks/bench_replicas.py --faults             # the fault table: 4 replicas, one dies / hangs / 503s

Each replica is a fake provider server in its own process in capacity mode
(benchmarks/simulated_replicas.py over simulation/fake_server.py,
`capacity = C`): a simulated GPU that serves at most C calls/s, each call
waiting behind the batch already queued. One engine process
(`run_experiment`: pairs, prompts, keys, cache, adapter, commit process,
rows) runs a fresh design against one openai-compatible judge listing the
replicas in `base_urls`.

Scaling, per N: calls/s (completed calls over the window from the replicas'
first request to their last answer, which leaves out the engine's start-up)
against N x C. Over that same window a sampler thread reads the CPU time of
the engine (this process and its commit process), of the replicas, and of
the whole machine (/proc/stat), which gives per point:
  - engine CPU per call (ms) and the share of a core its main process got;
  - replica CPU per call (ms);
  - the cores other processes took (machine busy minus ours), hence the
    cores left to this benchmark;
  - the predicted bend: the calls/s the CPU allows, the smaller of
    (cores left, at most 1) / main-process CPU per call (one Python process
    drives the calls) and cores left / (engine + replica CPU per call).
Below the bend the engine should reach >= 0.9 x N x C; above it the CPU binds.
On a busy box the cores left are whatever the other processes did not take,
so where the box is saturated the predicted bend equals the measured rate by
construction: it says the CPU we got, not the replicas, set the rate. The
last line fits cores used = fixed + CPU per call x calls/s over the points
and predicts the bend of this box when idle.

Faults (--faults): 4 replicas; a run with no fault, then one run per fault in
which replica 2 dies (killed, restarted on its port after --fault-s), hangs
(accepts calls and never answers, for --fault-s) or answers 503 (for
--fault-s), --fault-at seconds after its first call. Per case: calls, calls
completed per replica (counted by the servers), calls paid twice (completed
at the servers minus the calls the run needed), results lost (design rows
without an ok result), the time from the fault to the replica's ejection and
from its recovery to its probe back in (from the adapter's log), and the
wall time against the no-fault run.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from simulated_replicas import start_replicas  # noqa: E402

CELLS = 4 * 2 * 100  # prompts x hays x positions of the bench_engine design
TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu_s(pid: int) -> float:
    """utime + stime of one process (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def thread_cpu_s(tid: int) -> float:
    """utime + stime of one thread of this process."""
    fields = Path(f"/proc/self/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_busy_s() -> float:
    """CPU seconds the whole machine spent busy (all cores; idle and iowait left out)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields[:8]) - fields[3] - fields[4]) / TICK


def replica_judge(urls: list[str], per_replica: int, *, timeout_s: float = 60.0, pause_s: float = 5.0) -> str:
    listed = ", ".join(f'"{u}/v1"' for u in urls)
    return f"""
    [[judges]]
    name = "sim"
    adapter = "openai-compatible"
    model = "local-sim"
    base_urls = [{listed}]
    concurrency = {per_replica * len(urls)}
    timeout_s = {timeout_s}
    options = {{ replica_concurrency = {per_replica}, replica_pause_s = {pause_s} }}
    """


def run_design(bench_dir: Path, judge: str, n_per_cell: int):  # type: ignore[no-untyped-def]
    """One whole-engine run of a fresh design (nothing cached) against `judge`: (summary, wall s)."""
    from bench_engine import config_for, experiment_text, fresh_store

    from engine.run.runner import run_experiment

    store = fresh_store(bench_dir, "replicas-store")
    config = config_for(experiment_text(store=store, output=bench_dir / "replicas-out", n=n_per_cell, replicates=1, judge=judge))
    t0 = time.perf_counter()
    summary = run_experiment(config, quiet=True, export=False)
    return summary, time.perf_counter() - t0


# ---------------------------------------------------------------------------
# Scaling


class CpuSampler:
    """Every 0.1 s: wall time and the CPU seconds of the engine's main process,
    its other children (the commit process), the replicas and the machine."""

    def __init__(self, replica_pids: set[int]) -> None:
        self.replica_pids = replica_pids
        self.samples: list[tuple[float, float, float, float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _sample(self) -> tuple[float, float, float, float, float]:
        import psutil

        children = {p.pid for p in psutil.Process().children(recursive=True)} - self.replica_pids
        own = proc_cpu_s(os.getpid()) - thread_cpu_s(threading.get_native_id())  # the engine, not this sampler
        return (time.time(), own, sum(proc_cpu_s(pid) for pid in children),
                sum(proc_cpu_s(pid) for pid in self.replica_pids), machine_busy_s())  # fmt: skip

    def _loop(self) -> None:
        while not self._stop.wait(0.1):
            self.samples.append(self._sample())

    def __enter__(self) -> CpuSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def rates(self, start: float, end: float) -> dict[str, float]:
        """Cores used by each part between the first sample at or after `start` and the last at or before `end`."""
        inside = [s for s in self.samples if start <= s[0] <= end]
        if len(inside) < 2:
            raise RuntimeError("the run was too short to sample its CPU; raise --seconds")
        (t0, *a), (t1, *b) = inside[0], inside[-1]
        main, commit, replicas, machine = ((y - x) / (t1 - t0) for x, y in zip(a, b))
        return {"main": main, "commit": commit, "replicas": replicas, "others": max(machine - main - commit - replicas, 0.0)}


def scaling_point(bench_dir: Path, n: int, args: argparse.Namespace) -> dict:
    replicas = start_replicas(n, args.capacity, args.latency)
    try:
        n_per_cell = max(1, round(n * args.capacity * args.seconds / CELLS))
        with CpuSampler({r.proc.pid for r in replicas}) as sampler:
            summary, wall = run_design(bench_dir, replica_judge([r.url for r in replicas], args.per_replica), n_per_cell)
        stats = [r.stats() for r in replicas]
    finally:
        for replica in replicas:
            replica.die()
    done = sum(s["completed"] for s in stats)
    start = min(s["first_request_at"] for s in stats if s["first_request_at"])
    end = max(s["last_completed_at"] for s in stats)
    rate = done / (end - start)
    cores = sampler.rates(start, end)
    engine_ms = 1000 * (cores["main"] + cores["commit"]) / rate
    main_ms, replica_ms = 1000 * cores["main"] / rate, 1000 * cores["replicas"] / rate
    free = max(os.cpu_count() - cores["others"], 0.0)  # type: ignore[operator]
    bend = min(min(free, 1.0) / (main_ms / 1000), free / ((engine_ms + replica_ms) / 1000))
    return {
        "replicas": n, "capacity_total": n * args.capacity, "calls": summary.calls_network, "completed": done,
        "per_replica": [s["completed"] for s in stats], "repeated": sum(s["repeated_completions"] for s in stats),
        "calls_per_s": rate, "of_capacity": rate / (n * args.capacity), "wall_s": wall,
        "engine_ms_per_call": engine_ms, "main_ms_per_call": main_ms, "main_core_share": cores["main"],
        "replica_ms_per_call": replica_ms, "others_cores": cores["others"], "free_cores": free,
        "predicted_bend": bend, "cpu_bound": n * args.capacity > bend, "batch_peak": max(s["batch_peak"] for s in stats),
    }  # fmt: skip


def scaling(bench_dir: Path, args: argparse.Namespace) -> list[dict]:
    print(f"C = {args.capacity:g} calls/s per replica, {args.per_replica} calls in flight per replica, "
          f"~{args.seconds:g} s of work at N x C per point; {os.cpu_count()} cores; "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)  # fmt: skip
    scaling_point(bench_dir, 1, argparse.Namespace(**{**vars(args), "seconds": 1.0}))  # warm-up: imports, page cache
    print(" N  N x C  calls/s  of NxC | engine ms/call  main core share | replicas ms/call | others' cores  "
          "predicted bend | verdict", flush=True)  # fmt: skip
    points = []
    for n in args.replicas:
        p = scaling_point(bench_dir, n, args)
        points.append(p)
        verdict = ("met (>= 0.9 x N x C)" if p["of_capacity"] >= 0.9
                   else ("CPU-bound (N x C above the bend)" if p["cpu_bound"] else "NOT met below the bend"))  # fmt: skip
        print(f"{n:2d} {p['capacity_total']:6.0f} {p['calls_per_s']:8.1f}  {p['of_capacity']:5.2f} | "
              f"{p['engine_ms_per_call']:14.2f}  {p['main_core_share']:15.2f} | {p['replica_ms_per_call']:16.2f} | "
              f"{p['others_cores']:13.2f}  {p['predicted_bend']:14.0f} | {verdict}  "
              f"(calls {p['completed']}, repeated {p['repeated']}, load {os.getloadavg()[0]:.2f})", flush=True)  # fmt: skip
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    if len(points) > 1:  # cores used = fixed per second + per call x calls/s; the slope is the CPU a call costs
        rates = [p["calls_per_s"] for p in points]
        main = fit(rates, [p["main_core_share"] for p in points])
        ours = fit(rates, [p["calls_per_s"] * (p["engine_ms_per_call"] + p["replica_ms_per_call"]) / 1000 for p in points])
        cores = os.cpu_count() or 1
        quiet = min((1 - main[0]) / main[1], (cores - ours[0]) / ours[1])
        print(f"CPU per call (least-squares slope of cores used against calls/s over the points): engine main process "
              f"{1000 * main[1]:.2f} ms (+{main[0]:.3f} cores fixed), engine + replicas {1000 * ours[1]:.2f} ms "
              f"(+{ours[0]:.3f} cores fixed). With this box idle ({cores} cores, nothing else running) the bend would be "
              f"at {quiet:.0f} calls/s (the engine's one core or all cores, whichever binds first), "
              f"i.e. N = {quiet / args.capacity:.1f} replicas of C = {args.capacity:g}", flush=True)  # fmt: skip
    return points


def fit(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares intercept and slope of ys against xs."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


# ---------------------------------------------------------------------------
# Faults


class AdapterLog(logging.Handler):
    """The replica pool's ejections and returns, with their wall-clock times."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[tuple[float, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append((record.created, record.getMessage()))

    def first(self, url: str, words: str, after: float) -> float | None:
        return next((t for t, m in self.records if t >= after and m.startswith(f"replica {url}/v1:") and words in m), None)


def fault_case(bench_dir: Path, fault: str, args: argparse.Namespace) -> dict:
    kind = "hang" if fault == "hangs" else "overloaded"
    replicas = start_replicas(4, args.capacity, args.latency, kind)
    victim, times = replicas[1], {}
    log = AdapterLog()
    logging.getLogger("needlejudge.adapters").addHandler(log)

    def inject() -> None:  # beside the run: the fault, then the recovery
        while victim.stats()["requests"] == 0:
            time.sleep(0.02)
        time.sleep(args.fault_at)
        times["fault"] = time.time()
        if fault == "dies":
            victim.die()
        else:
            victim.signal(signal.SIGUSR1)
        time.sleep(args.fault_s)
        times["recovered"] = time.time()
        if fault == "dies":
            victim.start()
            victim.wait_ready()  # a new process: a few seconds of Python start-up
        else:
            victim.signal(signal.SIGUSR2)
        times["up"] = time.time()

    n_per_cell = max(1, round(4 * args.capacity * args.fault_run_s / CELLS))
    injector = threading.Thread(target=inject, daemon=True)
    try:
        if fault != "none":
            injector.start()
        judge = replica_judge([r.url for r in replicas], args.fault_per_replica, timeout_s=args.fault_timeout_s,
                              pause_s=args.fault_pause_s)  # fmt: skip
        summary, wall = run_design(bench_dir, judge, n_per_cell)
        injector.join(timeout=args.fault_at + args.fault_s + 30) if fault != "none" else None
    finally:
        logging.getLogger("needlejudge.adapters").removeHandler(log)
        for replica in replicas:
            replica.die()
    totals = [r.totals() for r in replicas]
    completed = [t["completed"] for t in totals]
    rows = CELLS * n_per_cell
    out = {
        "fault": fault, "calls": summary.calls_network, "completed": completed,
        "paid_twice": sum(completed) - summary.calls_network, "repeated_on_one_server": sum(t["repeated"] for t in totals),
        "lost": rows - summary.status_counts.get("ok", 0), "rows": rows, "status_counts": summary.status_counts,
        "victim_requests": totals[1]["requests"], "wall_s": wall, "ejected_after_s": None, "up_again_after_s": None, "back_in_after_s": None,
    }  # fmt: skip
    if "fault" in times:
        ejected = log.first(victim.url, "out for", times["fault"])
        back = log.first(victim.url, "back in", times.get("recovered", float("inf")))
        out["ejected_after_s"] = ejected - times["fault"] if ejected else None
        out["up_again_after_s"] = times["up"] - times["fault"] if "up" in times else None
        out["back_in_after_s"] = back - times["up"] if back and "up" in times else None
    return out


def faults(bench_dir: Path, args: argparse.Namespace) -> list[dict]:
    print(f"4 replicas at C = {args.capacity:g} calls/s, {args.fault_per_replica} in flight each; judge timeout_s = "
          f"{args.fault_timeout_s:g}, replica_pause_s = {args.fault_pause_s:g}, replica_eject_after = 3; the fault hits "
          f"replica 2 {args.fault_at:g} s after its first call and lasts {args.fault_s:g} s; {os.cpu_count()} cores; "
          f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)  # fmt: skip
    cases = []
    for fault in ("none", "dies", "hangs", "503"):
        case = fault_case(bench_dir, fault, args)
        cases.append(case)
        base = cases[0]["wall_s"]

        def secs(x: float | None) -> str:
            return "-" if x is None else f"{x:.2f} s"

        back = "-" if fault == "none" else (f"yes, {secs(case['back_in_after_s'])} after it was up again" if case["back_in_after_s"] is not None else "no")
        print(f"{fault:5s}  calls {case['calls']}  completed per replica {case['completed']}  paid twice {case['paid_twice']} "
              f"(repeats on one server {case['repeated_on_one_server']})  lost {case['lost']} of {case['rows']}  "
              f"ejected after {secs(case['ejected_after_s'])}  up again after {secs(case['up_again_after_s'])}  probed back in: {back}  "
              f"wall {case['wall_s']:.2f} s ({case['wall_s'] / base:.2f}x no-fault)  load {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, nargs="+", default=[1, 2, 4, 8, 16])
    parser.add_argument("--capacity", type=float, default=None, help="calls/s of one simulated replica (C); default 50, --faults 25")
    parser.add_argument("--latency", type=float, default=0.01, help="a lone call's latency on a replica, seconds")
    parser.add_argument("--per-replica", type=int, default=32, help="replica_concurrency: calls in flight per replica")
    parser.add_argument("--seconds", type=float, default=8.0, help="scaling: target run length at full capacity")
    parser.add_argument("--faults", action="store_true", help="the fault table instead of the scaling curve")
    parser.add_argument("--fault-at", type=float, default=3.0, help="seconds after the victim's first call")
    parser.add_argument("--fault-s", type=float, default=3.0, help="how long the fault lasts (dies: until restarted)")
    parser.add_argument("--fault-run-s", type=float, default=16.0, help="target run length at 4 x C")
    parser.add_argument("--fault-per-replica", type=int, default=16)
    parser.add_argument("--fault-timeout-s", type=float, default=2.0, help="the judge's timeout_s (a hang is seen after it)")
    parser.add_argument("--fault-pause-s", type=float, default=1.0, help="replica_pause_s")
    parser.add_argument("--bench-dir", default="/tmp/needlejudge-bench-replicas")
    parser.add_argument("--json", default=None, help="write the figures here too")
    args = parser.parse_args()
    if args.capacity is None:
        args.capacity = 25.0 if args.faults else 50.0
    from bench_engine import corpus_store

    bench_dir = Path(args.bench_dir)
    bench_dir.mkdir(parents=True, exist_ok=True)
    corpus_store(bench_dir)
    figures = faults(bench_dir, args) if args.faults else scaling(bench_dir, args)
    if args.json:
        Path(args.json).write_text(json.dumps({"args": vars(args), "load_after": os.getloadavg(), "figures": figures}, indent=1))


if __name__ == "__main__":
    main()
