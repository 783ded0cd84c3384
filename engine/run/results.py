"""Result rows: building them, storing them per run, exporting them.

A run is identified by `run_id`, a hash of everything in the config that
can change the results (seed, corpus, design, judges' model identity,
prompts with their versions, stopping rule) — never the output folder,
concurrency, timeouts or URLs. Re-running the same config therefore finds
its own rows and cell states in the store: a finished run makes no calls,
an interrupted one resumes.

Store layout (values msgpack):
- "rows": run_id (8 bytes) + cell_no (4, big-endian) + doc_index (4) -> ResultRow.
  Only a cell's consumed prefix is stored (rows in document order up to the
  stopping point), so the stored data never depend on timing; a prefix scan
  exports a run in (cell, document) order.
- "runs": run_id + b"C" + cell_no -> CellState (written when the cell ends);
  run_id + b"M" -> the latest manifest;
  run_id + b"F" + cell_no + doc_index + time (ns, 8) -> the CallResult of a
  transient failure (kept for the record; the item stayed pending).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import msgspec

from engine.contracts import CallResult, ConfigError, Pair, ResultRow, Verdict
from engine.cache.store import Store

if TYPE_CHECKING:
    from engine.run.design import Cell

ROWS_DB = "rows"
RUNS_DB = "runs"
RESULTS_JSONL = "results.jsonl"
RESULTS_PARQUET = "results.parquet"
MANIFEST_JSON = "manifest.json"

_CELL = struct.Struct(">I")
_ROW = struct.Struct(">II")

_encode = msgspec.msgpack.Encoder().encode
_decode_row = msgspec.msgpack.Decoder(ResultRow).decode
_decode_result = msgspec.msgpack.Decoder(CallResult).decode
_json_encode = msgspec.json.Encoder().encode


class CellState(msgspec.Struct, kw_only=True):
    """How a cell ended (stored when it ends; reported in the manifest)."""

    cell_no: int
    label: str
    reason: str  # "converged", "n_reached", "max_docs", "exhausted"
    n: int  # ok scores the stopping rule consumed
    mean: float | None
    rows: int  # rows stored (ok + failed documents)
    failed: int  # refused / unparseable / item-error documents (replaced by the next)
    next_doc: int  # first document index not consumed


def run_id_for(identity: Any) -> str:
    """16 hex characters of BLAKE2b over the canonical msgpack of `identity`."""
    return hashlib.blake2b(_encode(identity), digest_size=8, person=b"needlejudge-run").hexdigest()


def row_key(run_id: bytes, cell_no: int, doc_index: int) -> bytes:
    return run_id + _ROW.pack(cell_no, doc_index)


def cell_prefix(run_id: bytes, cell_no: int) -> bytes:
    return run_id + _CELL.pack(cell_no)


def cell_state_key(run_id: bytes, cell_no: int) -> bytes:
    return run_id + b"C" + _CELL.pack(cell_no)


def manifest_key(run_id: bytes) -> bytes:
    return run_id + b"M"


_FAILURE = struct.Struct(">IIQ")


def failure_key(run_id: bytes, cell_no: int, doc_index: int, stamp_ns: int) -> bytes:
    return run_id + b"F" + _FAILURE.pack(cell_no, doc_index, stamp_ns)


def failure_item(run_id: bytes, cell_no: int, doc_index: int, result: CallResult) -> tuple[str, bytes, bytes]:
    """A store write recording a transient failure of the item's call."""
    return (RUNS_DB, failure_key(run_id, cell_no, doc_index, time.time_ns()), _encode(result))


class FailureRecord(msgspec.Struct, frozen=True, kw_only=True):
    cell_no: int
    doc_index: int
    result: CallResult


def iter_failures(store: Store, run_id: bytes) -> Iterator[FailureRecord]:
    """The run's recorded transient failures, by cell, document and time."""
    prefix = run_id + b"F"
    for key, raw in store.items_raw(RUNS_DB, prefix):
        cell_no, doc_index, _ = _FAILURE.unpack(key[len(prefix) :])
        yield FailureRecord(cell_no=cell_no, doc_index=doc_index, result=_decode_result(raw))


def drop_rows_from(store: Store, run_id: bytes, cell_no: int, doc_index: int) -> int:
    """Delete a cell's rows from `doc_index` on, and its end state (the cell
    continues from there). Returns how many rows were deleted."""
    start = row_key(run_id, cell_no, doc_index)
    prefix = cell_prefix(run_id, cell_no)
    deleted = 0
    with store.begin(write=True) as txn:
        cursor = txn.cursor(db=store.db(ROWS_DB))
        if cursor.set_range(start):
            while cursor.key().startswith(prefix):
                if not cursor.delete():
                    break
                deleted += 1
        txn.delete(cell_state_key(run_id, cell_no), db=store.db(RUNS_DB))
    return deleted


