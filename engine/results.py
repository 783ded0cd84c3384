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
  run_id + b"M" -> the latest manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from engine.contracts import CallResult, ConfigError, ResultRow, Verdict
from engine.store import Store

ROWS_DB = "rows"
RUNS_DB = "runs"
RESULTS_JSONL = "results.jsonl"
RESULTS_PARQUET = "results.parquet"
MANIFEST_JSON = "manifest.json"

_CELL = struct.Struct(">I")
_ROW = struct.Struct(">II")

_encode = msgspec.msgpack.Encoder().encode
_decode_row = msgspec.msgpack.Decoder(ResultRow).decode
_json_encode = msgspec.json.Encoder().encode


class CellState(msgspec.Struct, kw_only=True):
    """How a cell ended (stored when it ends; reported in the manifest)."""

    cell_no: int
    label: str
    reason: str  # "converged", "n_reached", "max_docs", "exhausted"
    n: int  # ok scores the stopping rule consumed
    mean: float | None
    rows: int  # rows stored (ok + failed documents)
    failed: int  # refused / unparseable / error documents (replaced by the next)
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


def make_row(
    *,
    run_id: str,
    judge: str,
    adapter: str,
    model: str,
    prompt_id: str,
    prompt_version: str,
    cell: Any,
    doc_index: int,
    pair: Any,
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


def decode_row(raw: bytes) -> ResultRow:
    return _decode_row(raw)


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


def load_cell_state(store: Store, run_id: bytes, cell_no: int) -> CellState | None:
    raw = store.get_raw(RUNS_DB, cell_state_key(run_id, cell_no))
    return None if raw is None else msgspec.msgpack.decode(raw, type=CellState)


def load_cell_states(store: Store, run_id: bytes) -> dict[int, CellState]:
    prefix = run_id + b"C"
    out: dict[int, CellState] = {}
    for key, raw in store.items_raw(RUNS_DB, prefix):
        state = msgspec.msgpack.decode(raw, type=CellState)
        out[state.cell_no] = state
    return out


# ---------------------------------------------------------------------------
# Export


def export_jsonl(store: Store, run_id: bytes, path: str | os.PathLike[str]) -> int:
    """Write the run's rows as JSON Lines (atomically: temp file, then rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    n = 0
    buffer: list[bytes] = []
    with open(tmp, "wb") as out:
        for raw in iter_rows_raw(store, run_id):
            buffer.append(_json_encode(_decode_row(raw)))
            n += 1
            if len(buffer) >= 4096:
                buffer.append(b"")
                out.write(b"\n".join(buffer))
                buffer.clear()
        if buffer:
            buffer.append(b"")
            out.write(b"\n".join(buffer))
    os.replace(tmp, target)
    return n


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


def export_parquet(store: Store, run_id: bytes, path: str | os.PathLike[str], *, chunk: int = 65536) -> int:
    """Write the run's rows as Parquet. Needs pyarrow (`pip install needlejudge[parquet]`)."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ConfigError(
            "Parquet export needs pyarrow, which is not installed; "
            "install it with `pip install 'needlejudge[parquet]'` (JSON Lines was written)"
        ) from None
    schema = _parquet_schema(pa)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    n = 0
    columns: dict[str, list[Any]] = {name: [] for name in ROW_FIELDS}
    with pq.ParquetWriter(tmp, schema) as writer:

        def flush() -> None:
            writer.write_table(pa.Table.from_pydict(columns, schema=schema))
            for values in columns.values():
                values.clear()

        for raw in iter_rows_raw(store, run_id):
            row = msgspec.msgpack.decode(raw)  # a dict in field order (msgspec encodes Structs as maps)
            for name in ROW_FIELDS:
                columns[name].append(row.get(name))
            n += 1
            if n % chunk == 0:
                flush()
        if columns["run_id"] or n == 0:
            flush()
    os.replace(tmp, target)
    return n


def write_manifest(path: str | os.PathLike[str], manifest: dict[str, Any]) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, target)
