"""Submitted batches, recorded in the store so an interrupted run pays nothing twice.

A batch judge records each batch (provider batch id, judge, the request
keys of its entries, when it was submitted) in the `runs` database, under
the run's key, before it waits on it. The record is deleted in the very
transaction that commits the batch's answers to the call cache
(engine.store.DELETE), so a record in the store always means "submitted,
its answers not stored yet": the next run of the same experiment polls and
fetches those batches instead of submitting their entries again.
"""

from __future__ import annotations

import time

import msgspec

from engine.results import RUNS_DB
from engine.store import DELETE, Store

Write = tuple[str, bytes, bytes]

_BATCH = b"B"


class BatchRecord(msgspec.Struct, frozen=True, kw_only=True):
    batch_id: str  # the provider's id
    judge: str
    keys: list[bytes]  # request keys of its entries (BatchEntry.custom_id = key.hex())
    submitted_at: float  # unix seconds
    wave: int = 0


def record_key(run_key: bytes, batch_id: str) -> bytes:
    return run_key + _BATCH + batch_id.encode()


def record_write(run_key: bytes, batch_id: str, judge: str, keys: list[bytes], wave: int) -> Write:
    record = BatchRecord(batch_id=batch_id, judge=judge, keys=keys, submitted_at=time.time(), wave=wave)
    return (RUNS_DB, record_key(run_key, batch_id), msgspec.msgpack.encode(record))


def record_delete(run_key: bytes, batch_id: str) -> Write:
    return (RUNS_DB, record_key(run_key, batch_id), DELETE)


def pending_batches(store: Store, run_key: bytes, judge: str | None = None) -> list[BatchRecord]:
    """The run's recorded batches (of one judge), oldest first."""
    records = [msgspec.msgpack.decode(raw, type=BatchRecord) for _, raw in store.items_raw(RUNS_DB, run_key + _BATCH)]
    records.sort(key=lambda record: record.submitted_at)
    return [record for record in records if judge is None or record.judge == judge]