def make_row(
    *,
    run_id: str,
    judge: str,
    adapter: str,
    model: str,
    prompt_id: str,
    prompt_version: str,
    cell: Cell,
    doc_index: int,
    pair: Pair,
    verdict: Verdict,
    results: list[CallResult],
    keys: tuple[bytes, ...],
    cached: bool,
) -> ResultRow:
    """One judged item. Usage, latency, cost and attempts are summed over its calls."""
    if len(results) == 1:
        first = results[0]
        text = first.text
        prompt_tokens, completion_tokens, cached_tokens = (
            first.usage.prompt_tokens,
            first.usage.completion_tokens,
            first.usage.cached_tokens,
        )
        latency, cost, attempts = first.latency_s, first.cost_usd, first.attempts
        model_version, error_kind = first.model_version, first.error_kind
    else:
        text = "\n---\n".join(r.text for r in results)
        prompt_tokens = sum(r.usage.prompt_tokens for r in results)
        completion_tokens = sum(r.usage.completion_tokens for r in results)
        cached_tokens = sum(r.usage.cached_tokens for r in results)
        latency = sum(r.latency_s for r in results)
        cost = sum(r.cost_usd for r in results)
        attempts = sum(r.attempts for r in results)
        model_version = next((r.model_version for r in results if r.model_version), "")
        error_kind = next((r.error_kind for r in results if r.error_kind), "")
    if verdict.status != "ok" and not error_kind:
        error_kind = verdict.detail
    return ResultRow(
        run_id=run_id,
        judge=judge,
        adapter=adapter,
        model=model,
        prompt_id=prompt_id,
        prompt_version=prompt_version,
        needle=cell.needle,
        hay=cell.hay,
        i=cell.i,
        j=cell.j,
        doc_id=pair.doc_id,
        doc_index=doc_index,
        replicate=cell.replicate,
        order=cell.order,
        control=cell.control,
        status=verdict.status,
        score=verdict.score if verdict.status == "ok" else None,
        raw_score=verdict.raw_score,
        scale=verdict.scale,
        raw_text=text,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
        cached_tokens=cached_tokens,
        latency_s=latency,
        cost_usd=cost,
        model_version=model_version,
        error_kind=error_kind,
        attempts=attempts,
        cache_keys=tuple(k.hex() for k in keys),
        cached=cached,
        oracle_ok=pair.oracle_ok,
        hay_doc_id=pair.hay_doc_id,
    )


def encode_row(row: ResultRow) -> bytes:
    return _encode(row)


# ---------------------------------------------------------------------------
# Reading a run back


def iter_rows_raw(store: Store, run_id: bytes) -> Iterator[bytes]:
    for _, value in store.items_raw(ROWS_DB, run_id):
        yield value


def iter_rows(store: Store, run_id: bytes) -> Iterator[ResultRow]:
    for raw in iter_rows_raw(store, run_id):
        yield _decode_row(raw)


def cell_rows(store: Store, run_id: bytes, cell_no: int) -> Iterator[ResultRow]:
    for _, value in store.items_raw(ROWS_DB, cell_prefix(run_id, cell_no)):
        yield _decode_row(value)


def load_cell_states(store: Store, run_id: bytes) -> dict[int, CellState]:
    prefix = run_id + b"C"
    out: dict[int, CellState] = {}
    for key, raw in store.items_raw(RUNS_DB, prefix):
        state = msgspec.msgpack.decode(raw, type=CellState)
        out[state.cell_no] = state
    return out


# ---------------------------------------------------------------------------
# Export


class RowStats(msgspec.Struct, kw_only=True):
    rows: int = 0
    status_counts: dict[str, int] = {}
    cost_usd: float = 0.0


def _unique_beside(target: Path, suffix: str) -> Path:
    """A new empty file beside `target` that no other writer uses (created
    with O_EXCL; the umask's usual mode, unlike mkstemp's 0600)."""
    while True:
        tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}{suffix}")
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
        except FileExistsError:
            continue
        return tmp


@contextmanager
def _replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temp file beside `path`, unique to this writer (two processes
    exporting to one folder never share one), renamed over `path` when the
    block ends without error and removed otherwise."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _unique_beside(target, ".tmp")
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def export_jsonl(store: Store, run_id: bytes, path: str | os.PathLike[str] | None) -> RowStats:
    """Write the run's rows as JSON Lines (atomically: a temp file, then a
    rename) and count them; `path=None` only counts."""
    if path is None:
        return _write_jsonl(store, run_id, None)
    with _replacing(path) as tmp, open(tmp, "wb") as out:
        return _write_jsonl(store, run_id, out)


