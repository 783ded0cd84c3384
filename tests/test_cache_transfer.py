"""engine.cache.transfer and `needlejudge cache export|import`: moving call-cache
entries between real LMDB stores, and merging stores that judged disjoint
parts of one design into one experiment."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from engine.cache.call_cache import RESULTS_DB, encode_result
from engine.cache.transfer import CacheRecord, content_hash, import_sources
from engine.cli import main as cli_main
from engine.config import load_config
from engine.contracts import CallResult
from engine.run.runner import run_experiment
from engine.cache.store import Store
from tests.test_run import make_experiment

SCIENTIFIC = ("judge", "needle", "hay", "i", "j", "doc_id", "doc_index", "order", "control", "status", "score", "raw_text", "cache_keys")


def answer(text: str, score: float | None = 50.0, status: str = "ok") -> CallResult:
    return CallResult(status=status, text=text, score=score, raw_score=score, scale="0-100", latency_s=0.3)


def key(n: int) -> bytes:
    return n.to_bytes(32, "big")


def entries(store: Store) -> dict[bytes, bytes]:
    return dict(store.items_raw(RESULTS_DB))


def store_with(path: Path, items: dict[bytes, CallResult]) -> Store:
    store = Store(path)
    store.put_many_raw(RESULTS_DB, [(k, encode_result(v)) for k, v in items.items()])
    return store


def test_export_then_import_reproduces_every_entry_byte_for_byte(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = store_with(tmp_path / "a", {key(n): answer(f"Score: {n % 101}", float(n % 101)) for n in range(300)})
    expected = entries(source)
    source.close()

    export = tmp_path / "a.jsonl"
    assert cli_main(["cache", "export", str(tmp_path / "a"), "--out", str(export)]) == 0
    records = [msgspec.json.decode(line, type=CacheRecord) for line in export.read_bytes().splitlines()]
    assert len(records) == 300
    assert all(content_hash(encode_result(r.result)) == r.blake2b for r in records)

    assert cli_main(["cache", "import", str(tmp_path / "b"), "--from", str(export)]) == 0
    assert "300 read, 300 added, 0 already present with the same answer, 0 conflicts, 0 invalid" in capsys.readouterr().out
    with Store(tmp_path / "b", readonly=True) as copy:
        assert entries(copy) == expected

    # importing the same export again adds nothing and conflicts with nothing
    assert cli_main(["cache", "import", str(tmp_path / "b"), "--from", str(export)]) == 0
    assert "300 read, 0 added, 300 already present" in capsys.readouterr().out


def test_a_conflicting_answer_is_reported_and_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store_with(tmp_path / "mine", {key(1): answer("Score: 10", 10.0), key(2): answer("Score: 20", 20.0)}).close()
    # the other machine got the same answer for key 2 (timing differs), another for key 1, and a new key 3
    same_but_slower = msgspec.structs.replace(answer("Score: 20", 20.0), latency_s=9.0, attempts=3)
    store_with(
        tmp_path / "theirs", {key(1): answer("Score: 90", 90.0), key(2): same_but_slower, key(3): answer("Score: 30", 30.0)}
    ).close()

    assert cli_main(["cache", "import", str(tmp_path / "mine"), "--from", str(tmp_path / "theirs")]) == 1
    out = capsys.readouterr().out
    assert f"conflict {key(1).hex()}" in out and "kept ok score=10.0" in out and "incoming ok score=90.0" in out
    assert "3 read, 1 added, 1 already present with the same answer, 1 conflicts, 0 invalid" in out
    with Store(tmp_path / "mine", readonly=True) as mine:
        got = {k: msgspec.msgpack.decode(v, type=CallResult) for k, v in entries(mine).items()}
    assert got[key(1)].score == 10.0  # never silently overwritten
    assert got[key(2)].latency_s == 0.3  # the entry already there is kept
    assert got[key(3)].score == 30.0


def test_altered_truncated_and_uncacheable_records_are_refused_by_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = encode_result(answer("Score: 7", 7.0))
    lines = [
        msgspec.json.encode(CacheRecord(key=key(1).hex(), blake2b=content_hash(good), result=answer("Score: 7", 7.0))),
        # the score was edited after export: the hash no longer matches
        msgspec.json.encode(CacheRecord(key=key(2).hex(), blake2b=content_hash(good), result=answer("Score: 7", 99.0))),
        msgspec.json.encode(CacheRecord(key="abcd", blake2b=content_hash(good), result=answer("Score: 7", 7.0))),
        msgspec.json.encode(
            CacheRecord(key=key(4).hex(), blake2b="00", result=CallResult(status="error", text="HTTP 503", error_kind="server"))
        ),
        b'{"key": "' + key(5).hex().encode() + b'", "result": {"status": "ok"',  # truncated line
    ]
    export = tmp_path / "mixed.jsonl"
    export.write_bytes(b"\n".join(lines) + b"\n")

    assert cli_main(["cache", "import", str(tmp_path / "store"), "--from", str(export)]) == 1
    out = capsys.readouterr().out
    assert f"invalid {export}:2: content hash does not match" in out
    assert f"invalid {export}:3: key of 2 bytes, expected a 32-byte" in out
    assert f"invalid {export}:4: status 'error' is never cached" in out
    assert f"invalid {export}:5: not a cache record" in out
    assert "5 read, 1 added, 0 already present with the same answer, 0 conflicts, 4 invalid" in out
    with Store(tmp_path / "store", readonly=True) as store:
        assert list(entries(store)) == [key(1)]


def test_import_errors_name_the_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["cache", "import", str(tmp_path / "t"), "--from", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl: no such export file or store folder" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli_main(["cache", "import", str(tmp_path / "t"), "--from", str(tmp_path / "empty")]) == 2
    assert "empty: no needlejudge store here" in capsys.readouterr().err
    assert cli_main(["cache", "import", str(tmp_path / "t")]) == 2
    assert "name at least one --from SOURCE" in capsys.readouterr().err


def test_duplicate_keys_within_one_import_are_compared_not_both_written(tmp_path: Path) -> None:
    a = store_with(tmp_path / "a", {key(1): answer("Score: 1", 1.0)})
    a.close()
    b = store_with(tmp_path / "b", {key(1): answer("Score: 2", 2.0)})
    b.close()
    with Store(tmp_path / "t") as target:
        summary = import_sources(target, [tmp_path / "a", tmp_path / "b"])
        assert (summary.read, summary.added, len(summary.conflicts)) == (2, 1, 1)
        assert summary.conflicts[0].kept.score == 1.0 and summary.conflicts[0].incoming.score == 2.0


def _rows(path: Path) -> list[tuple]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted(tuple(row[c] for c in SCIENTIFIC) for row in rows)


def test_two_machines_judge_disjoint_parts_and_the_merged_store_reports_them_as_one(
    tmp_path: Path, prepared_store, corpus_slice_path: Path, corpus_settings
) -> None:  # type: ignore[no-untyped-def]
    jaccard = '[[judges]]\nname = "jaccard"\nadapter = "baseline"\nmodel = "jaccard"\n'
    seqratio = '[[judges]]\nname = "seqratio"\nadapter = "baseline"\nmodel = "seqratio"\n'
    machine_a = make_experiment(tmp_path / "a", prepared_store, corpus_slice_path, corpus_settings, judges=jaccard)
    machine_b = make_experiment(tmp_path / "b", prepared_store, corpus_slice_path, corpus_settings, judges=seqratio)
    both = make_experiment(tmp_path / "both", prepared_store, corpus_slice_path, corpus_settings, judges=jaccard + seqratio)
    reference = make_experiment(tmp_path / "ref", prepared_store, corpus_slice_path, corpus_settings, judges=jaccard + seqratio)

    run_a, run_b = run_experiment(machine_a), run_experiment(machine_b)
    assert run_a.rows and run_b.rows
    export_a = tmp_path / "a.jsonl"
    assert cli_main(["cache", "export", machine_a.store, "--out", str(export_a)]) == 0
    # one machine ships an export file, the other its whole store
    assert cli_main(["cache", "import", both.store, "--from", str(export_a), "--from", machine_b.store]) == 0

    with Store(both.store, readonly=True) as merged:
        before = len(entries(merged))
    merged_run = run_experiment(load_config(tmp_path / "both" / "exp.toml"))
    with Store(both.store, readonly=True) as merged:
        assert len(entries(merged)) == before  # every call was answered by the imported entries
    assert merged_run.rows == run_a.rows + run_b.rows

    # the merged experiment's data are exactly those of one machine running both judges
    reference_run = run_experiment(reference)
    assert _rows(Path(merged_run.results_jsonl)) == _rows(Path(reference_run.results_jsonl))
    assert _rows(Path(merged_run.results_jsonl)) == sorted(_rows(Path(run_a.results_jsonl)) + _rows(Path(run_b.results_jsonl)))
