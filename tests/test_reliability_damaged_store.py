"""Damaged stores (issue 33), as real processes on real LMDB files: a store
cut short (which LMDB maps as it is: SIGBUS on the first read), garbage in
its header or in LMDB's own pages, another program's LMDB, an empty LMDB, a
regular file where the store folder should be. `run`, `cache verify`,
`cache stats` (and `prepare`, `pairs` for the file) share the store-opening
checks: each ends in one line naming the store and what to do, exit 2, no
traceback, nothing written. And damaged records (what flipped bytes in a
value make: LMDB has no checksums): `run` names them, `cache verify` finds
every kind, `--delete-corrupt` leaves a store that `run` resumes to the
results of a clean run, recomputing the damaged progress from cached calls.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reliability_fixtures import fresh_experiment, run_to_end, science, server_fixture, store_records
from reliability_storage import DAMAGED_STORES, cli, damage, fingerprint

server = server_fixture("fixed:0.01")
CLOSED = "http://127.0.0.1:9"  # no judge is ever reached: the store is refused first


def one_line(code: int, err: str) -> str:
    assert code == 2, (code, err)  # not 1, not -7 (SIGBUS), not 135
    assert "Traceback" not in err and "Bus error" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


EXPECTED = {
    "truncated": "was cut short",
    "garbage header": "is not an LMDB file",
    "garbage in the middle": "damaged",
    "another program's LMDB": "an LMDB environment of another program",
    "empty LMDB": "an empty LMDB environment",
    "a regular file": "is a file, not a folder",
}


@pytest.mark.parametrize("kind", DAMAGED_STORES)
def test_a_damaged_store_ends_every_command_in_one_line_and_is_not_written(kind: str, prepared_store, corpus_slice_path,
                                                                           corpus_settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    config = fresh_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings.min_chars_per_sentence, CLOSED)
    store = tmp_path / "store"
    damage(store, kind)
    before = fingerprint(store)
    commands = [("cache", "verify", str(store)), ("cache", "stats", str(store)), ("cache", "verify", str(config), "--delete-corrupt")]
    if kind != "empty LMDB":  # an empty LMDB is an empty store to `run` and `prepare`: it is prepared
        commands.append(("run", str(config), "--quiet"))
    if kind == "a regular file":
        commands += [("prepare", str(corpus_slice_path), "--store", str(store)), ("pairs", "--store", str(store))]
    for command in commands:
        line = one_line(*cli(*command)[0::2])
        assert f"store {store}" in line and EXPECTED[kind] in line, (command, line)
    assert fingerprint(store) == before  # nothing written, not even by --delete-corrupt


def test_damaged_records_are_named_by_run_found_by_verify_and_repaired_for_the_resume(
        server, prepared_store, corpus_slice_path, corpus_settings, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import lmdb

    config = fresh_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings.min_chars_per_sentence, server.url)
    store = tmp_path / "store"
    server.reset()
    code, _, err = run_to_end(config)
    assert code == 0, err
    reference = science(tmp_path / "out" / "results.jsonl")
    calls = server.stats()["requests"]
    rows = sorted(store_records(store))
    # flipped bytes in three kinds of record: a cached call, a result row, a cell's end state
    env = lmdb.open(str(store), max_dbs=16)
    with env.begin(write=True) as txn:
        results, rows_db, runs = (env.open_db(name, txn=txn) for name in (b"results", b"rows", b"runs"))
        call_key, call = next(iter(txn.cursor(db=results)))
        txn.put(call_key, call[:-7], db=results)
        row_key = rows[len(rows) // 2]
        txn.put(row_key, txn.get(row_key, db=rows_db).replace(b"doc_index", b"doc_indeX"), db=rows_db)
        state_key = next(key for key, _ in txn.cursor(db=runs) if key[8:9] == b"C")
        txn.put(state_key, txn.get(state_key, db=runs).replace(b"reason", b"reasoN"), db=runs)
    env.close()

    code, _, err = run_to_end(config)
    line = one_line(code, err)
    assert f"store {store}: a damaged record" in line and "cache verify" in line and "--delete-corrupt" in line, line

    code, out, err = cli("cache", "verify", str(config))
    assert code == 1 and "Traceback" not in err, err
    found = out.splitlines()
    assert any(call_key.hex() in line and "(results)" in line for line in found), out
    assert any(row_key.hex() in line and "(rows)" in line and "result row" in line for line in found), out
    assert any(state_key.hex() in line and "(runs)" in line and "cell state" in line for line in found), out
    assert "verified" in out and "3 corrupt" in out and "--delete-corrupt" in out, out

    code, out, err = cli("cache", "verify", str(config), "--delete-corrupt")
    assert code == 0 and "deleted 3 damaged record(s)" in out, (out, err)
    server.reset()
    code, _, err = run_to_end(config)
    assert code == 0, err
    assert science(tmp_path / "out" / "results.jsonl") == reference
    # the damaged rows and state were recomputed from cached calls: only the damaged call was asked again
    assert server.stats()["requests"] <= 1 < calls
