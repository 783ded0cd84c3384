"""Answers of an exported wave, brought back from outside the process
(`needlejudge calls import`), into the call cache.

The wave was recorded in the store when it was exported, like any batch
(engine.run.batch.store): the answers are committed in the transaction
that deletes that record, so an import is all or nothing, a killed one
leaves the record and a re-run completes it, and importing the same
answers again writes nothing (the record is gone and the cache already
holds them).

Each answer is classified as the batch path classifies an entry: `ok` and
`refused` answers are cached under the call's key; an error about the item
itself (`context_length`) is recorded for the run as that call's outcome
(engine.run.item_errors: a later run, in waves or not, consumes it as the item's row); a
transient failure, or one that needs the judge's config fixed, is left
pending (the next export asks it again). The keys must be the wave's.
"""

from __future__ import annotations

import msgspec

from engine.cache.call_cache import RESULTS_DB, CallCache, encode_result, is_cacheable
from engine.cache.store import Store
from engine.contracts import CallResult
from engine.run.batch.store import BatchRecord, record_delete, record_key
from engine.run.item_errors import terminal_key, terminal_write
from engine.run.judge_health import ITEM_ERROR_KINDS, fatal_message
from engine.run.results import RUNS_DB


class ImportRefused(ValueError):
    """The answers do not belong to a wave this store has pending."""


class ImportCounts(msgspec.Struct, kw_only=True):
    answers: int = 0  # cached (ok, refused)
    terminal: int = 0  # errors about the item, recorded as its outcome
    pending: int = 0  # transient failures: asked again
    fatal: int = 0  # failures that need the judge's config fixed: asked again once it is
    already: bool = False  # the wave was imported before: nothing written
    fatal_example: str = ""
    by_kind: dict[str, int] = {}


def classify(judge: str, outcomes: dict[bytes, CallResult]) -> tuple[dict[bytes, CallResult], dict[bytes, CallResult], ImportCounts]:
    """(answers to cache, item errors to record, counts)."""
    answers, terminal, counts = {}, {}, ImportCounts(by_kind={})
    for key, result in outcomes.items():
        if is_cacheable(result):
            answers[key] = result
            continue
        counts.by_kind[result.error_kind or "error"] = counts.by_kind.get(result.error_kind or "error", 0) + 1
        if result.error_kind in ITEM_ERROR_KINDS:
            terminal[key] = result
        elif (message := fatal_message(judge, result)) is not None:
            counts.fatal += 1
            counts.fatal_example = counts.fatal_example or message
        else:
            counts.pending += 1
    counts.answers, counts.terminal = len(answers), len(terminal)
    return answers, terminal, counts


def commit_wave(store: Store, run_key: bytes, batch_id: str, judge: str, model: str, outcomes: dict[bytes, CallResult]) -> ImportCounts:
    """Commit a wave's answers with the deletion of its record, in one transaction."""
    answers, terminal, counts = classify(judge, outcomes)
    raw = store.get_raw(RUNS_DB, record_key(run_key, batch_id))
    if raw is None:
        if _already_there(store, run_key, answers, terminal):
            counts.already = True
            return counts
        raise ImportRefused(
            f"the store {store.path} holds no pending wave {batch_id} of this run: exported from another store, "
            "or its record was dropped (its calls are asked again by the next export)"
        )
    record = msgspec.msgpack.decode(raw, type=BatchRecord)
    if (record.judge, record.model) != (judge, model):
        raise ImportRefused(f"wave {batch_id} was recorded for judge {record.judge!r} ({record.model}), not {judge!r} ({model})")
    foreign = set(outcomes) - set(record.keys)
    if foreign:
        raise ImportRefused(f"{len(foreign)} answer(s) for calls the recorded wave did not ask (its input files were changed?)")
    writes = [(RESULTS_DB, key, encode_result(result)) for key, result in answers.items()]
    writes += [terminal_write(run_key, key, result) for key, result in terminal.items()]
    writes.append(record_delete(record_key(run_key, batch_id)))
    store.put_batch_raw(writes)
    return counts


def _already_there(store: Store, run_key: bytes, answers: dict[bytes, CallResult], terminal: dict[bytes, CallResult]) -> bool:
    cache = CallCache(store)
    return all(hit is not None for hit in cache.get_many(list(answers))) and all(
        store.get_raw(RUNS_DB, terminal_key(run_key, key)) is not None for key in terminal
    )
