"""The tables of RELIABILITY.md from the figures of
benchmarks/bench_reliability.py (`--render` prints them from earlier
`--json-out` files): crash safety, graceful stops, the fault matrix, load
(open fds, anonymous memory, calls/s), storage and bad input."""

from __future__ import annotations

from typing import Any


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell).replace("|", "/") for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown(figures: dict[str, Any]) -> str:
    out = [f"Machine: {figures['machine']}; {figures['date']}."]
    crash = figures.get("crash")
    if crash:
        kills = crash["kills"]
        out.append(f"\n### Crash safety: {len(kills)} SIGKILLs, concurrency {crash['concurrency']}\n")
        out.append(_table(["kill", "at request", "in flight at kill", "answered, not committed", "paid twice on resume", "rows kept"],
                          [[k["kill"], k["requests_at_kill"], k["in_flight_at_kill"], k["uncommitted"], k["paid_twice"], k["rows_kept"]] for k in kills]))
        paid = [k["paid_twice"] for k in kills]
        out.append(f"\nUninterrupted: {crash['reference']['calls']:,} calls. Rows lost: {crash['rows_lost']}; final results identical to "
                   f"the uninterrupted run: {crash['identical_to_uninterrupted']}; calls paid twice: {crash['paid_twice_total']:,} in all "
                   f"(median {sorted(paid)[len(paid) // 2]}, max {max(paid)} per kill; {sum(p > crash['concurrency'] for p in paid)} of "
                   f"{len(paid)} kills above the concurrency); {crash['requests_total']:,} requests for {crash['reference']['calls']:,} calls.")
        out.append("\n### Graceful stops\n")
        out.append(_table(["signal", "at request", "exit", "stopped in s", "answered at signal", "committed", "abandoned in flight",
                           "resume exit", "paid twice after resume", "message"],
                          [[g["signal"], g.get("at_request", "-"), g["exit"], g["stopped_in_s"], g["answered_at_signal"], g["committed"],
                            g["abandoned_in_flight"], g["resume_exit"], g["paid_twice_after_resume"], g["message"][:160]] for g in crash["graceful"]]))
    faults = figures.get("faults")
    if faults:
        kinds = ["ok_first", "retried_ok", "refused", "unparseable"]
        pending = sorted({k for r in faults.values() for k in r["outcomes"] if k.startswith(("pending:", "error:"))})
        rows = []
        for name, r in faults.items():
            o = r["outcomes"]
            rows.append([name, r["requests"], *(o.get(k, 0) for k in kinds), *(o.get(k, 0) for k in pending), o.get("unfinished", 0),
                         r["exits"], r["crashed"], r["scored_failures"], r.get("same_as_fault_free", "-"), r.get("ok_scores_differing", "-"),
                         r.get("seconds", "-")])
        out.append("\n### Fault matrix\n")
        out.append(_table(["scenario", "requests", *kinds, *pending, "unfinished", "exits", "crashed", "failures scored",
                           "same as fault-free", "ok scores differing", "s"], rows))
    load = figures.get("load")
    if load:
        out.append("\n### Load\n")
        out.append(_table(["figure", "value"], [
            ["calls (server requests)", f"{load['requests']:,}"], ["rows", load["rows"]], ["statuses", load["statuses"]],
            ["exit", load["exit"]], ["concurrency / latency", f"{load['concurrency']} / {load['latency']}"], ["wall s", load["wall_s"]],
            ["fd limit (soft, hard)", load["fd_limit"]], ["open fds, max (run / server)", f"{load['fds_max']} / {load['server_fds_max']}"],
            *_memory_rows(load["samples"], load["requests"]),
            ["calls/s per 10 s window", load["rate_per_10s"]]]))
    storage = figures.get("storage")
    if storage:
        out.append("\n### Storage\n")
        rows = []
        for key in ("same_experiment", "different_experiments"):
            r = storage[key]
            rows.append([key.replace("_", " "), f"exits {[p['exit'] for p in r['processes']]}, calls paid {[p['calls_network'] for p in r['processes']]}, "
                         f"{r['requests']} requests ({storage['reference_calls']} per experiment alone), paid twice {r['paid_twice']} "
                         f"(shared calls {r['shared_calls']})", " / ".join(p["message"] for p in r["processes"] if p["message"])[:300]])
        t = storage["tiny_map"]
        rows.append(["tiny map", f"exit {t['exit']}, map {t['map_size_start']:,} -> {t['map_size_end']:,} bytes, identical results {t['identical_results']}", t["message"]])
        for c in storage["bad_store_files"]:
            rows.append([c["case"], f"exit {c['exit']}, traceback {c['traceback']}, data.mdb unchanged {c['unchanged']}, calls {c['calls']}", c["message"][:300]])
        f = storage["full_disk"]
        if "skipped" in f:
            rows.append(["full disk", f["skipped"], ""])
        else:
            rows.append(["full disk", f"tmpfs {f['tmpfs_kb']} kB: exit {f['exit']}, traceback {f['traceback']}, {f['rows_committed']} rows kept; "
                         f"resume on a bigger one: exit {f['resume_exit']}, rows lost {f['rows_lost']}, paid twice {f['paid_twice_on_resume']}, "
                         f"identical {f['identical_results']}", f["message"][:300]])
        out.append(_table(["case", "outcome", "message"], rows))
    cases = figures.get("input")
    if cases:
        out.append("\n### Bad input\n")
        out.append(_table(["case", "command", "exit", "names file and key", "message"],
                          [[c["case"], c["command"], c["exit"], c["names_file_and_key"], c["message"][:260]] for c in cases]))
    return "\n".join(out)


def _memory_rows(samples: list[dict[str, Any]], total: int) -> list[list[Any]]:
    """RssAnon (MB) while calls are made, at 10% and 90% of the calls, and at
    the end of the calls; then the peak after them (export: JSONL, Parquet)."""
    calling = [s for s in samples if s["rss_anon_kb"] and s["requests"] and s["requests"] < total]
    after = [s for s in samples if s["rss_anon_kb"] and s["requests"] == total]
    if not calling:
        return []

    def at(share: float, key: str) -> float:
        point = next((s for s in calling if s["requests"] >= share * total), calling[-1])
        return round(point[key] / 1024, 1)

    fds = [s["fds"] for s in calling if s["fds"]]
    return [
        ["open fds while calling (min / max)", f"{min(fds)} / {max(fds)}"],
        ["RssAnon MB of the run at 10% / 50% / 90% of the calls; max while calling", f"{at(0.1, 'rss_anon_kb')} / {at(0.5, 'rss_anon_kb')} / "
         f"{at(0.9, 'rss_anon_kb')}; {round(max(s['rss_anon_kb'] for s in calling) / 1024, 1)}"],
        ["RssAnon MB of its commit process at 10% / 50% / 90%", f"{at(0.1, 'commit_rss_anon_kb')} / {at(0.5, 'commit_rss_anon_kb')} / {at(0.9, 'commit_rss_anon_kb')}"],
        ["RssAnon MB of the run after the calls (export) peak", round(max((s["rss_anon_kb"] for s in after), default=0) / 1024, 1)],
        ["RssAnon MB of the fake server at 10% / 90%", f"{at(0.1, 'server_rss_anon_kb')} / {at(0.9, 'server_rss_anon_kb')}"],
    ]
