"""`needlejudge cache stats|export|verify|import STORE_OR_CONFIG`."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HELP = (
    "Inspect or move the call cache of a store: stats, export (JSON Lines), "
    "verify (decode every record: cached calls, rows, run progress, corpus), import (merge exports or other stores into this one)."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("stats", "export", "verify", "import"))
    parser.add_argument("store", help="a store folder, or an experiment config (TOML) whose store to use")
    parser.add_argument("--out", help="export: output file (default: stdout)")
    parser.add_argument(
        "--from",
        dest="sources",
        action="append",
        default=[],
        metavar="SOURCE",
        help="import: an export file or another store folder (repeatable); the store is created if missing",
    )
    parser.add_argument(
        "--delete-corrupt",
        action="store_true",
        help="verify: delete damaged records; the next run recomputes damaged progress from the cached calls",
    )


def _store_path(target: str) -> Path:
    path = Path(target)
    if path.suffix.lower() == ".toml" and path.is_file():
        from engine.config import load_config

        return Path(load_config(path).store)
    return path


def main(args: argparse.Namespace) -> int:
    import lmdb

    from engine.cache.store_check import ADVICE, StoreError

    path = _store_path(args.store)
    try:
        return _main(args, path)
    except lmdb.Error as exc:  # a page LMDB cannot read (its own structure damaged): no traceback
        if isinstance(exc, StoreError):
            raise
        raise StoreError(f"store {path}: damaged where LMDB keeps its own structure ({type(exc).__name__}: {exc}). {ADVICE}") from None


def _main(args: argparse.Namespace, path: Path) -> int:
    from engine.cache.call_cache import CallCache
    from engine.cache.store import Store

    if args.action == "import":
        return _import(path, [Path(source) for source in args.sources])
    if args.delete_corrupt:  # every check first, read only: a repair never adopts a folder that is not a store
        Store(path, readonly=True).close()
    store = Store(path, readonly=not args.delete_corrupt)
    with store:
        cache = CallCache(store)
        if args.action == "stats":
            return _stats(store, cache)
        if args.action == "export":
            return _export(store, args.out)
        return _verify(store, delete=args.delete_corrupt)


def _stats(store, cache) -> int:  # type: ignore[no-untyped-def]
    from engine.cache.call_cache import decode_result

    statuses: Counter[str] = Counter()
    versions: Counter[str] = Counter()
    cost = 0.0
    tokens_in = tokens_out = 0
    value_bytes = 0
    corrupt = 0
    for _, raw in cache.items():
        value_bytes += len(raw)
        try:
            result = decode_result(raw)
        except Exception:  # counted; `cache verify` names them
            corrupt += 1
            continue
        statuses[result.status] += 1
        versions[result.model_version or "?"] += 1
        cost += result.cost_usd
        tokens_in += result.usage.prompt_tokens
        tokens_out += result.usage.completion_tokens
    info = store.env.info()
    stats = {
        "store": str(store.path),
        "entries": sum(statuses.values()) + corrupt,
        "corrupt": corrupt,
        "by_status": dict(statuses),
        "by_model_version": dict(versions.most_common(20)),
        "value_bytes": value_bytes,
        "map_size": info["map_size"],
        "prompt_tokens": tokens_in,
        "completion_tokens": tokens_out,
        "cost_usd_paid": round(cost, 6),
    }
    print(json.dumps(stats, indent=2))
    return 0


def _export(store, out: str | None) -> int:  # type: ignore[no-untyped-def]
    import msgspec

    from engine.cache.transfer import CacheRecord, export_records

    encoder = msgspec.json.Encoder()
    sink = open(out, "wb") if out else sys.stdout.buffer
    n = corrupt = 0
    try:
        for record in export_records(store):
            if not isinstance(record, CacheRecord):  # reported below; `cache verify` names them
                corrupt += 1
                continue
            sink.write(encoder.encode(record) + b"\n")
            n += 1
    finally:
        if out:
            sink.close()
    print(f"exported {n:,} cache entries" + (f" to {out}" if out else ""), file=sys.stderr)
    if corrupt:
        print(f"{corrupt:,} corrupt entries skipped; run `needlejudge cache verify` to list them", file=sys.stderr)
        return 1
    return 0


def _import(path: Path, sources: list[Path]) -> int:
    from engine.cache.transfer import import_sources
    from engine.contracts import ConfigError
    from engine.cache.store import Store

    if not sources:
        raise ConfigError("cache import: name at least one --from SOURCE (an export file or a store folder)")
    for source in sources:
        if not source.exists():
            raise ConfigError(f"cache import: {source}: no such export file or store folder")
        if source.is_dir() and not (source / "data.mdb").exists():
            raise ConfigError(f"cache import: {source}: no needlejudge store here (no data.mdb)")
        if source.resolve() == path.resolve():
            raise ConfigError(f"cache import: {source} is the target store itself")
    with Store(path) as store:
        summary = import_sources(store, sources)
    for problem in summary.invalid[:50]:
        print(f"invalid {problem}")
    for conflict in summary.conflicts[:50]:
        print(
            f"conflict {conflict.key} from {conflict.source}: kept {_answer(conflict.kept)}, "
            f"incoming {_answer(conflict.incoming)} (not overwritten)"
        )
    print(
        f"imported into {path}: {summary.read:,} read, {summary.added:,} added, "
        f"{summary.already_present:,} already present with the same answer, "
        f"{len(summary.conflicts):,} conflicts, {len(summary.invalid):,} invalid"
    )
    return 1 if summary.conflicts or summary.invalid else 0


def _answer(result) -> str:  # type: ignore[no-untyped-def]
    text = result.text if len(result.text) <= 60 else result.text[:57] + "..."
    return f"{result.status} score={result.score} text={text!r}"


def _verify(store, *, delete: bool) -> int:  # type: ignore[no-untyped-def]
    from engine.run.store_verify import count_records, find_problems, repair

    problems = list(find_problems(store))
    total = count_records(store)
    for problem in problems[:50]:
        print(problem.line())
    if len(problems) > 50:
        print(f"... and {len(problems) - 50:,} more")
    unmendable = [problem for problem in problems if not problem.repair]
    if delete and problems:
        mended = repair(store, problems)
        print(f"deleted {mended:,} damaged record(s); the next run recomputes what they held from the cached calls")
    print(f"verified {total:,} entries: {total - len(problems):,} ok, {len(problems):,} corrupt")
    if unmendable:
        print(f"{len(unmendable):,} damaged corpus record(s) cannot be mended here: prepare the corpus again into a new store")
        return 1
    if problems and not delete:
        print(f"repair with: needlejudge cache verify {store.path} --delete-corrupt")
        return 1
    return 0
