"""`needlejudge cache verify`: every record of a store decoded and checked,
and (`--delete-corrupt`) the damaged ones removed so that `run` resumes.

LMDB has no checksums: a flipped byte in a value goes unnoticed until the
value is decoded. Every kind of record is checked here, by the type its
reader decodes it into: cached calls (`results`), result rows (`rows`),
cell end states, recorded failures, manifests and batch records (`runs`),
the prepared corpus (`corpus`, `corpus_meta`) and the store marker.

A repair deletes only what can be recomputed without paying twice:
- a cached call: asked again (one call) when an item needs it;
- a result row: it and the cell's later rows and end state go, and the run
  replays the cell from its earlier rows, asking the rest again from the
  cached calls (no network for an answer still cached);
- a cell end state: the run replays the cell's rows;
- a recorded failure or a manifest: records only (the manifest is written
  again when the run finishes);
- a batch record: the run loses track of that batch (its entries are asked
  again, and may be paid twice).
A damaged corpus record cannot be mended here: prepare again into a new store.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from engine.cache.call_cache import CACHEABLE_STATUSES, RESULTS_DB, decode_result
from engine.cache.store import Store
from engine.contracts import ResultRow
from engine.corpus.prepare import CORPUS_DB, META_DB, SUMMARY_KEY, PrepareSummary, StoredDocument
from engine.run.batch.store import BatchRecord
from engine.run.results import ROWS_DB, RUNS_DB, CellState, drop_rows_from, row_key

RUN_KEY_BYTES = 8
_ROW_KEY_BYTES = RUN_KEY_BYTES + 8
# What a record of the runs database is, by the byte after its run id.
_RUN_RECORDS: dict[bytes, tuple[str, type | None]] = {
    b"C": ("cell state", CellState),
    b"F": ("recorded failure", None),  # a CallResult
    b"M": ("manifest", dict),
    b"B": ("batch record", BatchRecord),
    b"T": ("recorded item error", None),  # a CallResult (engine.run.item_errors)
}


class Problem(msgspec.Struct, frozen=True):
    db: str
    key: bytes
    what: str  # the record kind and what is wrong with it
    repair: str  # "delete", "replay" (a row: the cell from there), or "" (cannot be mended here)

    def line(self) -> str:
        return f"corrupt {self.key.hex()} ({self.db}): {self.what}"


def find_problems(store: Store) -> Iterator[Problem]:
    """Every damaged record of the store, database by database."""
    yield from _results(store)
    yield from _rows(store)
    yield from _runs(store)
    yield from _corpus(store)


def count_records(store: Store) -> int:
    return sum(store.count(db) for db in (RESULTS_DB, ROWS_DB, RUNS_DB, CORPUS_DB, META_DB))


def repair(store: Store, problems: list[Problem]) -> int:
    """Delete what `problems` allow; return how many records were mended."""
    mended = 0
    for problem in problems:
        if problem.repair == "delete":
            mended += store.delete(problem.db, problem.key)
        elif problem.repair == "replay":
            run_id, cell_no, doc_index = problem.key[:RUN_KEY_BYTES], *_cell_doc(problem.key)
            drop_rows_from(store, run_id, cell_no, doc_index)
            mended += 1
    return mended


def _results(store: Store) -> Iterator[Problem]:
    for key, raw in store.items_raw(RESULTS_DB):
        what = ""
        if len(key) != 32:
            what = f"key of {len(key)} bytes, expected a 32-byte BLAKE2b-256 request key"
        else:
            try:
                result = decode_result(raw)
            except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                what = f"cached call does not decode as a CallResult: {exc}"
            else:
                if result.status not in CACHEABLE_STATUSES:
                    what = f"cached call with status {result.status!r}, which is never cached (expected ok or refused)"
                elif result.score is not None and not (0.0 <= result.score <= 100.0):
                    what = f"cached call with score {result.score} outside 0-100"
        if what:
            yield Problem(RESULTS_DB, key, what, "delete")


def _cell_doc(key: bytes) -> tuple[int, int]:
    return int.from_bytes(key[RUN_KEY_BYTES : RUN_KEY_BYTES + 4], "big"), int.from_bytes(key[RUN_KEY_BYTES + 4 : _ROW_KEY_BYTES], "big")


def _rows(store: Store) -> Iterator[Problem]:
    decode = msgspec.msgpack.Decoder(ResultRow).decode
    for key, raw in store.items_raw(ROWS_DB):
        if len(key) != _ROW_KEY_BYTES:
            yield Problem(ROWS_DB, key, f"result row key of {len(key)} bytes, expected {_ROW_KEY_BYTES}", "delete")
            continue
        cell_no, doc_index = _cell_doc(key)
        try:
            row = decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            yield Problem(ROWS_DB, key, f"result row (cell {cell_no}, document {doc_index}) does not decode: {exc}", "replay")
            continue
        if row.doc_index != doc_index or key != row_key(key[:RUN_KEY_BYTES], cell_no, row.doc_index):
            yield Problem(ROWS_DB, key, f"result row stored as document {doc_index} holds document {row.doc_index}", "replay")


def _runs(store: Store) -> Iterator[Problem]:
    for key, raw in store.items_raw(RUNS_DB):
        kind, type_ = _RUN_RECORDS.get(key[RUN_KEY_BYTES : RUN_KEY_BYTES + 1], ("", None))
        if not kind:
            yield Problem(RUNS_DB, key, "unknown kind of run record", "delete")
            continue
        try:
            if type_ is None:
                decode_result(raw)
            else:
                msgspec.msgpack.decode(raw, type=type_)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            yield Problem(RUNS_DB, key, f"{kind} does not decode: {exc}", "delete")


def _corpus(store: Store) -> Iterator[Problem]:
    decode = msgspec.msgpack.Decoder(StoredDocument).decode
    for key, raw in store.items_raw(CORPUS_DB):
        try:
            decode(raw)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            yield Problem(CORPUS_DB, key, f"prepared document does not decode: {exc}; prepare the corpus again into a new store", "")
    raw = store.get_raw(META_DB, SUMMARY_KEY)
    if raw is not None:
        try:
            msgspec.msgpack.decode(raw, type=PrepareSummary)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            yield Problem(META_DB, SUMMARY_KEY, f"corpus summary does not decode: {exc}; prepare the corpus again into a new store", "")
