"""Moving call-cache entries between stores (`needlejudge cache export|import`).

Judges run on different machines write to different stores; importing
their exports (or the stores themselves) into one store merges them, and a
re-run of the whole experiment on the merged store then answers every call
from the cache and reports it as one experiment.

Every exported record carries its request key and a BLAKE2b-256 hash of its
value (the msgpack-encoded `CallResult`); an import checks both before it
writes anything. An entry whose key is already in the target store is kept
when it holds the same answer (status, text, scores), and reported as a
conflict — never overwritten — when it does not: two answers for one
request key mean two stores disagree about what a judge said.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from engine.cache.call_cache import CACHEABLE_STATUSES, RESULTS_DB, CallCache, decode_result, encode_result
from engine.contracts import CallResult
from engine.cache.store import Store

KEY_BYTES = 32
# what a judge said; latency, timestamps, attempts and cost may differ between
# two machines that asked the same question and got the same answer
ANSWER_FIELDS = ("status", "text", "score", "raw_score", "scale", "error_kind")


class CacheRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One exported cache entry, a line of an export file."""

    key: str  # hex of the 32-byte request key
    blake2b: str  # hex BLAKE2b-256 of the msgpack-encoded result
    result: CallResult


class Conflict(msgspec.Struct, frozen=True, kw_only=True):
    key: str
    source: str
    kept: CallResult
    incoming: CallResult


class ImportSummary(msgspec.Struct, kw_only=True):
    read: int = 0
    added: int = 0
    already_present: int = 0  # same key, same answer
    conflicts: list[Conflict] = msgspec.field(default_factory=list)
    invalid: list[str] = msgspec.field(default_factory=list)  # "where: what is wrong"


def content_hash(raw: bytes) -> str:
    return hashlib.blake2b(raw, digest_size=32).hexdigest()


def same_answer(a: CallResult, b: CallResult) -> bool:
    return all(getattr(a, name) == getattr(b, name) for name in ANSWER_FIELDS)


def export_records(store: Store) -> Iterator[CacheRecord | tuple[bytes, Exception]]:
    """Every cache entry of `store` as a record; an entry that does not decode
    comes back as (key, error) so the caller can count and report it."""
    for key, raw in store.items_raw(RESULTS_DB):
        try:
            result = decode_result(raw)
        except Exception as exc:  # reported by the caller, never exported
            yield key, exc
            continue
        yield CacheRecord(key=key.hex(), blake2b=content_hash(raw), result=result)


def read_source(source: Path) -> Iterator[tuple[str, CacheRecord | str]]:
    """(where, record) for each entry of an export file or a store folder;
    `record` is a message instead when the entry cannot be read."""
    if source.is_dir():
        store = Store(source, readonly=True)
        try:
            for item in export_records(store):
                if isinstance(item, CacheRecord):
                    yield f"{source}:{item.key}", item
                else:
                    key, exc = item
                    yield f"{source}:{key.hex()}", f"value does not decode as a CallResult: {exc}"
        finally:
            store.close()
        return
    decoder = msgspec.json.Decoder(CacheRecord)
    with source.open("rb") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{source}:{number}"
            try:
                yield where, decoder.decode(line)
            except msgspec.DecodeError as exc:
                yield where, f"not a cache record (expected JSON with key, blake2b and result): {exc}"


def verified_entry(record: CacheRecord) -> tuple[bytes, bytes] | str:
    """The (key, raw value) to store, or what is wrong with the record."""
    try:
        key = bytes.fromhex(record.key)
    except ValueError:
        return f"key {record.key[:80]!r} is not hex"
    if len(key) != KEY_BYTES:
        return f"key of {len(key)} bytes, expected a {KEY_BYTES}-byte BLAKE2b-256 request key"
    if record.result.status not in CACHEABLE_STATUSES:
        return f"status {record.result.status!r} is never cached (expected one of {sorted(CACHEABLE_STATUSES)})"
    if record.result.score is not None and not 0.0 <= record.result.score <= 100.0:
        return f"score {record.result.score} outside 0-100"
    raw = encode_result(record.result)
    if content_hash(raw) != record.blake2b:
        return "content hash does not match the result (the record was altered or truncated)"
    return key, raw


def import_sources(target: Store, sources: Iterable[Path], *, batch: int = 2048) -> ImportSummary:
    """Add every valid, non-conflicting entry of `sources` to `target`.

    Writes in transactions of `batch` entries; a conflicting or invalid entry
    is reported in the summary and skipped, the rest still go in.
    """
    summary = ImportSummary()
    pending: dict[bytes, tuple[str, bytes, CallResult]] = {}

    def flush() -> None:
        existing = dict(zip(pending, CallCache(target).get_many(list(pending)), strict=True))
        new: list[tuple[bytes, bytes]] = []
        for key, (where, raw, result) in pending.items():
            kept = existing[key]
            if kept is None:
                new.append((key, raw))
                continue
            if same_answer(kept, result):
                summary.already_present += 1
            else:
                summary.conflicts.append(Conflict(key=key.hex(), source=where, kept=kept, incoming=result))
        summary.added += target.put_many_raw(RESULTS_DB, new, overwrite=False)
        pending.clear()

    for source in sources:
        for where, record in read_source(source):
            summary.read += 1
            entry = record if isinstance(record, str) else verified_entry(record)
            if isinstance(entry, str):
                summary.invalid.append(f"{where}: {entry}")
                continue
            key, raw = entry
            if key in pending:  # twice in this import: compare with the first
                first_where, _, first = pending[key]
                if same_answer(first, record.result):  # type: ignore[union-attr]
                    summary.already_present += 1
                else:
                    summary.conflicts.append(
                        Conflict(key=key.hex(), source=where, kept=first, incoming=record.result)  # type: ignore[union-attr]
                    )
                continue
            pending[key] = (where, raw, record.result)  # type: ignore[union-attr]
            if len(pending) >= batch:
                flush()
    if pending:
        flush()
    return summary
