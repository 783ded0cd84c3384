"""`needlejudge cache stats|export|verify|import STORE_OR_CONFIG`."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

HELP = (
    "Inspect or move the call cache of a store: stats, export (JSON Lines), "
    "verify (decode every entry), import (merge exports or other stores into this one)."
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
    parser.add_argument("--delete-corrupt", action="store_true", help="verify: delete entries that do not decode")


def _store_path(target: str) -> Path:
    path = Path(target)
    if path.suffix.lower() == ".toml" and path.is_file():
        from engine.config import load_config

        return Path(load_config(path).store)
    return path


def main(args: argparse.Namespace) -> int:
    from engine.cache.call_cache import RESULTS_DB, CallCache
    from engine.contracts import ConfigError
    from engine.cache.store import Store

    path = _store_path(args.store)
    if args.action == "import":
        return _import(path, [Path(source) for source in args.sources])
    try:
        store = Store(path, readonly=not args.delete_corrupt)
    except FileNotFoundError as exc:
        raise ConfigError(str(exc)) from None
    with store:
        cache = CallCache(store)
        if args.action == "stats":
            return _stats(store, cache)
        if args.action == "export":
            return _export(store, args.out)
        return _verify(store, cache, delete=args.delete_corrupt, results_db=RESULTS_DB)


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


def _verify(store, cache, *, delete: bool, results_db: str) -> int:  # type: ignore[no-untyped-def]
    from engine.cache.call_cache import CACHEABLE_STATUSES, decode_result

    corrupt: list[tuple[bytes, str]] = []
    n = 0
    for key, raw in cache.items():
        n += 1
        problem = ""
        if len(key) != 32:
            problem = f"key of {len(key)} bytes, expected a 32-byte BLAKE2b-256 request key"
        else:
            try:
                result = decode_result(raw)
            except Exception as exc:  # any decode failure is what we report
                problem = f"value does not decode as a CallResult: {exc}"
            else:
                if result.status not in CACHEABLE_STATUSES:
                    problem = f"status {result.status!r} is never cached (expected ok or refused)"
                elif result.score is not None and not (0.0 <= result.score <= 100.0):
                    problem = f"score {result.score} outside 0-100"
        if problem:
            corrupt.append((key, problem))
    for key, problem in corrupt[:50]:
        print(f"corrupt {key.hex()}: {problem}")
    if delete and corrupt:
        for key, _ in corrupt:
            store.delete(results_db, key)
        print(f"deleted {len(corrupt):,} corrupt entries")
    print(f"verified {n:,} entries: {n - len(corrupt):,} ok, {len(corrupt):,} corrupt")
    return 1 if corrupt and not delete else 0
