"""Storage scenarios (issue 15), shared by tests/test_reliability_storage.py
and benchmarks/bench_reliability.py. Each runs `needlejudge run` in its own
process(es) against the fake provider server and returns what happened:

- two processes, same experiment, one store (started together);
- two processes, different experiments (other seed), one store;
- an LMDB map that starts tiny and must grow mid-run (both the run and its
  commit process open the store with a 256 kB map, via a sitecustomize);
- a corrupt store file, a foreign (non-LMDB) file and another program's
  LMDB as the store: a clear error, and the file byte-identical after;
- a full disk: store and output on a small tmpfs; then the tmpfs is grown
  and the run resumed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from reliability_fixtures import (
    FakeServerProcess,
    RunProcess,
    child_env,
    copy_store,
    experiment_toml,
    paid_twice,
    run_to_end,
    results,
    science,
    store_rows,
)

TINY_MAP = 256 * 1024


def last_line(text: str) -> str:
    """stderr's last two lines (an error and, after it, how to resume)."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-2:])


def _config(folder: Path, source: Any, corpus: Path, min_chars: float, url: str, *, store: Path | None = None,
            output: Path | None = None, copy: bool = True, **design: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    store = store or folder / "store"
    if copy:
        copy_store(source, store)
    path = folder / "exp.toml"
    path.write_text(experiment_toml(store=store, output=output or folder / "out", url=url, corpus=corpus, min_chars=min_chars, **design))
    return path


def _summary(out: str) -> dict[str, Any]:
    try:
        return json.loads(out)
    except ValueError:
        return {}


def two_processes(server: FakeServerProcess, folder: Path, source: Any, corpus: Path, min_chars: float, reference: list[tuple], *, same: bool) -> dict[str, Any]:
    """Two runs started together on one store: the same experiment (into two
    output folders) or two experiments (seeds 5 and 6)."""
    store = folder / "store"
    copy_store(source, store)
    first = _config(folder / "a", source, corpus, min_chars, server.url, store=store, copy=False)
    second = _config(folder / "b", source, corpus, min_chars, server.url, store=store, copy=False)
    if not same:
        second.write_text(second.read_text().replace("seed = 5", "seed = 6"))
    server.reset()
    runs = [RunProcess(first, "--json"), RunProcess(second, "--json")]
    ended = [run.wait(600) for run in runs]
    stats = server.stats()
    report: dict[str, Any] = {"requests": stats["requests"], "paid_twice": paid_twice(stats), "processes": []}
    for (code, out, err) in ended:
        summary = _summary(out)
        report["processes"].append({
            "exit": code,
            "calls_network": summary.get("calls_network", 0),
            "calls_cached": summary.get("calls_cached", 0),
            "rows": summary.get("rows"),
            "message": last_line(err),
            "traceback": "Traceback" in err,
        })
    keys = [{key for row in results(cfg.parent / "out" / "results.jsonl") for key in row["cache_keys"]}
            for cfg, (code, _, _) in zip((first, second), ended) if code == 0]
    report["shared_calls"] = len(keys[0] & keys[1]) if len(keys) == 2 else 0
    if same:
        report["identical_results"] = all(
            science(cfg.parent / "out" / "results.jsonl") == reference for cfg, (code, _, _) in zip((first, second), ended) if code == 0
        )
    return report


def tiny_map(server: FakeServerProcess, folder: Path, source: Any, corpus: Path, min_chars: float, reference: list[tuple]) -> dict[str, Any]:
    """A run whose store map starts at 256 kB (run and commit process)."""
    from engine.cache.store import Store

    site = folder / "site"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(f"import engine.cache.store\nengine.store._INITIAL_MAP_SIZE = {TINY_MAP}\n")
    config = _config(folder, source, corpus, min_chars, server.url)
    store = folder / "store"
    # the copy holds only the corpus: shrink its map to the data it uses (LMDB keeps the larger of the two)
    with Store(store) as opened:
        opened.env.set_mapsize(TINY_MAP)
        start = opened.env.info()["map_size"]
    env = child_env()
    env["PYTHONPATH"] = str(site) + os.pathsep + env["PYTHONPATH"]
    code, out, err = run_to_end(config, env=env)
    lmdb_info = _map_size(store)
    return {
        "exit": code,
        "message": last_line(err),
        "map_size_start": start,
        "map_size_end": lmdb_info,
        "grew": lmdb_info > start,
        "identical_results": code == 0 and science(folder / "out" / "results.jsonl") == reference,
    }


def _map_size(store: Path) -> int:
    import lmdb

    env = lmdb.open(str(store), readonly=True, lock=False, max_dbs=16)
    try:
        return env.info()["map_size"]
    finally:
        env.close()


def _digest(folder: Path) -> dict[str, str]:
    """The store's data file (lock.mdb is LMDB's reader table: rewritten by any opener)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file() and p.name != "lock.mdb"}


BAD_STORES = ("corrupt meta pages", "corrupt data page", "non-LMDB file", "another program's LMDB")


def bad_store_files(server: FakeServerProcess, folder: Path, source: Any, corpus: Path, min_chars: float,
                    names: tuple[str, ...] = BAD_STORES) -> list[dict[str, Any]]:
    """Corrupt, foreign and other-program stores: the message, and whether data.mdb changed."""
    import lmdb

    cases = []
    for name in names:
        case = folder / name.replace(" ", "_").replace("'", "")
        config = _config(case, source, corpus, min_chars, server.url)
        store = case / "store"
        data = store / "data.mdb"
        if name == "corrupt meta pages":
            with open(data, "r+b") as fh:
                fh.write(os.urandom(8192))  # both meta pages
        elif name == "corrupt data page":
            size = data.stat().st_size
            with open(data, "r+b") as fh:
                fh.seek(size // 2 // 4096 * 4096)
                fh.write(b"\xff" * 4096)
        elif name == "non-LMDB file":
            shutil.rmtree(store)
            store.mkdir()
            data.write_bytes(b"SQLite format 3\x00" + os.urandom(4096 - 16))
        else:
            shutil.rmtree(store)
            env = lmdb.open(str(store), map_size=1 << 20)
            with env.begin(write=True) as txn:
                txn.put(b"user:1", b"another program's record")
            env.close()
            # accepted, it would be prepared from the corpus: a two-document one keeps that short
            tiny = case / "tiny.json"
            tiny.write_text(json.dumps([{"id": str(n), "title": f"T{n}", "text": "A short text. It has two sentences."} for n in range(2)]))
            config.write_text(config.read_text().replace(f'inputs = ["{corpus}"]', f'inputs = ["{tiny}"]'))
        before = _digest(store)
        server.reset()
        code, _, err = run_to_end(config, timeout=300)
        after = _digest(store)
        cases.append({
            "case": name,
            "exit": code,
            "message": last_line(err)[:300],
            "traceback": "Traceback" in err,
            "unchanged": before == after,
            "changed_files": sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k)),
            "calls": server.stats()["requests"],
        })
    return cases


def full_disk(server: FakeServerProcess, folder: Path, source: Any, corpus: Path, min_chars: float, reference: list[tuple], *, spare_kb: int = 256) -> dict[str, Any]:
    """Store and output on a tmpfs with `spare_kb` beyond the copied corpus."""
    mount = folder / "disk"
    mount.mkdir(parents=True, exist_ok=True)
    staging = copy_store(source, folder / "staging")
    used_kb = sum(p.stat().st_size for p in staging.iterdir()) // 1024
    size_kb = used_kb + spare_kb
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(mount)], capture_output=True, text=True)
    if mounted.returncode != 0:
        return {"skipped": f"cannot mount a tmpfs: {mounted.stderr.strip()}"}
    try:
        shutil.copytree(staging, mount / "store")
        config = _config(folder, source, corpus, min_chars, server.url, store=mount / "store", output=mount / "out", copy=False)
        server.reset()
        code, _, err = run_to_end(config)
        rows_before = store_rows(mount / "store")
        report: dict[str, Any] = {"tmpfs_kb": size_kb, "exit": code, "message": last_line(err)[:600], "traceback": "Traceback" in err,
                                  "rows_committed": len(rows_before), "calls": server.stats()["requests"]}
        subprocess.run(["mount", "-o", f"remount,size={size_kb + 64 * 1024}k", str(mount)], check=True)
        code, _, err = run_to_end(config)
        rows_after = store_rows(mount / "store")
        stats = server.stats()
        report.update({
            "resume_exit": code,
            "resume_message": last_line(err)[:200],
            "rows_lost": sum(rows_after.get(k) != v for k, v in rows_before.items()),
            "paid_twice_on_resume": paid_twice(stats),
            "identical_results": code == 0 and science(mount / "out" / "results.jsonl") == reference,
        })
        return report
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True)


def storage_figures(bench_dir: Path, source: Any, corpus: Path, min_chars: float) -> dict[str, Any]:
    folder = bench_dir / "storage"
    shutil.rmtree(folder, ignore_errors=True)
    with FakeServerProcess(latency="fixed:0.01") as server:
        reference_config = _config(folder / "reference", source, corpus, min_chars, server.url)
        code, _, err = run_to_end(reference_config)
        assert code == 0, err
        reference = science(folder / "reference" / "out" / "results.jsonl")
        calls = server.stats()["requests"]
        return {
            "reference_calls": calls,
            "same_experiment": two_processes(server, folder / "same", source, corpus, min_chars, reference, same=True),
            "different_experiments": two_processes(server, folder / "different", source, corpus, min_chars, reference, same=False),
            "tiny_map": tiny_map(server, folder / "tiny", source, corpus, min_chars, reference),
            "bad_store_files": bad_store_files(server, folder / "bad", source, corpus, min_chars),
            "full_disk": full_disk(server, folder / "full", source, corpus, min_chars, reference),
        }
