"""Submitted batches, recorded in the store so an interrupted run pays nothing twice.

A batch judge records each batch (provider batch id, judge, the request
keys of its entries, when it was submitted) in the `runs` database, under
the run's key, before it waits on it. The record is deleted in the very
transaction that commits the batch's answers to the call cache
(engine.cache.store.DELETE), so a record in the store always means "submitted,
its answers not stored yet": the next run of the same experiment polls and
fetches those batches instead of submitting their entries again.
"""

from __future__ import annotations

import time

import msgspec

from engine.run.results import RUNS_DB
from engine.cache.store import DELETE, Store

Write = tuple[str, bytes, bytes]

_BATCH = b"B"
RUN_KEY_BYTES = 8  # engine.run.results.run_id_for: 16 hex characters


class BatchRecord(msgspec.Struct, frozen=True, kw_only=True):
    batch_id: str  # the provider's id
    judge: str
    keys: list[bytes]  # request keys of its entries (BatchEntry.custom_id = key.hex())
    submitted_at: float  # unix seconds
    wave: int = 0
    adapter: str = ""  # whose batch API holds it: a judge of the same adapter and model can fetch it
    model: str = ""


def record_key(run_key: bytes, batch_id: str) -> bytes:
    return run_key + _BATCH + batch_id.encode()


def record_write(run_key: bytes, record: BatchRecord) -> Write:
    return (RUNS_DB, record_key(run_key, record.batch_id), msgspec.msgpack.encode(record))


def new_record(batch_id: str, judge: str, adapter: str, model: str, keys: list[bytes], wave: int) -> BatchRecord:
    return BatchRecord(batch_id=batch_id, judge=judge, keys=keys, submitted_at=time.time(), wave=wave, adapter=adapter, model=model)


def record_delete(store_key: bytes) -> Write:
    return (RUNS_DB, store_key, DELETE)


def pending_batches(store: Store, run_key: bytes, judge: str | None = None) -> list[BatchRecord]:
    """The run's recorded batches (of one judge), oldest first."""
    records = [msgspec.msgpack.decode(raw, type=BatchRecord) for _, raw in store.items_raw(RUNS_DB, run_key + _BATCH)]
    records.sort(key=lambda record: record.submitted_at)
    return [record for record in records if judge is None or record.judge == judge]


def recorded_for(store: Store, judge: str, adapter: str, model: str) -> dict[bytes, BatchRecord]:
    """Every recorded batch of any run in the store that this judge can fetch
    (same judge name, adapter and model), by store key: a run whose config
    changed since the interruption (a new run id) still collects the batches
    it paid for; their answers are cached by request, so they serve any run."""
    found = {}
    for key, raw in store.items_raw(RUNS_DB):
        if key[RUN_KEY_BYTES : RUN_KEY_BYTES + 1] != _BATCH:
            continue
        record = msgspec.msgpack.decode(raw, type=BatchRecord)
        if (record.judge, record.adapter, record.model) == (judge, adapter, model):
            found[key] = record
    return dict(sorted(found.items(), key=lambda pair: pair[1].submitted_at))
