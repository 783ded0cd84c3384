"""`--only rss`: memory of a child process running a design of >= 1,000,000
planned calls to the end (baseline judge), streaming: anonymous memory
(RssAnon) and file-mapped pages of the run and its commit process, by phase."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine_bench.common import ROOT, baseline_judge, experiment_text, fresh_store



RSS_CHILD = """
import json, resource, sys, threading, time
sys.path.insert(0, {root!r})
from engine.config import parse_config
from engine.run.runner import plan_experiment, run_experiment

peak = {{"RssAnon": 0, "RssFile": 0}}
phase = {{"name": "plan", "t0": time.perf_counter()}}
by_phase = {{}}
stop = threading.Event()

def sample():
    # RssAnon: the process's own memory; RssFile: mapped file pages (the LMDB store's mmap)
    while not stop.is_set():
        rss = anon = 0
        with open("/proc/self/status") as fh:
            for line in fh:
                key = line.split(":")[0]
                if key == "VmRSS":
                    rss = int(line.split()[1])
                if key == "RssAnon":
                    anon = int(line.split()[1])
                if key in peak:
                    kb = int(line.split()[1])
                    peak[key] = max(peak[key], kb)
                    slot = by_phase.setdefault(phase["name"], {{}})
                    if kb > slot.get(key, 0):
                        slot[key] = kb
                        slot[key + "_at_s"] = round(time.perf_counter() - phase["t0"], 1)
        # the commit process (engine.cache.commit_process) is a child: its memory counts too
        for pid in child_pids():
            try:
                status = read_status(pid)
            except OSError:
                continue
            commit_peak[pid] = max(commit_peak.get(pid, 0), status.get("VmHWM", 0))
            for key in ("RssAnon", "RssFile"):
                commit_parts[key] = max(commit_parts[key], status.get(key, 0))
            rss += status.get("VmRSS", 0)
            anon += status.get("RssAnon", 0)
        combined[0] = max(combined[0], rss)
        combined_anon[0] = max(combined_anon[0], anon)
        stop.wait(0.2)

def read_status(pid):
    with open(f"/proc/{{pid}}/status") as fh:
        return {{line.split(":")[0]: int(line.split()[1]) for line in fh if line.startswith(("Vm", "Rss"))}}

def child_pids():
    import os
    pids = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{{tid}}/children") as fh:
                pids += [int(p) for p in fh.read().split()]
        except OSError:
            pass
    return pids

def vm_hwm_kb():
    return read_status("self")["VmHWM"]

commit_peak = {{}}
commit_parts = {{"RssAnon": 0, "RssFile": 0}}
combined = [0]  # sampled every 0.2 s: this process + its commit process at the same moment
combined_anon = [0]  # the same for anonymous memory (RssAnon): what the pair really holds

threading.Thread(target=sample, daemon=True).start()
config = parse_config({text!r}, source="<bench-rss>")
plan = plan_experiment(config)
phase["name"], phase["t0"] = "run", time.perf_counter()
t0 = time.perf_counter()
summary = run_experiment(config, quiet=True, export=False)
seconds = time.perf_counter() - t0
if {export!r}:
    phase["name"], phase["t0"] = "export", time.perf_counter()  # the finished run again: no call, JSONL + Parquet + manifest
    t1 = time.perf_counter()
    run_experiment(config, quiet=True, export=True)
    export_s = time.perf_counter() - t1
time.sleep(0.3)
stop.set()
print(json.dumps({{"planned_calls": plan.upper_bound_calls, "cells": plan.cells, "calls": summary.calls_network,
    "rows": summary.rows, "seconds": seconds, "export_seconds": export_s if {export!r} else None,
    # VmHWM: the kernel's exact peak RSS of this process image. ru_maxrss would
    # also count the parent's RSS at fork (Linux keeps the old mm's peak across exec).
    "peak_rss_mb": vm_hwm_kb() / 1024,
    # the largest commit process's exact peak (and its sampled parts); the sum of the
    # two exact peaks bounds the pair from above (they need not peak together)
    "commit_process_peak_rss_mb": max(commit_peak.values(), default=0) / 1024,
    "commit_process_peak_anon_mb": commit_parts["RssAnon"] / 1024,
    "commit_process_peak_file_mapped_mb": commit_parts["RssFile"] / 1024,
    "sum_of_peaks_rss_mb": (vm_hwm_kb() + max(commit_peak.values(), default=0)) / 1024,
    "combined_sampled_peak_rss_mb": combined[0] / 1024,
    # the figure that matters: anonymous memory (not page cache) of the run + its commit process
    "combined_sampled_peak_anon_mb": combined_anon[0] / 1024,
    "sum_of_peaks_anon_mb": (peak["RssAnon"] + commit_parts["RssAnon"]) / 1024,
    "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "peak_anon_mb": peak["RssAnon"] / 1024, "peak_file_mapped_mb": peak["RssFile"] / 1024,
    "by_phase_mb": {{k: {{kk: (vv if kk.endswith("_s") else vv / 1024) for kk, vv in v.items()}} for k, v in by_phase.items()}}}}))
"""


# The ci rule's variant of the rss design: hedged capital, alpha split over all
# its cells, every cell capped at the 95 documents the fixed rule judges.
RSS_CI_STOPPING = """
epsilon = 2.0
method = "hedged"
max_docs = 95
"""


def bench_rss(bench_dir: Path, replicates: int, export: bool, rule: str = "fixed") -> dict:
    store = fresh_store(bench_dir, "rss-store")
    # 4 x 2 x 100 x replicates cells, each up to all 95 documents (fixed n = 95)
    text = experiment_text(
        store=store,
        output=bench_dir / "rss-out",
        n=95,
        replicates=replicates,
        judge=baseline_judge(),
        kind=rule,
        stopping=RSS_CI_STOPPING if rule == "ci" else "",
    )
    child = RSS_CHILD.format(root=str(ROOT), text=text, export=export)
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=False)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])