def _write_jsonl(store: Store, run_id: bytes, out: BinaryIO | None) -> RowStats:
    stats = RowStats()
    counts: dict[str, int] = {}
    cost = 0.0
    buffer: list[bytes] = []
    for raw in iter_rows_raw(store, run_id):
        row = _decode_row(raw)
        counts[row.status] = counts.get(row.status, 0) + 1
        cost += row.cost_usd
        if out is not None:
            buffer.append(_json_encode(row))
            if len(buffer) >= 4096:
                buffer.append(b"")
                out.write(b"\n".join(buffer))
                buffer.clear()
    if out is not None and buffer:
        buffer.append(b"")
        out.write(b"\n".join(buffer))
    stats.rows = sum(counts.values())
    stats.status_counts = counts
    stats.cost_usd = cost
    return stats


ROW_FIELDS: tuple[str, ...] = ResultRow.__struct_fields__


def _parquet_schema(pa: Any) -> Any:
    types = {
        "i": pa.int32(),
        "j": pa.int32(),
        "doc_index": pa.int32(),
        "replicate": pa.int32(),
        "prompt_tokens": pa.int64(),
        "completion_tokens": pa.int64(),
        "cached_tokens": pa.int64(),
        "attempts": pa.int32(),
        "score": pa.float64(),
        "raw_score": pa.float64(),
        "latency_s": pa.float64(),
        "cost_usd": pa.float64(),
        "cached": pa.bool_(),
        "oracle_ok": pa.bool_(),
        "cache_keys": pa.list_(pa.string()),
    }
    return pa.schema([(name, types.get(name, pa.string())) for name in ROW_FIELDS])


def _pyarrow() -> tuple[Any, Any, Any]:
    try:
        import pyarrow as pa
        import pyarrow.json as pj
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            "Parquet export needs pyarrow, which is not installed; "
            "install it with `pip install 'needlejudge[parquet]'` (JSON Lines was written)"
        ) from None
    return pa, pj, pq


PARQUET_ROW_GROUP = 65_536  # rows per row group (one per parse block would be ~2,000)


def _write_row_group(pa: Any, writer: Any, batches: list[Any]) -> int:
    table = pa.Table.from_batches(batches).select(list(ROW_FIELDS))
    writer.write_table(table, row_group_size=table.num_rows)
    return table.num_rows


def jsonl_to_parquet(jsonl: str | os.PathLike[str], path: str | os.PathLike[str]) -> int:
    """Convert an exported results.jsonl to Parquet with the row schema
    (pyarrow's C++ JSON reader: no Python object per row)."""
    pa, pj, pq = _pyarrow()
    schema = _parquet_schema(pa)
    with _replacing(path) as tmp:
        return _write_parquet(pa, pj, pq, schema, jsonl, tmp)


def _write_parquet(pa: Any, pj: Any, pq: Any, schema: Any, jsonl: str | os.PathLike[str], tmp: Path) -> int:
    rows = 0
    with pq.ParquetWriter(tmp, schema) as writer:
        if Path(jsonl).stat().st_size:
            # Streaming: memory stays at one row group however long the run
            # (1 MB parse blocks: 4 MB ones doubled the peak on 1M rows).
            reader = pj.open_json(
                jsonl,
                read_options=pj.ReadOptions(block_size=1 << 20, use_threads=False),
                parse_options=pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="error"),
            )
            group: list[Any] = []
            grouped = 0
            for batch in reader:
                group.append(batch)
                grouped += batch.num_rows
                if grouped >= PARQUET_ROW_GROUP:
                    rows += _write_row_group(pa, writer, group)
                    group, grouped = [], 0
            if group:
                rows += _write_row_group(pa, writer, group)
        else:
            writer.write_table(schema.empty_table())
    return rows


def export_parquet(store: Store, run_id: bytes, path: str | os.PathLike[str]) -> int:
    """Write the run's rows as Parquet. Needs pyarrow (`pip install needlejudge[parquet]`)."""
    _pyarrow()
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    jsonl = _unique_beside(target, ".jsonl.tmp")
    try:
        with open(jsonl, "wb") as out:
            _write_jsonl(store, run_id, out)
        return jsonl_to_parquet(jsonl, target)
    finally:
        jsonl.unlink(missing_ok=True)


def write_manifest(path: str | os.PathLike[str], manifest: dict[str, Any]) -> None:
    with _replacing(path) as tmp:
        tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")
