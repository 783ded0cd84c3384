"""engine.run.results: rows from call results, storage layout, JSONL / Parquet / manifest export."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import msgspec
import pytest

from engine.contracts import CallResult, ConfigError, Pair, ResultRow, Usage, Verdict
from engine.run.design import Cell
from engine.run.results import (
    ROWS_DB,
    encode_row,
    export_jsonl,
    export_parquet,
    iter_rows,
    make_row,
    row_key,
    run_id_for,
    write_manifest,
)
from engine.cache.store import Store

PAIR = Pair(
    doc_id="d1",
    needle="neg",
    hay="rand",
    i=2,
    j=1,
    original="A. B was. C.",
    perturbed="A. B was not. C.",
    needle_before="B was.",
    needle_after="B was not.",
    seed=1,
    hay_doc_id="d9",
)
CELL = Cell(cell_no=3, judge="g", prompt="triples", needle="neg", hay="rand", i=2, j=1, replicate=1, order="21")


def call(text: str, *, prompt: int, completion: int, cost: float, latency: float, attempts: int = 1, status: str = "ok", version: str = "") -> CallResult:
    return CallResult(
        status=status,  # type: ignore[arg-type]
        text=text,
        usage=Usage(prompt_tokens=prompt, completion_tokens=completion, cached_tokens=prompt // 2),
        cost_usd=cost,
        latency_s=latency,
        attempts=attempts,
        model_version=version,
    )


def row(verdict: Verdict, results: list[CallResult], doc_index: int = 4, cell: Cell = CELL) -> ResultRow:
    return make_row(
        run_id="ab" * 8,
        judge="g",
        adapter="openai",
        model="gpt-x",
        prompt_id="triples",
        prompt_version="v1",
        cell=cell,
        doc_index=doc_index,
        pair=PAIR,
        verdict=verdict,
        results=results,
        keys=(b"\x01" * 32, b"\x02" * 32)[: len(results)],
        cached=False,
    )


def test_a_two_call_item_sums_usage_cost_latency_and_attempts() -> None:
    results = [
        call("[a; b; c]", prompt=500, completion=40, cost=0.002, latency=0.5, attempts=2),
        call("[a; b; d]", prompt=520, completion=42, cost=0.003, latency=0.25, version="fp_7"),
    ]
    r = row(Verdict(status="ok", score=33.3, raw_score=33.3, scale="0-100"), results)
    assert (r.prompt_tokens, r.completion_tokens, r.cached_tokens) == (1020, 82, 510)
    assert r.cost_usd == pytest.approx(0.005) and r.latency_s == pytest.approx(0.75) and r.attempts == 3
    assert r.model_version == "fp_7"
    assert r.raw_text == "[a; b; c]\n---\n[a; b; d]"
    assert r.cache_keys == ("01" * 32, "02" * 32)
    assert (r.needle, r.hay, r.i, r.j, r.replicate, r.order, r.doc_id, r.hay_doc_id, r.doc_index) == ("neg", "rand", 2, 1, 1, "21", "d1", "d9", 4)
    assert r.k == 4


def test_a_failed_verdict_never_carries_a_score_and_says_why() -> None:
    r = row(Verdict(status="unparseable", score=None, detail="no number in 'maybe'"), [call("maybe", prompt=1, completion=1, cost=0, latency=0)])
    assert r.status == "unparseable" and r.score is None
    assert r.error_kind == "no number in 'maybe'"


def test_run_ids_hash_the_identity() -> None:
    assert run_id_for({"a": 1}) == run_id_for({"a": 1})
    assert run_id_for({"a": 1}) != run_id_for({"a": 2})
    assert len(run_id_for({"a": 1})) == 16


def test_export_is_ordered_by_cell_then_document_and_roundtrips(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    run = bytes.fromhex("ab" * 8)
    other_run = bytes.fromhex("cd" * 8)
    verdict = Verdict(status="ok", score=50.0, raw_score=50.0, scale="0-100")
    rows = []
    for cell_no, doc_index in [(300, 2), (3, 7), (3, 1), (12, 0)]:
        cell = msgspec.structs.replace(CELL, cell_no=cell_no)
        rows.append((cell_no, doc_index, row(verdict, [call("50", prompt=1, completion=1, cost=0.1, latency=0)], doc_index, cell)))
    store.put_many_raw(ROWS_DB, [(row_key(run, c, d), encode_row(r)) for c, d, r in rows])
    store.put_many_raw(ROWS_DB, [(row_key(other_run, 3, 0), encode_row(rows[0][2]))])
    got = list(iter_rows(store, run))
    assert [r.doc_index for r in got] == [1, 7, 0, 2]  # cells 3, 3, 12, 300 — numeric, not text order
    stats = export_jsonl(store, run, tmp_path / "out" / "results.jsonl")
    lines = (tmp_path / "out" / "results.jsonl").read_text().splitlines()
    assert stats.rows == 4 and len(lines) == 4
    assert stats.status_counts == {"ok": 4} and stats.cost_usd == pytest.approx(0.4)
    assert [msgspec.json.decode(line, type=ResultRow) for line in lines] == got
    store.close()


def test_parquet_has_every_row_field_with_types(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    store = Store(tmp_path / "s")
    run = bytes.fromhex("ab" * 8)
    r = row(Verdict(status="ok", score=12.5, raw_score=12.5, scale="0-100"), [call("x", prompt=3, completion=4, cost=0.5, latency=0.1)])
    failed = row(Verdict(status="refused", detail="content_filter"), [call("no", prompt=3, completion=4, cost=0.5, latency=0.1, status="refused")], doc_index=5)
    store.put_many_raw(ROWS_DB, [(row_key(run, 3, 4), encode_row(r)), (row_key(run, 3, 5), encode_row(failed))])
    assert export_parquet(store, run, tmp_path / "r.parquet") == 2
    table = pq.read_table(tmp_path / "r.parquet")
    assert table.column_names == list(ResultRow.__struct_fields__)
    data = table.to_pylist()
    assert data[0]["score"] == 12.5 and data[1]["score"] is None and data[1]["status"] == "refused"
    assert data[0]["cache_keys"] == ["01" * 32]
    assert str(table.schema.field("i").type) == "int32" and str(table.schema.field("cost_usd").type) == "double"
    store.close()


def test_parquet_without_pyarrow_is_a_clear_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    store = Store(tmp_path / "s")
    with pytest.raises(ConfigError, match=r"needs pyarrow.*pip install 'needlejudge\[parquet\]'"):
        export_parquet(store, b"\0" * 8, tmp_path / "r.parquet")
    store.close()


def test_manifest_is_written_atomically_as_json(tmp_path: Path) -> None:
    write_manifest(tmp_path / "o" / "manifest.json", {"run_id": "x", "counts": {"rows": 3}})
    assert json.loads((tmp_path / "o" / "manifest.json").read_text()) == {"run_id": "x", "counts": {"rows": 3}}
    assert not list((tmp_path / "o").glob("*.tmp"))


EXPORTER = """
import sys
from engine.run.results import export_jsonl, jsonl_to_parquet, write_manifest
from engine.cache.store import Store
store_path, out, run = sys.argv[1], sys.argv[2], bytes.fromhex(sys.argv[3])
store = Store(store_path)
for n in range(25):
    export_jsonl(store, run, out + "/results.jsonl")
    jsonl_to_parquet(out + "/results.jsonl", out + "/results.parquet")
    write_manifest(out + "/manifest.json", {"n": n})
store.close()
"""


def test_two_processes_exporting_to_one_folder_never_share_a_temp_file(tmp_path: Path) -> None:
    import os
    import subprocess

    import pyarrow.parquet as pq

    store = Store(tmp_path / "s")
    run = bytes.fromhex("12" * 8)
    r = row(Verdict(status="ok", score=50.0, raw_score=50.0, scale="0-100"), [call("50", prompt=10, completion=1, cost=0.0, latency=0.1)])
    store.put_many_raw(ROWS_DB, [(row_key(run, 0, d), encode_row(msgspec.structs.replace(r, doc_index=d))) for d in range(300)])
    expected = b"".join(msgspec.json.encode(x) + b"\n" for x in iter_rows(store, run))
    store.close()
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1]) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    command = [sys.executable, "-c", EXPORTER, str(tmp_path / "s"), str(out), run.hex()]
    processes = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    errors = [p.communicate(timeout=300)[1] for p in processes]
    assert [p.returncode for p in processes] == [0, 0], errors
    assert (out / "results.jsonl").read_bytes() == expected
    assert pq.read_table(out / "results.parquet").num_rows == 300
    assert json.loads((out / "manifest.json").read_text())["n"] == 24
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "results.jsonl", "results.parquet"]  # no temp left
