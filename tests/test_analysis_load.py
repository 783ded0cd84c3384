from __future__ import annotations

import json

import msgspec
import numpy as np
import pytest

from analysis.load import load_labels, load_run, rows_to_table
from analysis.synthetic import reference_judges, synthetic_rows, write_run
from engine.contracts import ConfigError, ResultRow


def _row(**kw) -> ResultRow:
    base = dict(run_id="r", judge="j", adapter="fake", model="m", prompt_id="bands", prompt_version="v1",
                needle="neg", hay="orig", i=1, j=2, doc_id="d1", doc_index=0)  # fmt: skip
    base.update(kw)
    return ResultRow(**base)


def test_load_run_round_trips_rows_and_manifest(tmp_path):
    rows = [
        _row(score=70.0, raw_text="Score: 70"),
        _row(status="refused", score=None, raw_text="no", order="21"),
        _row(control="negative", score=3.0, needle="none"),
    ]
    write_run(tmp_path, rows, {"run_id": "r", "prompts": {"bands": {"id": "bands", "version": "v1"}}})
    run = load_run(tmp_path)
    assert len(run.rows) == 3 and run.manifest["run_id"] == "r" and run.notes == ()
    assert run.rows["k"].tolist() == [4, 4, 4]
    assert np.isnan(run.rows["score"][1]) and run.rows["output_chars"][0] == len("Score: 70")
    # main statistics: control "" and order "12" with an ok score only
    assert len(run.experimental()) == 1 and run.scored()["score"].tolist() == [70.0]


def test_missing_manifest_is_a_note_and_bad_lines_name_file_and_line(tmp_path):
    write_run(tmp_path, [_row(score=50.0)])
    assert "manifest.json missing" in load_run(tmp_path).notes[0]
    with (tmp_path / "results.jsonl").open("a") as handle:
        handle.write('{"judge": "x"}\n')
    with pytest.raises(ConfigError, match=r"results.jsonl line 2: not a result row"):
        load_run(tmp_path)
    (tmp_path / "results.jsonl").write_text("{not json\n")
    with pytest.raises(ConfigError, match=r"line 1: invalid JSON"):
        load_run(tmp_path)
    with pytest.raises(ConfigError, match="not a run folder"):
        load_run(tmp_path / "absent")


def test_table_grouping_and_selection():
    table = rows_to_table(synthetic_rows(reference_judges(), size=2, docs_per_cell=3, swapped_docs=1, controls=2))
    groups = dict(table.groups("judge", "control"))
    assert set(groups) == {(j, c) for j in ("faulty", "planted") for c in ("", "negative", "null_edit")}
    assert len(groups[("planted", "negative")]) == 2
    assert len(table.where(judge="planted", needle=("neg", "con"), order="12", control="")) == 2 * 2 * 4 * 3
    assert table.unique("hay") == ["orig", "rand"]


def test_labels_csv_and_jsonl(tmp_path):
    csv_path = tmp_path / "labels.csv"
    csv_path.write_text("doc_id,needle,hay,i,j,label\nd1,neg,orig,1,2,25\nd2,con,rand,0,0,100\n")
    labels = load_labels(csv_path)
    assert labels["label"].tolist() == [25.0, 100.0] and labels["replicate"].tolist() == [0, 0]
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text("\n".join(json.dumps(r) for r in [{"doc_id": "d1", "needle": "neg", "hay": "orig", "i": 1, "j": 2, "label": 50, "replicate": 1}]))
    assert load_labels(jsonl)["replicate"].tolist() == [1]
    bad = tmp_path / "bad.csv"
    bad.write_text("doc_id,needle,hay,i,j\nd1,neg,orig,1,2\n")
    with pytest.raises(ConfigError, match=r"bad.csv record 1: missing label"):
        load_labels(bad)
    bad.write_text("doc_id,needle,hay,i,j,label\nd1,neg,orig,1,2,150\n")
    with pytest.raises(ConfigError, match="outside the 0–100 scale"):
        load_labels(bad)


def test_a_folder_without_results_says_what_is_missing_and_which_command_makes_it(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_run(tmp_path)
    message = str(err.value)
    assert "no results.jsonl" in message and "needlejudge run" in message and "ResultRow" not in message


def test_parquet_and_jsonl_load_the_same_columns(tmp_path):
    from engine.run.results import jsonl_to_parquet

    rows = synthetic_rows(reference_judges(), size=2, docs_per_cell=3, swapped_docs=1, controls=2)
    rows[0] = msgspec.structs.replace(rows[0], cache_keys=("ab" * 32,), i=0, j=0)
    rows[1] = msgspec.structs.replace(rows[1], score=None, status="refused", raw_text="no thanks")
    write_run(tmp_path, rows)
    from_jsonl = load_run(tmp_path).rows
    jsonl_to_parquet(tmp_path / "results.jsonl", tmp_path / "results.parquet")
    from_parquet = load_run(tmp_path).rows
    assert from_parquet.columns.keys() == from_jsonl.columns.keys()
    for name, column in from_jsonl.columns.items():
        np.testing.assert_array_equal(from_parquet[name], column, err_msg=name)
    assert from_jsonl["request"][0] == int("ab" * 8, 16) and from_jsonl["output_chars"][1] == len("no thanks")


def test_table_memory_is_compact_codes_not_strings():
    table = rows_to_table(synthetic_rows(reference_judges(), size=4, docs_per_cell=10, swapped_docs=1, controls=2))
    # judge, needle, status... are one-byte codes, doc_id a small integer code, numbers compact
    assert table.nbytes() / len(table) < 64  # the old string columns held ~400 bytes a row
    assert table["judge"].dtype == object and set(table.unique("judge")) == {"faulty", "planted"}
    codes = table.key_codes("judge", "needle")
    assert len(np.unique(codes)) == 2 * 4 and codes.dtype == np.int64
